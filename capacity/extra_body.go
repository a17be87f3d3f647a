package capacity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// maxExtraBodyValue bounds the bytes of one Target.ExtraBody value the
// artifact records as is (anvil_go.run.extra_body); a longer one (a
// grammar, a JSON schema) is recorded by its SHA-256 and length, which
// identify it as well.
const maxExtraBodyValue = 1024

// extraBodyRecord is anvil_go.run.extra_body (capacity/PROTOCOL.md#run):
// each Target.ExtraBody key with its value as compact JSON (as sent,
// without HTML escaping), scrubbed of the run's credentials; nil when the
// target has none. Runs whose request bodies differ in these fields are
// not the same workload: the benchfmt workload identity and the merge of
// shards compare them.
func extraBodyRecord(extra map[string]any, scrub func(string) string) (map[string]string, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	rec := make(map[string]string, len(extra))
	for k, v := range extra {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("%w: Target.ExtraBody[%q] does not encode as JSON: %w", ErrInvalidConfig, k, err)
		}
		text := scrub(string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
		if len(text) > maxExtraBodyValue {
			sum := sha256.Sum256([]byte(text))
			text = fmt.Sprintf("%s%s (%d bytes)", fingerprintPrefix, hex.EncodeToString(sum[:]), len(text))
		}
		rec[scrub(k)] = text
	}
	return rec, nil
}
