package artifact

import "encoding/json"

// maxTableFields bounds the known keys of one object type (the metrics
// object has the most: 159).
const maxTableFields = 3 * 64

// shape remembers the key set a JSON object was read with. Its zero value
// means the full current shape (every appendix-A key), which is what a
// Report built in Go writes.
type shape struct {
	// index is nil for the current shape; for an object read from JSON it
	// is its type's key -> field index table, and present holds one bit
	// per field index: whether the document had that key.
	index   map[string]int
	present [maxTableFields / 64]uint64
	// extra holds the keys this version does not know, with their values
	// verbatim (compacted). They are always written.
	extra map[string]json.RawMessage
}

// has reports whether the object has key: always in the current shape,
// else when the document it was read from had it.
func (s *shape) has(key string) bool {
	if s.index == nil {
		return true
	}
	if i, ok := s.index[key]; ok {
		return s.hasField(i)
	}
	_, ok := s.extra[key]
	return ok
}

// hasField reports whether the object has the known field i.
func (s *shape) hasField(i int) bool {
	return s.index == nil || s.present[i/64]&(1<<(i%64)) != 0
}

// Has reports whether the report has the top-level artifact key (such as
// "performance_eligible"): always for a report built in Go, which has the
// full current shape; for one read from JSON, whether its document had the
// key. It tells a legacy artifact's missing value from a zero one.
func (r *Report) Has(key string) bool { return r.shape.has(key) }

// Has reports whether the metrics object has key (such as "ttft_p50_ms"),
// as Report.Has does for the top level.
func (m *Metrics) Has(key string) bool { return m.shape.has(key) }

// without returns the current shape of t's type less the known keys: an
// object built in Go that writes every key but those.
func (t *artTable[T]) without(keys ...string) shape {
	sh := shape{index: t.index}
	for i := range t.fields {
		sh.present[i/64] |= 1 << (i % 64)
	}
	for _, k := range keys {
		i := t.index[k]
		sh.present[i/64] &^= 1 << (i % 64)
	}
	return sh
}
