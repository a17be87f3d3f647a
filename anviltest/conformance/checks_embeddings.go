package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// The embeddings API answers whole (capacity/PROTOCOL.md#api-embeddings):
// the checks of a stream's framing, content and usage become those of
// the answer's framing, its vectors and its usage, and the checks of what
// embeddings do not have (a token limit, a stop reason, reasoning, cached
// tokens, a text to carry a canary) SKIP saying so.

// embeddingsInputs are the inputs of the embeddings checks' base request,
// a batch of two.
func (p *prober) embeddingsInputs() []string {
	return []string{p.baseQuestion, "In one short sentence: why is the sky blue? (conformance run " + p.nonce + ")"}
}

// embeddingSeen is one item of an embeddings answer's data.
type embeddingSeen struct {
	object string
	index  *int
	values []float64 // nil when the embedding is not a list of numbers (or base64 of float32 values)
	bad    string    // why values is nil
}

// answer sends one embeddings request and reads its whole answer, at
// most maxAnswer bytes (an error's first maxBodyExcerpt): the usage, the
// error member, the items.
func (p *prober) answer(ctx context.Context, body []byte, hdr http.Header) (*streamSeen, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	u := p.base + p.w.path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	p.setHeaders(req, hdr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	start := time.Now()
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, p.requestError(http.MethodPost, u, err, p.timeout)
	}
	defer resp.Body.Close()
	s := &streamSeen{whole: true, scrub: p.scrub, status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
		contentEncoding: resp.Header.Get("Content-Encoding")}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	s.elapsed = time.Since(start)
	if err != nil {
		s.readErr = p.requestError(http.MethodPost, u, err, p.timeout)
		return s, nil
	}
	if resp.StatusCode != http.StatusOK {
		s.body = b[:min(len(b), maxBodyExcerpt)]
		return s, nil
	}
	if len(b) > maxAnswer {
		s.readErr = fmt.Errorf("an answer larger than %d bytes: more than any request of the suite asks for", maxAnswer)
		return s, nil
	}
	s.readEmbeddings(b)
	return s, nil
}

// maxAnswer bounds the bytes of an embeddings answer the checks read:
// two vectors of 16,384 values in JSON fit many times.
const maxAnswer = 16 << 20

// readEmbeddings reads an embeddings answer's body into s: its object,
// items and usage (prompt_tokens, total_tokens), an error member.
func (s *streamSeen) readEmbeddings(b []byte) {
	s.events = 1
	var a struct {
		Object *string `json:"object"`
		Data   []struct {
			Object    string          `json:"object"`
			Index     json.RawMessage `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage json.RawMessage `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		s.badJSON = append(s.badJSON, excerpt(s.scrub, b))
		return
	}
	s.done = true
	if a.Object != nil {
		s.objects = append(s.objects, *a.Object)
	}
	if len(a.Error) > 0 && string(a.Error) != "null" {
		s.errObjects = append(s.errObjects, excerpt(s.scrub, a.Error))
	}
	s.usage = parseUsage(a.Usage)
	for _, d := range a.Data {
		e := embeddingSeen{object: d.Object, index: jsonInt(d.Index)}
		e.values, e.bad = vectorOf(d.Embedding)
		s.vectors = append(s.vectors, e)
	}
	if a.Data == nil {
		s.badJSON = append(s.badJSON, `no "data" array: `+excerpt(s.scrub, b))
	}
}

// vectorOf reads an embedding: a JSON array of finite numbers, or the
// standard base64 of little-endian float32 values; why says what else it
// is.
func vectorOf(raw json.RawMessage) (values []float64, why string) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil || len(b)%4 != 0 {
			return nil, "a string that is not base64 of float32 values"
		}
		values = make([]float64, len(b)/4)
		for i := range values {
			values[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	} else {
		var list []*float64
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, "not a list of numbers: " + excerpt(nil, raw)
		}
		values = make([]float64, len(list))
		for i, v := range list {
			if v == nil {
				return nil, fmt.Sprintf("value %d is null (a NaN or an infinity the server could not write)", i)
			}
			values[i] = *v
		}
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Sprintf("value %d is %v", i, v)
		}
	}
	if len(values) == 0 {
		return nil, "an empty vector"
	}
	return values, ""
}

