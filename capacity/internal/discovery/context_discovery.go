package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// Where servers whose /v1/models carries no context length say it
// (capacity/PROTOCOL.md#context-window), relative to the server root (the
// base URL without its trailing /v1).
const (
	// llamaCppPropsPath: llama.cpp's server properties; the context of a
	// slot is default_generation_settings.n_ctx.
	llamaCppPropsPath = "/props"
	// ollamaPSPath: ollama's running models; each loaded model's
	// context_length is the window the server serves.
	ollamaPSPath = "/api/ps"
	// ollamaShowPath: ollama's model details (POST {"model": id});
	// model_info["<architecture>.context_length"] is the model's trained
	// maximum, used only when the model is not loaded.
	ollamaShowPath = "/api/show"
)

// maxDiscoveryBody bounds the bytes of a discovery answer read.
const maxDiscoveryBody = 4 << 20

// maxRefusalDrain bounds the bytes of a discovery step's error answer
// read (and dropped) to keep its connection.
const maxRefusalDrain = 64 << 10

// serverRoot is the base URL without its trailing /v1 (the root native
// endpoints hang from).
func serverRoot(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
}

// nativeStepTimeout bounds each native discovery step (/props, /slots,
// /api/ps, /api/show; capacity/PROTOCOL.md#context-window-discovery), or
// the request timeout when that is shorter: an idle server answers them in
// milliseconds, and a step only completes what /models said, so an
// endpoint that accepts the request and never answers costs the discovery
// this bound and the next steps are still asked. GET /models keeps the
// request timeout: a run whose window is not declared cannot start without
// it.
const nativeStepTimeout = 5 * time.Second

// nativeAnswers is what the native endpoints of llama.cpp and Ollama said.
type nativeAnswers struct {
	window       int      // the first positive window; 0 when none
	windowSource string   // the endpoint that gave it
	slots        int      // llama.cpp's slots; 0 when unknown
	slotsSource  string   // llamaCppPropsPath or llamaCppSlotsPath
	asked        []string // each step's outcome ("GET /props: HTTP 404 Not Found")
	// outOfRange is each answer's window that is a number outside
	// 1..MaxWindow, with its endpoint ("/props n_ctx -5"): such a
	// window is none, and the error of a discovery that found none names
	// it.
	outOfRange []string
}

// askFunc asks the endpoint at path (relative to the server root) with
// body (nil: GET) and returns a 2xx answer's body; it records the step's
// outcome.
type askFunc func(path string, body []byte) ([]byte, bool)

// discoverNative asks llama.cpp's /props for its window and slots (and
// /slots when /props names no total_slots), then, while wantWindow and no
// window is known, ollama's /api/ps and /api/show for the context window
// of model, each bounded by the smaller of timeout and nativeStepTimeout.
// Any failure of a step is only "no answer" (recorded in asked): the
// caller then asks for Target.MaxModelLen.
func discoverNative(ctx context.Context, cfg Config, model string, wantWindow bool) nativeAnswers {
	root := serverRoot(cfg.BaseURL)
	step := min(cfg.Timeout, nativeStepTimeout)
	var a nativeAnswers
	ask := func(path string, body []byte) ([]byte, bool) {
		b, failure := askServer(ctx, cfg.Client, root+path, body, step)
		method := http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
		if failure != "" {
			a.asked = append(a.asked, method+" "+path+": "+failure)
			return nil, false
		}
		a.asked = append(a.asked, method+" "+path+": answered")
		return b, true
	}
	// said completes the last outcome with what the answer gave.
	said := func(what string) { a.asked[len(a.asked)-1] += ", " + what }
	// outOfRange makes the last outcome the out-of-range window bad of
	// the answer of path ("GET /props: n_ctx -5 out of the range
	// 1..1048576 of a window").
	outOfRange := func(path, bad string) {
		a.outOfRange = append(a.outOfRange, path+" "+bad)
		last := &a.asked[len(a.asked)-1]
		*last = strings.TrimSuffix(*last, "answered") + bad + fmt.Sprintf(" out of the range 1..%d of a window", MaxWindow)
	}
	if body, ok := ask(llamaCppPropsPath, nil); ok {
		switch n, bad := parseLlamaCppProps(body, model); {
		case n > 0:
			a.window, a.windowSource = n, llamaCppPropsPath
			said(fmt.Sprintf("window %d", n))
		case bad != "":
			outOfRange(llamaCppPropsPath, bad)
		default:
			said("no window")
		}
		at := len(a.asked) - 1
		a.slots, a.slotsSource = llamaCppSlots(ctx, ask, body)
		if a.slotsSource == llamaCppPropsPath {
			a.asked[at] += fmt.Sprintf(", %d slots", a.slots)
		} else if a.slots > 0 {
			said(fmt.Sprintf("%d slots", a.slots))
		}
	}
	steps := []struct {
		path  string
		body  []byte
		parse func([]byte, string) (int, string)
	}{
		{ollamaPSPath, nil, parseOllamaPS},
		{ollamaShowPath, mustJSON(map[string]string{"model": model}), parseOllamaShow},
	}
	for _, s := range steps {
		if !wantWindow || a.window > 0 || ctx.Err() != nil {
			break
		}
		body, ok := ask(s.path, s.body)
		if !ok {
			continue
		}
		switch n, bad := s.parse(body, model); {
		case n > 0:
			a.window, a.windowSource = n, s.path
			said(fmt.Sprintf("window %d", n))
		case bad != "":
			outOfRange(s.path, bad)
		default:
			said("no window in " + strconv.Quote(client.Excerpt(string(body))))
		}
	}
	return a
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return b
}

