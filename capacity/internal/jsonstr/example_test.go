package jsonstr_test

import (
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/jsonstr"
)

// The two escapings differ only on invalid UTF-8 (shown here) and on
// U+2028/U+2029, which Go escapes and Python writes as they are.
func ExampleAppend() {
	s := "tab\there <&> bad\xff"
	fmt.Println(string(jsonstr.Append(nil, s, jsonstr.Go)))
	fmt.Println(string(jsonstr.Append(nil, s, jsonstr.Python)))
	// Output:
	// "tab\there <&> bad\ufffd"
	// "tab\there <&> bad�"
}
