package reporters

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// extraBodyOf is the workload identity's part for anvil_go.run.extra_body:
// the fields as one compact JSON object in key order
// ({"cache_prompt":false,"n_keep":4}), the values as the artifact records
// them; "" when the run merged none into its request bodies.
func extraBodyOf(r *artifact.Report) string {
	if r.AnvilGo == nil || r.AnvilGo.Run == nil || len(r.AnvilGo.Run.ExtraBody) == 0 {
		return ""
	}
	body := r.AnvilGo.Run.ExtraBody
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(body)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k) // a string always encodes
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(body[k])
	}
	b.WriteByte('}')
	return b.String()
}

// extraBodyKey is the artifact path of the extra body fields, an identity
// key of comparisons when either run records it.
const extraBodyKey = "anvil_go.run.extra_body"

// stringObject checks a JSON object of strings.
func stringObject(v any) string {
	m, ok := v.(map[string]any)
	for _, e := range m {
		if _, isString := e.(string); !isString {
			ok = false
		}
	}
	if !ok {
		return "want an object of strings"
	}
	return ""
}
