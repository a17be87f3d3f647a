package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceDuplicate reports whether the valid JSON document data has a
// key twice in one object, read with encoding/json's token stream: the
// differential reference of duplicateKey.
func referenceDuplicate(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token of this object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the parent object expects a key next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

// FuzzDuplicateKey: on every valid JSON document, duplicateKey finds a
// repeated key exactly when encoding/json's token stream shows one.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"a":[{"x":1,"y":{"x":2}}],"b":"a"}`,
		`{"\u0061":1,"a":2}`, `{"a":"\"a\"","b":{"a":{}}}`, `[1,"a",{"k":[{"k":1}],"k2":null}]`, `"x"`, `{"":1,"":2}`, "{\"\xff\":1,\"\xfe\":2}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		err := duplicateKey(data)
		want := referenceDuplicate(data)
		require.Equal(t, want, err != nil, "%q: %v", data, err)
		if err != nil {
			var fe *pathError
			require.ErrorAs(t, err, &fe)
		}
	})
}