// exchange sends a request of the API and reads its answer, a stream or
// a whole body.
func (p *prober) exchange(ctx context.Context, body []byte, hdr http.Header) (*streamSeen, error) {
	if p.w.streams() {
		return p.stream(ctx, body, hdr)
	}
	return p.answer(ctx, body, hdr)
}

// checkAnswerFraming is stream_framing of an API that answers whole: an
// application/json list of embedding objects, each with its index, no
// error member.
func (p *prober) checkAnswerFraming(ctx context.Context) Verdict {
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	var problems []string
	if mt := mediaType(s.contentType); mt != "application/json" {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want application/json", s.contentType))
	}
	if n := len(s.badJSON); n > 0 {
		problems = append(problems, "the answer is not an embeddings list: "+s.badJSON[0])
	}
	if n := len(s.errObjects); n > 0 {
		problems = append(problems, "an error member: "+s.errObjects[0])
	}
	if s.readErr != nil {
		problems = append(problems, "the answer ended abnormally: "+s.readErr.Error())
	}
	if len(s.badJSON) == 0 && (len(s.objects) == 0 || s.objects[0] != "list") {
		problems = append(problems, fmt.Sprintf(`"object" is %q, want "list"`, s.objects))
	}
	for i, v := range s.vectors {
		if v.object != "embedding" {
			problems = append(problems, fmt.Sprintf(`data[%d].object is %q, want "embedding"`, i, v.object))
			break
		}
		if v.index == nil || *v.index != i {
			problems = append(problems, fmt.Sprintf(`data[%d].index is %s, want %d`, i, fmtInt(v.index), i))
			break
		}
	}
	notes := []string{s.embeddingsSummary()}
	if len(problems) > 0 {
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	}
	return verdict(Pass, fmt.Sprintf(`application/json, an "object": "list" of %d embedding objects, each with its index`, len(s.vectors)), notes...)
}

// embeddingsSummary is one note on what an embeddings answer showed.
func (s *streamSeen) embeddingsSummary() string {
	dims := make([]int, len(s.vectors))
	for i, v := range s.vectors {
		dims[i] = len(v.values)
	}
	usage := "no usage"
	if s.usage != nil {
		usage = "usage " + excerpt(s.scrub, []byte(s.usage.raw))
	}
	return fmt.Sprintf("HTTP %d, Content-Type %q, %d vectors of %v values, %s, %d ms",
		s.status, s.contentType, len(s.vectors), dims, usage, s.elapsed.Milliseconds())
}

// vectorProblems says how the vectors of s fall short of one finite
// vector per input, all of one length ("" when they do not), and returns
// that length.
func vectorProblems(s *streamSeen, inputs int) (dim int, why string) {
	if len(s.vectors) != inputs {
		return 0, fmt.Sprintf("%d vectors for %d inputs", len(s.vectors), inputs)
	}
	for i, v := range s.vectors {
		switch {
		case v.values == nil:
			return 0, fmt.Sprintf("vector %d: %s", i, v.bad)
		case i == 0:
			dim = len(v.values)
		case len(v.values) != dim:
			return 0, fmt.Sprintf("vector %d has %d values, vector 0 %d", i, len(v.values), dim)
		}
	}
	return dim, ""
}

