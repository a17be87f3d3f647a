package jsonpick_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/jsonpick"
	"github.com/anvilbench/anvil/capacity/internal/jsonpick/pickref"
)

// testSchema has every kind of member: leaves at the top, in nested
// objects, in an array's elements and in objects inside those.
var testSchema = jsonpick.Compile(
	jsonpick.Str("type"),
	jsonpick.Count("n"),
	jsonpick.Raw("error"),
	jsonpick.Obj("response",
		jsonpick.Str("status"),
		jsonpick.Obj("usage", jsonpick.Count("input_tokens"), jsonpick.Obj("details", jsonpick.Count("cached_tokens")))),
	jsonpick.Objs("choices",
		jsonpick.Str("text"),
		jsonpick.Count("index"),
		jsonpick.Raw("logprobs"),
		jsonpick.Obj("delta", jsonpick.Str("content"))),
)

// refPayload is testSchema as structs for encoding/json.
type refPayload struct {
	Type     json.RawMessage `json:"type"`
	N        json.RawMessage `json:"n"`
	Error    json.RawMessage `json:"error"`
	Response *struct {
		Status json.RawMessage `json:"status"`
		Usage  *struct {
			InputTokens json.RawMessage `json:"input_tokens"`
			Details     *struct {
				CachedTokens json.RawMessage `json:"cached_tokens"`
			} `json:"details"`
		} `json:"usage"`
	} `json:"response"`
	Choices []struct {
		Text     json.RawMessage `json:"text"`
		Index    json.RawMessage `json:"index"`
		Logprobs json.RawMessage `json:"logprobs"`
		Delta    *struct {
			Content json.RawMessage `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// raw is a Raw member read: its kind and text.
type raw struct {
	Kind  jsonpick.Kind
	Bytes string
}

// picked is what either decoding read, in comparable form.
type picked struct {
	Type                 jsonpick.Text
	N                    jsonpick.Int
	Error                raw
	Response, Usage, Det jsonpick.Kind
	Status               jsonpick.Text
	InputTokens, Cached  jsonpick.Int
	Choices              jsonpick.Kind
	Elems                []elem
}

type elem struct {
	Text, Content jsonpick.Text
	Index         jsonpick.Int
	Logprobs      raw
	Delta         jsonpick.Kind
}

var (
	sType     = testSchema.Slot("type")
	sN        = testSchema.Slot("n")
	sError    = testSchema.Slot("error")
	sResponse = testSchema.Slot("response")
	sStatus   = testSchema.Slot("response.status")
	sUsage    = testSchema.Slot("response.usage")
	sInput    = testSchema.Slot("response.usage.input_tokens")
	sDetails  = testSchema.Slot("response.usage.details")
	sCached   = testSchema.Slot("response.usage.details.cached_tokens")
	sChoices  = testSchema.Slot("choices")
	sText     = testSchema.Slot("choices.text")
	sIndex    = testSchema.Slot("choices.index")
	sLogprobs = testSchema.Slot("choices.logprobs")
	sDelta    = testSchema.Slot("choices.delta")
	sContent  = testSchema.Slot("choices.delta.content")
)

func rawOf(v *jsonpick.Value) raw { return raw{v.Kind, string(v.Bytes)} }

// fromDecoder reads the decoder's values.
func fromDecoder(d *jsonpick.Decoder) picked {
	p := picked{
		Type: d.Value(sType).Text(), N: d.Value(sN).Int, Error: rawOf(d.Value(sError)),
		Response: d.Value(sResponse).Kind, Status: d.Value(sStatus).Text(),
		Usage: d.Value(sUsage).Kind, InputTokens: d.Value(sInput).Int,
		Det: d.Value(sDetails).Kind, Cached: d.Value(sCached).Int,
		Choices: d.Value(sChoices).Kind,
	}
	for i := range d.Value(sChoices).Len {
		p.Elems = append(p.Elems, elem{Text: d.Elem(sText, i).Text(), Index: d.Elem(sIndex, i).Int,
			Logprobs: rawOf(d.Elem(sLogprobs, i)), Delta: d.Elem(sDelta, i).Kind, Content: d.Elem(sContent, i).Text()})
	}
	return p
}

func refRaw(r json.RawMessage) raw {
	k, b := pickref.Raw(r)
	return raw{k, string(b)}
}

// objKind is the kind the decoder gives an object or array member.
func objKind(present bool, k jsonpick.Kind) jsonpick.Kind {
	if present {
		return k
	}
	return jsonpick.Absent
}

// reference decodes data with encoding/json.
func reference(data []byte) (picked, error) {
	var r refPayload
	if err := pickref.Decode(data, &r); err != nil {
		return picked{}, err
	}
	p := picked{Type: pickref.Text(r.Type), N: pickref.Int(r.N), Error: refRaw(r.Error),
		Choices: objKind(r.Choices != nil, jsonpick.Array)}
	if rs := r.Response; rs != nil {
		p.Response, p.Status = jsonpick.Object, pickref.Text(rs.Status)
		if u := rs.Usage; u != nil {
			p.Usage, p.InputTokens = jsonpick.Object, pickref.Int(u.InputTokens)
			if dt := u.Details; dt != nil {
				p.Det, p.Cached = jsonpick.Object, pickref.Int(dt.CachedTokens)
			}
		}
	}
	for _, c := range r.Choices {
		e := elem{Text: pickref.Text(c.Text), Index: pickref.Int(c.Index), Logprobs: refRaw(c.Logprobs)}
		if c.Delta != nil {
			e.Delta, e.Content = jsonpick.Object, pickref.Text(c.Delta.Content)
		}
		p.Elems = append(p.Elems, e)
	}
	return p, nil
}

func check(t *testing.T, d *jsonpick.Decoder, data []byte) {
	t.Helper()
	want, wantErr := reference(data)
	err := d.Decode(data)
	got := fromDecoder(d)
	pickref.Differential(t, fmt.Sprintf("%q", data), got, err, want, wantErr)
	if err != nil {
		require.Zero(t, got, "values left after an error")
	}
}

// primer is decoded between two decodings of a fuzz input, so that state
// left by one payload cannot leak into the next.
const primer = `{"type":"a\nb","n":"7","error":{"m":[1]},"response":{"status":"s\t","usage":{"input_tokens":3,"details":{"cached_tokens":2}}},` +
	`"choices":[{"text":"x\"","index":0,"logprobs":[],"delta":{"content":"y\\"}},null,{"text":"z"}]}`

var cases = []string{
	`{}`,
	` {"type":"response.output_text.delta","delta":" the","item_id":"msg_1"} `,
	primer,
	`{"choices":[]}`,
	`{"choices":null,"response":null,"error":null}`,
	`{"choices":[null,null]}`,
	`{"type":null,"n":null}`,
	`{"type":1,"n":1.5,"error":"boom"}`,
	`{"n":"1e3"}`,
	`{"n":99999999999999999999}`,
	`{"n":-0}`,
	`{"type":"\ud800x"}`,
	"{\"type\":\"\xff\"}",
	`{"Type":"folded"}`,
	`{"TYPE":"a","type":"b"}`,
	`{"OtherName":"not read"}`,
	`{"type":"a","type":"b"}`,
	`{"response":{"usage":{"input_tokens":1}},"response":{"status":"merged"}}`,
	`{"choices":[{"text":"a"}],"choices":[null]}`,
	`{"response":"not an object"}`,
	`{"choices":{}}`,
	`{"choices":[1]}`,
	`{"t\u0079pe":"escaped name"}`,
	`{"x":` + strings.Repeat(`[`, jsonpick.MaxFastDepth+1) + strings.Repeat(`]`, jsonpick.MaxFastDepth+1) + `,"type":"deep"}`,
	`{"type":"a"} x`,
	`{"type":"a"`,
	`{"type":}`,
	`[]`,
	``,
	`null`,
	`{"a":{"b":[1,{"c":null}]},"type":"after skipped"}`,
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	d := jsonpick.NewDecoder(testSchema)
	for _, c := range cases {
		check(t, d, []byte(c))
	}
}

// TestFastPath checks that ordinary payloads are decoded without
// encoding/json.
func TestFastPath(t *testing.T) {
	d := jsonpick.NewDecoder(testSchema)
	for _, c := range []string{cases[1], primer, `{"choices":[null]}`, `{"OtherName":1}`} {
		require.NoError(t, d.Decode([]byte(c)))
	}
	require.Zero(t, d.Fallbacks())
	require.NoError(t, d.Decode([]byte(`{"Type":"x"}`)))
	require.Equal(t, 1, d.Fallbacks())
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := jsonpick.NewDecoder(testSchema)
		check(t, d, data)
		require.NoError(t, d.Decode([]byte(primer)))
		check(t, d, data)
	})
}

func TestCompileRefuses(t *testing.T) {
	for name, f := range map[string]func(){
		"upper-case name": func() { jsonpick.Compile(jsonpick.Str("Type")) },
		"empty name":      func() { jsonpick.Compile(jsonpick.Str("")) },
		"escape":          func() { jsonpick.Compile(jsonpick.Str(`a\b`)) },
		"twice":           func() { jsonpick.Compile(jsonpick.Str("a"), jsonpick.Count("a")) },
		"nested array":    func() { jsonpick.Compile(jsonpick.Objs("a", jsonpick.Objs("b"))) },
		"long name":       func() { jsonpick.Compile(jsonpick.Str(strings.Repeat("a", 64))) },
	} {
		require.Panics(t, f, name)
	}
	require.Panics(t, func() { testSchema.Slot("nope") })
	d := jsonpick.NewDecoder(testSchema)
	require.Panics(t, func() { d.Value(sText) })
	require.Panics(t, func() { d.Elem(sType, 0) })
}

// TestAllocations checks that decoding allocates nothing once the
// decoder's storage has grown.
func TestAllocations(t *testing.T) {
	d := jsonpick.NewDecoder(testSchema)
	data := []byte(primer)
	require.NoError(t, d.Decode(data))
	if n := testing.AllocsPerRun(100, func() { _ = d.Decode(data) }); n != 0 {
		t.Fatalf("%v allocations per decode", n)
	}
}
