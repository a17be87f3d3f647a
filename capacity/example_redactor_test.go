package capacity_test

import (
	"fmt"
	"net/http"

	"github.com/anvilbench/anvil/capacity"
)

// A tool that prints what the target answered passes it through the
// target's redactor first: the API key, every header value and the base
// URL's password go, raw, JSON-escaped, percent-encoded, base64 or in
// another letter case.
func ExampleTarget_Redactor() {
	t := capacity.Target{
		BaseURL: "http://bench:s3cret-pw@gpu-box:8000/v1",
		Headers: http.Header{"X-Session": {"sess-42"}},
	}
	redact := t.Redactor("sk-live-key")
	fmt.Println(redact(`{"error":{"message":"bad key sk\u002dlive\u002dkey for sess-42 (password s3cret-pw)"}}`))
	fmt.Println(redact("302 Location: /login/SK-LIVE-KEY?session=sess%2D42"))
	fmt.Println(redact("Basic YmVuY2g6czNjcmV0LXB3 (bench:s3cret-pw)"))
	// Output:
	// {"error":{"message":"bad key [redacted] for [redacted] (password [redacted])"}}
	// 302 Location: /login/[redacted]?session=[redacted]
	// Basic [redacted] ([redacted])
}
