package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
)

// Where servers advertise a model's context window, in the order
// capacity.Run reads them (capacity/PROTOCOL.md#context-window). The
// native endpoints hang from the server root (the base URL without its
// /v1).
const (
	// llamaCppPropsPath: llama.cpp's server properties; a slot's window
	// is default_generation_settings.n_ctx (a top-level n_ctx in older
	// builds).
	llamaCppPropsPath = "/props"
	// ollamaPSPath: ollama's running models; a loaded model's
	// context_length is the window it is served with.
	ollamaPSPath = "/api/ps"
	// ollamaShowPath: ollama's model details (POST {"model": id});
	// model_info["<general.architecture>.context_length"] is the model's
	// trained window.
	ollamaShowPath = "/api/show"
)

// contextLengthFields are the /models entry fields that advertise a
// context window, in the order capacity's model probe reads them.
var contextLengthFields = [...]string{"max_model_len", "max_context_length", "context_length"}

// llamaCppMetaField is where llama.cpp's /v1/models entry advertises the
// window of a slot: meta.n_ctx (the value its /props repeats).
const llamaCppMetaField = "meta.n_ctx"

// window is a context window and where it was found.
type window struct {
	n    int    // tokens; 0 when unknown
	from string // e.g. "Target.MaxModelLen", "GET /models max_model_len", "GET /props"
	// advertisedN is the window the server advertises, looked for whether
	// or not Target.MaxModelLen declared one, and advertisedFrom where.
	advertisedN    int
	advertisedFrom string
	// notes say what the discovery saw: each endpoint that gave nothing,
	// a declared window that disagrees with the advertised one.
	notes []string
}

// modelEntry is one entry of a /models answer.
type modelEntry struct {
	id     string
	window int    // the first positive context window field, 0 when none
	field  string // the field it came in
}

// parseModelList reads the entries of an OpenAI model list
// {"data": [{"id": ..., "max_model_len": ...}, ...]}; ok is false when the
// body is not one.
func parseModelList(body []byte) (entries []modelEntry, ok bool) {
	var list struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil || list.Data == nil {
		return nil, false
	}
	for _, m := range list.Data {
		var id string
		if json.Unmarshal(m["id"], &id) != nil {
			continue
		}
		e := modelEntry{id: id}
		for _, f := range contextLengthFields {
			if n := positiveInt(m[f]); n > 0 {
				e.window, e.field = n, f
				break
			}
		}
		if e.window == 0 {
			var meta struct {
				NCtx json.RawMessage `json:"n_ctx"`
			}
			if json.Unmarshal(m["meta"], &meta) == nil {
				if n := positiveInt(meta.NCtx); n > 0 {
					e.window, e.field = n, llamaCppMetaField
				}
			}
		}
		entries = append(entries, e)
	}
	return entries, true
}

// discoverWindow finds the model's context window the way capacity.Run
// does: declared (Target.MaxModelLen) when positive, else the /models entry
// of the model (max_model_len, max_context_length, context_length, then
// llama.cpp's meta.n_ctx), else llama.cpp's GET /props, else ollama's GET
// /api/ps, else ollama's POST /api/show, each asked within errorDeadline
// (they need no model work). The server's own advertisement is looked for
// even when a window is declared, so that nameModels judges it and a
// disagreement is named; the window is then the one a truncation shows at,
// as capacity's truncation window: the advertised one when the server
// serves it, else (ollama's /api/show) the smaller of the two.
func (p *prober) discoverWindow(ctx context.Context, declared int, listed []modelEntry) window {
	var w window
	for _, e := range listed {
		if e.id == p.model && e.window > 0 {
			w.advertisedN, w.advertisedFrom = e.window, "GET /models "+e.field
			break
		}
	}
	if w.advertisedN == 0 {
		w.advertisedN, w.advertisedFrom = p.askNative(ctx, &w.notes)
	}
	switch {
	case declared > 0 && w.advertisedN > 0 && declared != w.advertisedN:
		// As capacity's truncation window: the advertised window when the
		// server says it serves it, else (ollama's /api/show is the
		// model's trained maximum, which the served window may be below)
		// the smaller of the two.
		if w.advertisedFrom != http.MethodPost+" "+ollamaShowPath {
			w.n, w.from = w.advertisedN, w.advertisedFrom
			w.notes = append(w.notes, fmt.Sprintf("Target.MaxModelLen %d disagrees with the %d the server serves (%s): the served window is used", declared, w.advertisedN, w.advertisedFrom))
			break
		}
		w.n, w.from = min(declared, w.advertisedN), "Target.MaxModelLen"
		if w.advertisedN < declared {
			w.from = w.advertisedFrom
		}
		w.notes = append(w.notes, fmt.Sprintf("Target.MaxModelLen %d disagrees with the trained window %d (%s): the smaller is used", declared, w.advertisedN, w.advertisedFrom))
	case declared > 0:
		w.n, w.from = declared, "Target.MaxModelLen"
	default:
		w.n, w.from = w.advertisedN, w.advertisedFrom
	}
	return w
}

