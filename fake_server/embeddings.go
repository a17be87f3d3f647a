package fakeserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// embeddingsPath is the route of the embeddings API.
const embeddingsPath = "/v1/embeddings"

// defaultEmbeddingDimension is Config.EmbeddingDimension's default, the
// length of the captured engines' vectors of their tiny test model;
// maxEmbeddingDimension its bound.
const (
	defaultEmbeddingDimension = 64
	maxEmbeddingDimension     = 1 << 16
)

// embeddingsAPI writes the errors of /v1/embeddings.
type embeddingsAPI struct{}

func (embeddingsAPI) name() string { return "embeddings" }

func (embeddingsAPI) errorBody(d *Dialect, e *apiError) []byte {
	if d.Layout == layoutLlamaCpp {
		return llamaCppError(e)
	}
	return openAIError(e)
}

// embeddingsRequest is the part of an embeddings request the fake reads.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// embeddingInput is one input of a request: its text (a string input) and
// its tokens, counted as a completions prompt and POST /tokenize
// {"prompt"} count bare text (no special token: the fake has none).
type embeddingInput struct {
	text   string
	tokens int
}

// inputs reads input: a string, an array of strings, an array of token
// ids, or an array of those.
func (s *Server) inputs(raw json.RawMessage) ([]embeddingInput, *apiError) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embeddingInput{{text: one, tokens: s.cfg.countTokens(one)}}, nil
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil && len(strs) > 0 {
		out := make([]embeddingInput, len(strs))
		for i, t := range strs {
			out[i] = embeddingInput{text: t, tokens: s.cfg.countTokens(t)}
		}
		return out, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return []embeddingInput{{text: fmt.Sprint(ids), tokens: len(ids)}}, nil
	}
	var batch [][]int
	if json.Unmarshal(raw, &batch) == nil && len(batch) > 0 {
		out := make([]embeddingInput, len(batch))
		for i, b := range batch {
			out[i] = embeddingInput{text: fmt.Sprint(b), tokens: len(b)}
		}
		return out, nil
	}
	return nil, invalid("input", "input: want a string, a non-empty array of strings, or token ids")
}

// serveEmbeddings answers POST /v1/embeddings: the inputs are prefilled by
// the engine like any prompt (queueing, batching and the prefix cache
// included) and the answer written when the prefill ends.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	var a errorAPI = embeddingsAPI{}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.writeAPIError(w, a, &apiError{status: http.StatusServiceUnavailable, message: "server closed", typ: "server_error"})
		return
	}
	s.active.Add(1)
	s.mu.Unlock()
	defer s.active.Done()

	st := &reqState{errs: a, arrived: time.Now()}
	idx := int(s.arrived.Add(1) - 1)
	st.tr = newTrace(idx)
	st.tr.API = a.name()
	st.tr.RequestID = r.Header.Get(requestIDHeader)
	if st.tr.RequestID != "" {
		w.Header().Set(requestIDHeader, st.tr.RequestID)
	}
	defer func() { s.traces.put(st.tr) }()
	s.traces.put(st.tr)
	fault, ok := s.chooseFault(w, r, st, rand.New(rand.NewPCG(s.cfg.Seed^faultSalt, uint64(idx))))
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var q embeddingsRequest
	if err == nil {
		if bad := decodeBody(body, &q); bad != nil {
			s.reject(w, st, bad)
			return
		}
	} else {
		s.reject(w, st, invalid("", "invalid request body: "+err.Error()))
		return
	}
	st.tr.Model = cmpOr(q.Model, s.cfg.Model)
	if q.Model != "" && q.Model != s.cfg.Model {
		s.reject(w, st, &apiError{status: http.StatusNotFound, message: fmt.Sprintf("The model `%s` does not exist.", q.Model),
			typ: "invalid_request_error", param: "model", code: "model_not_found"})
		return
	}
	format := cmpOr(q.EncodingFormat, "float")
	if format != "float" && format != "base64" {
		s.reject(w, st, invalid("encoding_format", fmt.Sprintf("encoding_format = %q: want float or base64", q.EncodingFormat)))
		return
	}
	dim := cmpOr(s.cfg.EmbeddingDimension, defaultEmbeddingDimension)
	if q.Dimensions != nil {
		if *q.Dimensions < 1 || *q.Dimensions > dim {
			s.reject(w, st, invalid("dimensions", fmt.Sprintf("dimensions = %d: want 1..%d", *q.Dimensions, dim)))
			return
		}
		dim = *q.Dimensions
	}
	ins, bad := s.inputs(q.Input)
	if bad != nil {
		s.reject(w, st, bad)
		return
	}
	var all strings.Builder
	for i, in := range ins {
		if over := in.tokens - s.cfg.MaxModelLen; s.cfg.Dialect.TruncatePrompt && over > 0 {
			in.tokens = s.cfg.MaxModelLen // each input cut to the window
			st.tr.TruncatedTokens += over
		}
		if in.tokens > s.cfg.MaxModelLen {
			s.reject(w, st, invalid("input", fmt.Sprintf(
				"input[%d] is %d tokens; this model's maximum context length is %d tokens.", i, in.tokens, s.cfg.MaxModelLen)))
			return
		}
		st.tr.PromptTokens += in.tokens
		all.WriteString(in.text)
		all.WriteByte(0)
	}
	st.tr.Inputs = len(ins)
	st.fault = fault
	if fault == faultSlowHeaders && !s.sleep(r, s.cfg.scaled(s.cfg.Faults.SlowHeaders)) {
		st.tr.End = endClientGone
		return
	}
	st.tr.End = s.embed(w, r, st, ins, format, dim, all.String())
}

