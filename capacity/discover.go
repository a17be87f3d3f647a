package capacity

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
)

// Where a Discovery's model and windows came from
// (capacity/PROTOCOL.md#context-window).
const (
	// sourceModel and sourceMaxModelLen: the Target set it (ANVIL_MODEL,
	// ANVIL_MAX_MODEL_LEN in package anviltest).
	sourceModel       = "Target.Model"
	sourceMaxModelLen = "Target.MaxModelLen"
	// sourceModels: GET {BaseURL}/models.
	sourceModels = "/models"
	// sourcePS and sourceShow are Ollama's /api/ps and /api/show, at the
	// server root (llama.cpp's /props is llamaCppPropsPath).
	sourcePS   = ollamaPSPath
	sourceShow = ollamaShowPath
)

// Discovery is what Run learns of the model and its context window before
// it plans, and where each came from.
type Discovery struct {
	// Model is the model id sent: Target.Model, else the /models entry's.
	Model string
	// ModelSource is "Target.Model" or "/models" ("" while Model is "").
	ModelSource string
	// Window is the window the run plans for (max_context_tokens):
	// Target.MaxModelLen when set, else the advertised window.
	Window int
	// WindowSource is "Target.MaxModelLen" or the endpoint that advertised
	// it: "/models", llama.cpp's "/props", Ollama's "/api/ps" or
	// "/api/show"; "" while Window is 0 (a Discovery returned with an
	// error).
	WindowSource string
	// Advertised is the window the server advertised (0: none), from
	// AdvertisedSource: the first of /models (max_model_len,
	// max_context_length, context_length, llama.cpp's meta.n_ctx), /props,
	// /api/ps and /api/show that gives one; the smaller of /models and
	// /props when both give one and they disagree.
	Advertised       int
	AdvertisedSource string
	// AdvertisedField is the field of the /models entry Advertised came
	// from ("max_model_len", "max_context_length", "context_length" or
	// llama.cpp's "meta.n_ctx"); "" when AdvertisedSource is not
	// "/models".
	AdvertisedField string
	// Listed is the ids of the /models answer's entries, in its order; nil
	// when GET /models gave no model list, and then ModelsError says why
	// (the probe's error, scrubbed of the target's credentials). With
	// Target.Model and Target.MaxModelLen set that failure is no error of
	// Discover, so ModelsError is the only word of it.
	Listed      []string
	ModelsError string
	// TruncationWindow is the window the truncation checks and exact
	// sizing use: the advertised window when the server serves it (every
	// source but /api/show, the model's trained maximum, which the served
	// window may be below), else the smaller of the two, else Window.
	TruncationWindow int
	// Slots is how many requests llama.cpp runs at once (0: unknown, or
	// not llama.cpp), from SlotsSource: "/props" (total_slots) or "/slots"
	// (its entries).
	Slots       int
	SlotsSource string
	// Asked is what the discovery asked and each answer, in order, one
	// line per step ("GET /models: 1 model, window 8192 (meta.n_ctx)",
	// "GET /props: HTTP 404 Not Found", "GET /api/ps: timed out after
	// 5s"), scrubbed of the target's credentials; a step not asked (its
	// window already known, the budget spent) has no line.
	Asked []string
	// Note names two advertised windows that disagree (/models and
	// /props: the smaller is Advertised), a declared window that disagrees
	// with the advertised one and, in a run, a concurrency above Slots ("" when there is nothing
	// to say).
	Note string
}