// checkVectors is content for embeddings: one vector per input, all of
// one length, every value a finite number; asked for base64 (the
// encoding_format OpenAI's Python client sends by default), the same
// values as float32.
func (p *prober) checkVectors(ctx context.Context) Verdict {
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	inputs := p.embeddingsInputs()
	notes := []string{"float: " + s.embeddingsSummary()}
	dim, why := vectorProblems(s, len(inputs))
	if why != "" {
		return verdict(Fail, why, notes...)
	}
	b64, err := p.answer(ctx, p.body("", 0, map[string]any{"input": inputs, "encoding_format": "base64"}), nil)
	if err != nil {
		return verdict(Fail, "base64: the request failed: "+err.Error(), notes...)
	}
	notes = append(notes, "base64: "+b64.embeddingsSummary())
	if why := b64.failed(); why != "" {
		return verdict(Fail, `"encoding_format": "base64" (the OpenAI Python client's default) is refused: `+why, notes...)
	}
	if _, why := vectorProblems(b64, len(inputs)); why != "" {
		return verdict(Fail, "base64: "+why, notes...)
	}
	minCos, exact := 1.0, true
	for i := range inputs {
		f, g := s.vectors[i].values, b64.vectors[i].values
		if len(f) != len(g) {
			return verdict(Fail, fmt.Sprintf("vector %d: %d values as float, %d as base64", i, len(f), len(g)), notes...)
		}
		var dot, ff, gg float64
		for k := range f {
			if d := math.Abs(float64(float32(f[k])) - g[k]); d > 1e-6*max(1, math.Abs(g[k])) {
				exact = false
			}
			dot, ff, gg = dot+f[k]*g[k], ff+f[k]*f[k], gg+g[k]*g[k]
		}
		minCos = min(minCos, dot/math.Sqrt(ff*gg))
	}
	switch {
	case exact:
		return verdict(Pass, fmt.Sprintf("%d vectors of %d finite values for %d inputs; base64 gives the same values", len(inputs), dim, len(inputs)), notes...)
	case minCos >= sameEmbeddingCosine:
		return verdict(Pass, fmt.Sprintf("%d vectors of %d finite values for %d inputs; base64 gives the same embeddings within cosine %.6f (the values move a little between requests)",
			len(inputs), dim, len(inputs), minCos), notes...)
	}
	return verdict(Fail, fmt.Sprintf("the float and base64 answers for the same inputs are other embeddings: cosine %.4f, below %g", minCos, sameEmbeddingCosine), notes...)
}

// sameEmbeddingCosine is the least cosine similarity at which two
// answers for one input are the same embedding: a batch's numerics move
// a real engine's values by far less (cosines above 0.9999), while
// another input's or a wrongly decoded vector is nowhere near it.
const sameEmbeddingCosine = 0.999

// checkEmbeddingsUsage is usage for embeddings: prompt_tokens a positive
// integer, total_tokens equal to it (an embedding generates nothing).
func (p *prober) checkEmbeddingsUsage(ctx context.Context) Verdict {
	s, bad := p.judgedBase(ctx)
	if bad != nil {
		return *bad
	}
	notes := []string{s.embeddingsSummary()}
	u := s.usage
	var problems []string
	switch {
	case u == nil:
		return verdict(Fail, "no usage object", notes...)
	case u.prompt == nil:
		problems = append(problems, "prompt_tokens is not an integer")
	case *u.prompt < 1:
		problems = append(problems, fmt.Sprintf("prompt_tokens %d for %d non-empty inputs", *u.prompt, len(p.embeddingsInputs())))
	}
	switch {
	case u.total == nil:
		problems = append(problems, "total_tokens is not an integer")
	case u.prompt != nil && *u.total != *u.prompt:
		problems = append(problems, fmt.Sprintf("total_tokens %d != prompt_tokens %d: an embedding generates no token", *u.total, *u.prompt))
	}
	if len(problems) > 0 {
		return verdict(Fail, strings.Join(problems, "; "), notes...)
	}
	return verdict(Pass, fmt.Sprintf("prompt_tokens %d = total_tokens for %d inputs", *u.prompt, len(p.embeddingsInputs())), notes...)
}

// checkEmbeddingsDeterminism is determinism for embeddings: the same
// input twice gives the same vector.
func (p *prober) checkEmbeddingsDeterminism(ctx context.Context) Verdict {
	body := p.body("Name three colours of the rainbow. (conformance run "+p.nonce+")", 0, nil)
	var out [2][]float64
	var notes []string
	for i := range out {
		s, err := p.answer(ctx, body, nil)
		if err != nil {
			return verdict(Fail, "the request failed: "+err.Error(), notes...)
		}
		if why := s.failed(); why != "" {
			return verdict(Fail, why, notes...)
		}
		notes = append(notes, fmt.Sprintf("request %d: %s", i+1, s.embeddingsSummary()))
		if _, why := vectorProblems(s, 1); why != "" {
			return verdict(Skip, "no vector to compare: "+why, notes...)
		}
		out[i] = s.vectors[0].values
	}
	for k := range out[0] {
		if k >= len(out[1]) || out[0][k] != out[1][k] {
			return verdict(Skip, fmt.Sprintf("the same input twice gave different vectors (first difference at value %d)", k), notes...)
		}
	}
	return verdict(Pass, fmt.Sprintf("the same input twice gave the same %d values", len(out[0])), notes...)
}