// askServer sends GET url (POST with body when body is not nil) with the
// run's headers, bounded by timeout, and returns a 2xx answer's body, or
// why there is none ("HTTP 404 Not Found", "timed out after 5s").
func askServer(ctx context.Context, cl *client.Client, url string, body []byte, timeout time.Duration) ([]byte, string) {
	sctx, cancel := context.WithTimeoutCause(ctx, timeout, errProbeTimeout)
	defer cancel()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		method, rd = http.MethodPost, bytes.NewReader(body)
	}
	req, err := cl.NewRequest(sctx, method, url, rd)
	if err != nil {
		return nil, client.UnwrapURLError(err).Error()
	}
	// failed says why err ended the step.
	failed := func(err error) string {
		switch {
		case ctx.Err() != nil:
			return "not answered: " + context.Cause(ctx).Error()
		case context.Cause(sctx) == errProbeTimeout:
			return fmt.Sprintf("timed out after %v", timeout)
		}
		return client.UnwrapURLError(err).Error()
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, failed(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		// Read a short refusal to its end, so that its connection goes
		// back to the pool rather than closed (a 404 per absent endpoint
		// would otherwise cost the run a connection).
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxRefusalDrain))
		return nil, "HTTP " + resp.Status
	}
	decoded, err := client.DecodeBody(resp)
	if err != nil {
		return nil, failed(err)
	}
	b, err := io.ReadAll(io.LimitReader(decoded, maxDiscoveryBody))
	if err != nil {
		return nil, "reading the answer: " + failed(err)
	}
	return b, ""
}

// parseLlamaCppProps reads default_generation_settings.n_ctx (or a
// top-level n_ctx) of a llama.cpp /props answer; bad names the first of
// them that is a number out of range ("n_ctx -5") when neither is a
// window.
func parseLlamaCppProps(body []byte, _ string) (n int, bad string) {
	var p struct {
		Default map[string]json.RawMessage `json:"default_generation_settings"`
		NCtx    json.RawMessage            `json:"n_ctx"`
	}
	if json.Unmarshal(body, &p) != nil {
		return 0, ""
	}
	var info modelInfo
	if !info.window(p.Default["n_ctx"], "default_generation_settings.n_ctx") {
		info.window(p.NCtx, "n_ctx")
	}
	return windowOf(info)
}

// parseOllamaPS reads the context_length of the loaded model named model
// in an ollama /api/ps answer (by name or model), or of the only loaded
// model when none is named so; bad names it when it is a number out of
// range ("context_length -5").
func parseOllamaPS(body []byte, model string) (n int, bad string) {
	var ps struct {
		Models []struct {
			Name          string          `json:"name"`
			Model         string          `json:"model"`
			ContextLength json.RawMessage `json:"context_length"`
		} `json:"models"`
	}
	if json.Unmarshal(body, &ps) != nil {
		return 0, ""
	}
	var info modelInfo
	for _, m := range ps.Models {
		if m.Name == model || m.Model == model {
			info.window(m.ContextLength, "context_length")
			return windowOf(info)
		}
	}
	if len(ps.Models) == 1 {
		info.window(ps.Models[0].ContextLength, "context_length")
	}
	return windowOf(info)
}

// parseOllamaShow reads model_info["<general.architecture>.context_length"]
// of an ollama /api/show answer; bad names it when it is a number out of
// range ("llama.context_length 1e300").
func parseOllamaShow(body []byte, _ string) (n int, bad string) {
	var show struct {
		ModelInfo map[string]json.RawMessage `json:"model_info"`
	}
	if json.Unmarshal(body, &show) != nil {
		return 0, ""
	}
	arch := jsonString(show.ModelInfo["general.architecture"])
	if arch == "" {
		return 0, ""
	}
	var info modelInfo
	info.window(show.ModelInfo[arch+".context_length"], arch+".context_length")
	return windowOf(info)
}

// windowOf is the window info read (0: none) and, when it is none, the
// out-of-range number it saw ("n_ctx -5"; "" when none).
func windowOf(info modelInfo) (int, string) {
	return info.MaxModelLen, info.OutOfRange
}

// windowInt reads a window a server advertises: a positive integer no
// larger than MaxWindow (a larger one could not be planned for).
func windowInt(raw json.RawMessage) (int, bool) {
	n, ok := client.PositiveInt(raw)
	return n, ok && n <= MaxWindow
}