// Discover asks the server behind t for the model and its context window
// exactly as Run does (capacity/PROTOCOL.md#context-window): GET
// {BaseURL}/models, bounded by the default Workload.Timeout (15m), then
// llama.cpp's /props (and /slots) and Ollama's native endpoints, each
// bounded by 5 s (nativeStepTimeout), all within ctx, through the module's
// connection rule; Discovery.Asked says what each step answered. With both Model and
// MaxModelLen set it still asks, to compare (Discovery.Note), all steps
// within 5 s, and a failure is no error. It sends t.Headers and the
// API key of t.APIKeyEnv, and follows no redirect unless t.HTTPClient
// does. Errors are those of Run's probe: ErrInvalidConfig for a bad target
// or no window anywhere, ErrEndpointRefused for a 401, 403 or 404 of
// /models. With an error the Discovery still holds what was learned
// before it (the model list, ModelsError, the slots), for a tool that
// judges the server rather than runs it.
func Discover(ctx context.Context, t Target) (Discovery, error) {
	t, err := t.Resolved()
	if err != nil {
		return Discovery{}, err
	}
	key, err := t.apiKey()
	if err != nil {
		return Discovery{}, err
	}
	hc, own := t.HTTPClient, (*http.Transport)(nil)
	if hc == nil {
		own = newTransport(1)
		defer own.CloseIdleConnections()
		hc = &http.Client{Transport: own, CheckRedirect: noRedirects}
	}
	hc, _ = client.WithConnectionRule(hc, own)
	d, err := discover(ctx, hc, t, key, defaultTimeout)
	sec := t.secrets(key)
	d.ModelsError = sec.Scrub(d.ModelsError)
	for i, a := range d.Asked {
		d.Asked[i] = sec.Scrub(a)
	}
	return d, sec.Redact(err)
}

// declaredProbeTimeout bounds the whole discovery when Target.Model and
// Target.MaxModelLen are both declared: the answers are then only
// compared with the declared window, and an idle server answers these
// requests in milliseconds, so a server that does not answer them costs
// the run seconds, not a request timeout per step.
const declaredProbeTimeout = 5 * time.Second

// discover is Discover with the run's client, key and step timeout.
func discover(ctx context.Context, hc *http.Client, t Target, key string, timeout time.Duration) (Discovery, error) {
	var d Discovery
	if t.Model != "" {
		d.Model, d.ModelSource = t.Model, sourceModel
	}
	if t.MaxModelLen > 0 {
		d.Window, d.WindowSource = t.MaxModelLen, sourceMaxModelLen
	}
	conflict := "" // two advertised windows that disagree
	declared := t.Model != "" && t.MaxModelLen > 0
	if declared {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, declaredProbeTimeout, errDeclaredBudget)
		defer cancel()
	}
	info, err := probeWithin(ctx, hc, t, key, timeout)
	d.Asked = append(d.Asked, modelsOutcome(info, err))
	switch {
	case err != nil && declared:
		// Only a comparison: the declared model and window stand, and the
		// measured requests meet whatever refused the probe.
		d.ModelsError = err.Error()
	case err != nil:
		d.ModelsError = err.Error()
		return d, fmt.Errorf("%w (with Target.Model and Target.MaxModelLen set, the run does not need its answer)", err)
	default:
		d.Listed = info.Listed
		if d.Model == "" {
			d.Model, d.ModelSource = info.ID, sourceModels
		}
		if info.MaxModelLen > 0 {
			d.Advertised, d.AdvertisedSource, d.AdvertisedField = info.MaxModelLen, sourceModels, info.Field
		}
	}
	var a nativeAnswers
	if ctx.Err() == nil {
		a = discoverNative(ctx, hc, t, key, d.Model, d.Advertised == 0, timeout)
		switch {
		case d.Advertised == 0:
			d.Advertised, d.AdvertisedSource = a.window, a.windowSource
		case a.window > 0 && a.window != d.Advertised:
			// Both are windows the server serves (/models and llama.cpp's
			// /props): the smaller is the one no prompt may exceed.
			conflict = fmt.Sprintf("the server advertises two windows, %d tokens (%s) and %d tokens (%s): the smaller is used",
				d.Advertised, d.AdvertisedSource, a.window, a.windowSource)
			if a.window < d.Advertised {
				d.Advertised, d.AdvertisedSource = a.window, a.windowSource
			}
		}
		d.Slots, d.SlotsSource = a.slots, a.slotsSource
		d.Asked = append(d.Asked, a.asked...)
	}
	if d.Window == 0 {
		if d.Advertised == 0 {
			return d, noWindowError(t, info, a.outOfRange)
		}
		d.Window, d.WindowSource = d.Advertised, d.AdvertisedSource
	}
	d.TruncationWindow = d.Window
	if d.Advertised > 0 && d.Advertised != d.Window {
		served := d.AdvertisedSource != sourceShow
		if served || d.Advertised < d.Window {
			d.TruncationWindow = d.Advertised
		}
		switch {
		case d.Window > d.Advertised:
			d.Note = fmt.Sprintf("Target.MaxModelLen %d is above the window of %d tokens the server advertises (%s): prompts are planned for %d, and a count at or above %d is a prompt cut to the server's window",
				d.Window, d.Advertised, d.AdvertisedSource, d.Window, d.TruncationWindow)
		case served:
			d.Note = fmt.Sprintf("Target.MaxModelLen %d is below the window of %d tokens the server advertises (%s): prompts are planned for %d, and only a count at or above %d is a prompt cut to the server's window",
				d.Window, d.Advertised, d.AdvertisedSource, d.Window, d.TruncationWindow)
		}
	}
	if conflict != "" {
		if d.Note != "" {
			conflict += "; " + d.Note
		}
		d.Note = conflict
	}
	return d, nil
}

