package fakeserver

import (
	"encoding/json"
	"sort"
	"strconv"
)

// jsonObj appends a JSON object member by member, in the order written,
// so that a dialect's key order is kept byte for byte. Strings are
// escaped as the dialect escapes them (renderer.str).
type jsonObj struct {
	r *renderer
	b []byte
	n int
	// sorted: the members are sorted by key when the object is done, as
	// encoding/json writes a map; starts holds where each begins in b.
	sorted bool
	starts []int
	keys   []string
}

// object renders the object f writes.
func (r *renderer) object(f func(o *jsonObj)) []byte {
	o := jsonObj{r: r, b: make([]byte, 0, 256)}
	o.b = append(o.b, '{')
	f(&o)
	return append(o.b, '}')
}

// sortedObject renders the object f writes with its members in the
// order of their keys (nested objects as f writes them).
func (r *renderer) sortedObject(f func(o *jsonObj)) []byte {
	o := jsonObj{r: r, sorted: true}
	f(&o)
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return o.keys[idx[a]] < o.keys[idx[b]] })
	out := make([]byte, 0, len(o.b)+len(o.keys)+2)
	out = append(out, '{')
	for n, i := range idx {
		if n > 0 {
			out = append(out, ',')
		}
		end := len(o.b)
		if i+1 < len(o.starts) {
			end = o.starts[i+1]
		}
		out = append(out, o.b[o.starts[i]:end]...)
	}
	return append(out, '}')
}

func (o *jsonObj) key(k string) {
	if o.sorted {
		o.starts = append(o.starts, len(o.b))
		o.keys = append(o.keys, k)
	} else if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// str writes the member k, the string v.
func (o *jsonObj) str(k, v string) {
	o.key(k)
	o.b = o.r.str(o.b, v)
}

// num writes the member k, the integer v.
func (o *jsonObj) num(k string, v int) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}

// float writes the member k, the number v as encoding/json writes it.
func (o *jsonObj) float(k string, v float64) {
	o.key(k)
	m, _ := json.Marshal(v) // a finite float always marshals
	o.b = append(o.b, m...)
}

// optNum writes the member k, the integer v, or null when v is nil.
func (o *jsonObj) optNum(k string, v *int) {
	if v == nil {
		o.raw(k, "null")
		return
	}
	o.num(k, *v)
}

// raw writes the member k, the JSON text v.
func (o *jsonObj) raw(k, v string) {
	o.key(k)
	o.b = append(o.b, v...)
}

// obj writes the member k, the object f writes.
func (o *jsonObj) obj(k string, f func(o *jsonObj)) {
	o.key(k)
	o.b = append(o.b, o.r.object(f)...)
}

// objs writes the member k, an array of the objects fs write.
func (o *jsonObj) objs(k string, fs ...func(o *jsonObj)) {
	o.key(k)
	o.b = append(o.b, '[')
	for i, f := range fs {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = append(o.b, o.r.object(f)...)
	}
	o.b = append(o.b, ']')
}