// cmpOr is the first of a, b that is not the zero value.
func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// embed runs the prefill of st's inputs and writes their vectors.
func (s *Server) embed(w http.ResponseWriter, r *http.Request, st *reqState, ins []embeddingInput, format string, dim int, all string) string {
	if st.fault == faultEmptyBody {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		st.tr.Status = http.StatusOK
		return endComplete
	}
	plan := &outputPlan{finish: "stop"}
	sq := newSeq(st.arrived, st.tr.PromptTokens, hashBlocks(all, s.cfg.blockEnds(all)), plan, s.cfg.SpecTokens,
		rand.New(rand.NewPCG(s.cfg.Seed, uint64(st.tr.Index))))
	s.engine.submit(sq)
	for final := false; !final; {
		select {
		case <-sq.notify:
		case <-r.Context().Done():
			sq.cancelled.Store(true)
			return endClientGone
		}
		_, final = sq.take()
	}
	if st.fault == faultDrop {
		st.tr.End = endDropped
		panic(http.ErrAbortHandler)
	}
	finishTrace(st.tr, sq, plan)
	st.tr.FinishReason = ""
	var noise *rand.Rand
	if s.cfg.Nondeterministic {
		noise = rand.New(rand.NewPCG(s.cfg.Seed, uint64(st.tr.Index)))
	}
	vecs := make([][]float32, len(ins))
	for i, in := range ins {
		vecs[i] = embedding(s.cfg.Seed, in.text, dim, noise)
	}
	switch st.fault {
	case faultVectorCount:
		vecs = vecs[:len(vecs)-1]
	case faultVectorNaN:
		vecs[0][len(vecs[0])/2] = float32(math.NaN())
	case faultVectorDimension:
		last := len(vecs) - 1
		vecs[last] = vecs[last][:len(vecs[last])-1]
	}
	total := st.tr.PromptTokens
	if st.fault == faultUsageTotal {
		total = 0
	}
	e := embeddingsAnswer{model: s.cfg.Model, vectors: vecs, base64: format == "base64", prompt: st.tr.PromptTokens, total: total}
	if _, ok := writeBody(w, st, e.render(&s.cfg.Dialect), 0, sq.prefillDone); !ok {
		return endClientGone
	}
	return endComplete
}

// embedding is the unit vector of dim values the fake answers for text:
// drawn from the text's hash, so the same text has the same vector. A
// non-nil noise (Config.Nondeterministic) adds to each value
// embeddingNoise times a draw of it before the vector is normalised, as a
// batch's numerics move a real engine's values a little from one request
// to the next.
func embedding(seed uint64, text string, dim int, noise *rand.Rand) []float32 {
	rng := rand.New(rand.NewPCG(seed, hashString(text)))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		if noise != nil {
			x += embeddingNoise * noise.NormFloat64()
		}
		v[i] = float32(x)
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// embeddingNoise is the spread of Config.Nondeterministic's noise
// against values of spread 1: the vectors of one text stay within a
// cosine of about 1 - embeddingNoise^2 / 2 of each other.
const embeddingNoise = 1e-3

// embeddingsAnswer is the body of an embeddings answer.
type embeddingsAnswer struct {
	model   string
	vectors [][]float32
	base64  bool
	prompt  int
	total   int
}

// render writes the body in the dialect's layout. A NaN (the vector_nan
// fault) is written as JSON null, as a JSON encoder that cannot write it
// does, or as its float32 bits in base64.
func (e *embeddingsAnswer) render(d *Dialect) []byte {
	r := newRenderer(d)
	llama := d.Layout == layoutLlamaCpp
	usage := func(o *jsonObj) { o.num("prompt_tokens", e.prompt); o.num("total_tokens", e.total) }
	items := make([]func(o *jsonObj), len(e.vectors))
	for i, v := range e.vectors {
		items[i] = func(o *jsonObj) {
			if !llama {
				o.str("object", "embedding")
			}
			if d.Layout == layoutReference {
				o.num("index", i)
			}
			o.key("embedding")
			o.b = e.appendVector(o.b, v, llama)
			if d.Layout != layoutReference {
				o.num("index", i)
			}
			if llama {
				o.str("object", "embedding")
				if e.base64 {
					o.str("encoding_format", "base64")
				}
			}
		}
	}
	b := r.object(func(o *jsonObj) {
		if llama {
			o.str("model", e.model)
			o.str("object", "list")
			o.obj("usage", usage)
			o.objs("data", items...)
			return
		}
		o.str("object", "list")
		o.objs("data", items...)
		o.str("model", e.model)
		o.obj("usage", usage)
	})
	if llama {
		return b
	}
	return append(b, '\n')
}

// appendVector appends v as a JSON array (float32 values written as Go
// writes a float32, or, for llama.cpp, as the double it holds) or as a
// base64 string.
func (e *embeddingsAnswer) appendVector(b []byte, v []float32, llama bool) []byte {
	if e.base64 {
		raw := make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"')
	}
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case f != f:
			b = append(b, "null"...)
		case llama:
			b = strconv.AppendFloat(b, float64(f), 'g', -1, 64)
		default:
			m, _ := json.Marshal(f) // finite: always marshals
			b = append(b, m...)
		}
	}
	return append(b, ']')
}