// errDeclaredBudget is the cause of a discovery ended by
// declaredProbeTimeout.
var errDeclaredBudget = fmt.Errorf("the %v budget of a discovery with Target.Model and Target.MaxModelLen declared is spent", declaredProbeTimeout)

// modelsOutcome is the Discovery.Asked line of GET /models.
func modelsOutcome(info modelInfo, err error) string {
	if err != nil {
		// The error names the URL ("model probe GET http://host/v1/models:
		// HTTP 404 ..."); the line keeps what follows it.
		msg := err.Error()
		if _, after, ok := strings.Cut(msg, sourceModels+": "); ok {
			msg = after
		}
		return "GET /models: " + msg
	}
	s := fmt.Sprintf("GET /models: %d models", len(info.Listed))
	if len(info.Listed) == 1 {
		s = "GET /models: 1 model"
	}
	switch {
	case info.MaxModelLen > 0:
		return s + fmt.Sprintf(", window %d (%s)", info.MaxModelLen, info.Field)
	case info.OutOfRange != "":
		return s + ", no window (" + info.OutOfRange + " is out of range)"
	}
	return s + ", no window"
}

// noWindowError is the error of a discovery that found no window: what
// /models held (no field, or one out of range), the native endpoints
// asked and the out-of-range windows they gave (outOfRange: "/props
// n_ctx -5").
func noWindowError(t Target, info modelInfo, outOfRange []string) error {
	root := serverRoot(t.BaseURL)
	if u, err := redactBaseURL(t.BaseURL); err == nil {
		root = serverRoot(u)
	}
	models := fmt.Sprintf("the /models entry %q has none of %v", info.ID, contextLengthFields)
	if info.OutOfRange != "" {
		models = fmt.Sprintf("the /models entry %q has %s, out of the range 1..%d of a window", info.ID, info.OutOfRange, maxContextTokens)
	}
	native := ""
	if len(outOfRange) > 0 {
		native = fmt.Sprintf(" (%s: out of the range 1..%d of a window)", strings.Join(outOfRange, ", "), maxContextTokens)
	}
	return fmt.Errorf("%w: Target.MaxModelLen = 0, %s, and neither %s%s (llama.cpp) nor %s%s or %s%s (ollama) gave a context length%s: set Target.MaxModelLen",
		ErrInvalidConfig, models, root, llamaCppPropsPath, root, ollamaPSPath, root, ollamaShowPath, native)
}

// truncationWindowFrom is where TruncationWindow came from.
func (d Discovery) truncationWindowFrom() client.WindowOrigin {
	if d.Advertised > 0 && d.TruncationWindow == d.Advertised {
		return client.WindowOrigin{Source: d.AdvertisedSource, Trained: d.AdvertisedSource == sourceShow}
	}
	return client.WindowOrigin{Source: sourceMaxModelLen, Declared: true}
}

// record is anvil_go.context_window.
func (d Discovery) record() *artifact.ContextWindow {
	cw := &artifact.ContextWindow{Tokens: d.Window, Source: d.WindowSource, TruncationWindow: d.TruncationWindow}
	if d.Advertised > 0 {
		n, src := d.Advertised, d.AdvertisedSource
		cw.Advertised, cw.AdvertisedSource = &n, &src
	}
	if d.Slots > 0 {
		n, src := d.Slots, d.SlotsSource
		cw.Slots, cw.SlotsSource = &n, &src
	}
	if d.Note != "" {
		note := d.Note
		cw.Note = &note
	}
	return cw
}
