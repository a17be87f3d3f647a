package capacity

import "encoding/json"

// shape remembers the key set a JSON object was read with. Its zero value
// means the full current shape (every appendix-A key), which is what a
// Report built in Go writes.
type shape struct {
	// keys is nil for the current shape, else exactly the keys the object
	// had when read (known and unknown).
	keys map[string]bool
	// extra holds the values of keys this version does not know, verbatim.
	extra map[string]json.RawMessage
}

// has reports whether the object has key: always in the current shape,
// else when the document it was read from had it.
func (s *shape) has(key string) bool { return s.keys == nil || s.keys[key] }
