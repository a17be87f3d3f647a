package embeddings

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// refBody is the schema as structs for encoding/json.
type refBody struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
		Index     json.RawMessage `json:"index"`
	} `json:"data"`
	Usage *struct {
		PromptTokens json.RawMessage `json:"prompt_tokens"`
		TotalTokens  json.RawMessage `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// outcome is a check's result in comparable form: the result, or the
// error's type and reason.
type outcome struct {
	Result Result
	Err    string // "", "invalid", "server" or "json"
	Reason Reason
	Vector int
	JSON   error // a jsonpick error, compared with pickref.SameError
}

func outcomeOf(r Result, err error) outcome {
	var inv *InvalidError
	var srv *ServerError
	switch {
	case err == nil:
		return outcome{Result: r}
	case errors.As(err, &inv):
		return outcome{Err: "invalid", Reason: inv.Reason, Vector: inv.Vector}
	case errors.As(err, &srv):
		return outcome{Err: "server"}
	}
	return outcome{Err: "json", JSON: err}
}

// reference checks a body with encoding/json, independently of the
// scanner.
func reference(body []byte, w Want) outcome {
	var r refBody
	if err := pickref.Decode(body, &r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			rest := string(bytes.TrimSpace(body)[se.Offset-1:])
			for _, tok := range []string{"NaN", "Infinity", "nan", "inf"} {
				if len(rest) >= len(tok) && rest[:len(tok)] == tok {
					return outcome{Err: "invalid", Reason: NotFinite, Vector: -1}
				}
			}
		}
		return outcome{Err: "json", JSON: err}
	}
	if _, raw := pickref.Raw(r.Error); raw != nil {
		return outcome{Err: "server"}
	}
	res := Result{Vectors: len(r.Data), Format: w.Format, Dimension: w.Dimension}
	if r.Usage != nil {
		res.Usage = Usage{Present: true, Prompt: pickref.Int(r.Usage.PromptTokens), Total: pickref.Int(r.Usage.TotalTokens)}
	}
	if w.Inputs > 0 && len(r.Data) != w.Inputs {
		return outcome{Err: "invalid", Reason: Count, Vector: -1}
	}
	seen := map[int64]bool{}
	for i, d := range r.Data {
		bad := func(reason Reason) outcome { return outcome{Err: "invalid", Reason: reason, Vector: i} }
		n := 0
		switch pickref.Kind(d.Embedding) {
		case jsonpick.Array:
			var vals []json.RawMessage
			if err := json.Unmarshal(d.Embedding, &vals); err != nil {
				panic(err)
			}
			if len(vals) == 0 {
				return bad(Empty)
			}
			for _, v := range vals {
				switch pickref.Kind(v) {
				case jsonpick.Null:
					return bad(NotFinite)
				case jsonpick.Number:
					var f float64
					if json.Unmarshal(v, &f) != nil {
						return bad(NotFinite)
					}
				default:
					return bad(NotNumber)
				}
			}
			n, res.Format = len(vals), Float
		case jsonpick.String:
			var s string
			if err := json.Unmarshal(d.Embedding, &s); err != nil {
				panic(err)
			}
			if s == "" {
				return bad(Empty)
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil || len(b)%4 != 0 {
				return bad(BadBase64)
			}
			for j := 0; j < len(b); j += 4 {
				f := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[j:])))
				if math.IsNaN(f) || math.IsInf(f, 0) {
					return bad(NotFinite)
				}
			}
			n, res.Format = len(b)/4, Base64
		case jsonpick.Null, jsonpick.Absent:
			return bad(Empty)
		default:
			return bad(NotNumber)
		}
		if res.Dimension == 0 {
			res.Dimension = n
		} else if n != res.Dimension {
			return bad(Dimension)
		}
		if len(d.Index) > 0 {
			x := pickref.Int(d.Index)
			v, ok := x.Int64()
			if !ok || v < 0 || v >= int64(len(r.Data)) || seen[v] {
				return bad(Index)
			}
			seen[v] = true
		}
	}
	return outcome{Result: res}
}

// sameOutcome compares a check with the reference's.
func sameOutcome(got, want outcome) bool {
	if got.Err == "json" || want.Err == "json" {
		return got.Err == want.Err && pickref.SameError(got.JSON, want.JSON)
	}
	return got.Err == want.Err && got.Reason == want.Reason && got.Vector == want.Vector &&
		resultEqual(got.Result, want.Result)
}

func resultEqual(a, b Result) bool {
	return a.Vectors == b.Vectors && a.Dimension == b.Dimension && a.Format == b.Format && a.Usage == b.Usage
}