// askNative asks the native endpoints of llama.cpp and ollama, in order,
// for the model's window; notes gets what each that gave none answered.
func (p *prober) askNative(ctx context.Context, notes *[]string) (int, string) {
	show, _ := json.Marshal(map[string]string{"model": p.model})
	for _, s := range []struct {
		method, path string
		body         []byte
		parse        func([]byte, string) int
	}{
		{http.MethodGet, llamaCppPropsPath, nil, parseLlamaCppProps},
		{http.MethodGet, ollamaPSPath, nil, parseOllamaPS},
		{http.MethodPost, ollamaShowPath, show, parseOllamaShow},
	} {
		h, err := p.do(ctx, s.method, p.root()+s.path, s.body, http.Header{"Accept": {"application/json"}}, min(p.timeout, errorDeadline))
		switch {
		case err != nil:
			*notes = append(*notes, fmt.Sprintf("%s %s: %v", s.method, s.path, err))
		case h.status < 200 || h.status > 299:
			*notes = append(*notes, fmt.Sprintf("%s %s: HTTP %d", s.method, s.path, h.status))
		default:
			if n := s.parse(h.body, p.model); n > 0 {
				return n, s.method + " " + s.path
			}
			*notes = append(*notes, fmt.Sprintf("%s %s: no window in %s", s.method, s.path, excerpt(p.scrub, h.body)))
		}
	}
	return 0, ""
}

// parseLlamaCppProps reads default_generation_settings.n_ctx (or a
// top-level n_ctx) of a llama.cpp /props answer.
func parseLlamaCppProps(body []byte, _ string) int {
	var props struct {
		Default struct {
			NCtx json.RawMessage `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx json.RawMessage `json:"n_ctx"`
	}
	if json.Unmarshal(body, &props) != nil {
		return 0
	}
	for _, raw := range []json.RawMessage{props.Default.NCtx, props.NCtx} {
		if n := positiveInt(raw); n > 0 {
			return n
		}
	}
	return 0
}

// parseOllamaPS reads the context_length of the loaded model named model
// in an ollama /api/ps answer (by name or model), or of the only loaded
// model when none is named so.
func parseOllamaPS(body []byte, model string) int {
	var ps struct {
		Models []struct {
			Name          string          `json:"name"`
			Model         string          `json:"model"`
			ContextLength json.RawMessage `json:"context_length"`
		} `json:"models"`
	}
	if json.Unmarshal(body, &ps) != nil {
		return 0
	}
	pick := -1
	for i, m := range ps.Models {
		if m.Name == model || m.Model == model {
			pick = i
			break
		}
	}
	if pick < 0 && len(ps.Models) == 1 {
		pick = 0
	}
	if pick < 0 {
		return 0
	}
	return positiveInt(ps.Models[pick].ContextLength)
}

// parseOllamaShow reads model_info["<general.architecture>.context_length"]
// of an ollama /api/show answer.
func parseOllamaShow(body []byte, _ string) int {
	var show struct {
		ModelInfo map[string]json.RawMessage `json:"model_info"`
	}
	if json.Unmarshal(body, &show) != nil {
		return 0
	}
	var arch string
	if json.Unmarshal(show.ModelInfo["general.architecture"], &arch) != nil || strings.TrimSpace(arch) == "" {
		return 0
	}
	return positiveInt(show.ModelInfo[arch+".context_length"])
}

// positiveInt reads a window as capacity's probe does: a JSON number that
// is a positive integer (32768 or 32768.0) of at most 2^31-1; 0 otherwise.
func positiveInt(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}
