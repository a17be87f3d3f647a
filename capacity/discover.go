package capacity

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilbench/anvil/capacity/artifact"
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
	// ModelSource is "Target.Model" or "/models".
	ModelSource string
	// Window is the window the run plans for (max_context_tokens):
	// Target.MaxModelLen when set, else the advertised window.
	Window int
	// WindowSource is "Target.MaxModelLen" or the endpoint that advertised
	// it: "/models", llama.cpp's "/props", Ollama's "/api/ps" or
	// "/api/show".
	WindowSource string
	// Advertised is the window the server advertised (0: none), from
	// AdvertisedSource: the first of /models (max_model_len,
	// max_context_length, context_length, llama.cpp's meta.n_ctx), /props,
	// /api/ps and /api/show that gives one.
	Advertised       int
	AdvertisedSource string
	// TruncationWindow is the window the truncation checks and exact
	// sizing use: the advertised window when the server serves it (every
	// source but /api/show, the model's trained maximum, which the served
	// window may be below), else the smaller of the two, else Window.
	TruncationWindow int
	// Note names a declared window that disagrees with the advertised one
	// ("" when they agree or either is missing).
	Note string
}

// Discover asks the server behind t for the model and its context window
// exactly as Run does (capacity/PROTOCOL.md#context-window): GET
// {BaseURL}/models unless t sets both Model and MaxModelLen, then the
// native endpoints of llama.cpp and Ollama, each step bounded by the
// default Workload.Timeout (15m) and ctx. With both set it still asks, to
// compare (Discovery.Note), and a failure is no error. It sends t.Headers and the
// API key of t.APIKeyEnv, and follows no redirect unless t.HTTPClient does.
// Errors are those of Run's probe: ErrInvalidConfig for a bad target or
// no window anywhere, ErrEndpointRefused for a 401, 403 or 404 of
// /models.
func Discover(ctx context.Context, t Target) (Discovery, error) {
	t, err := t.Resolved()
	if err != nil {
		return Discovery{}, err
	}
	key, err := t.apiKey()
	if err != nil {
		return Discovery{}, err
	}
	hc := t.HTTPClient
	if hc == nil {
		tr := newTransport(1)
		defer tr.CloseIdleConnections()
		hc = &http.Client{Transport: tr, CheckRedirect: noRedirects}
	}
	d, err := discover(ctx, hc, t, key, defaultTimeout)
	return d, secretsOf(t, key).redactErr(err)
}

// discover is Discover with the run's client, key and step timeout.
func discover(ctx context.Context, hc *http.Client, t Target, key string, timeout time.Duration) (Discovery, error) {
	d := Discovery{Model: t.Model, ModelSource: sourceModel, Window: t.MaxModelLen, WindowSource: sourceMaxModelLen}
	if t.Model != "" && t.MaxModelLen > 0 {
		d.TruncationWindow = d.Window
		return d, nil // nothing asked: the documented way to skip the probe
	}
	info, err := probeWithin(ctx, hc, t, key, timeout)
	switch {
	case err != nil:
		return Discovery{}, fmt.Errorf("%w (set Target.Model and Target.MaxModelLen to skip the probe)", err)
	default:
		if d.Model == "" {
			d.Model, d.ModelSource = info.ID, sourceModels
		}
		if info.MaxModelLen > 0 {
			d.Advertised, d.AdvertisedSource = info.MaxModelLen, sourceModels
		}
	}
	if d.Advertised == 0 && ctx.Err() == nil {
		d.Advertised, d.AdvertisedSource = discoverContextWindow(ctx, hc, t, key, d.Model, timeout)
	}
	if d.Window == 0 {
		if d.Advertised == 0 {
			root := serverRoot(t.BaseURL)
			if u, err := redactBaseURL(t.BaseURL); err == nil {
				root = serverRoot(u)
			}
			return Discovery{}, fmt.Errorf("%w: Target.MaxModelLen = 0, the /models entry %q has none of %v, and neither %s%s (llama.cpp) nor %s%s or %s%s (ollama) gave a context length: set Target.MaxModelLen",
				ErrInvalidConfig, info.ID, contextLengthFields, root, llamaCppPropsPath, root, ollamaPSPath, root, ollamaShowPath)
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
	return d, nil
}

// record is anvil_go.context_window.
func (d Discovery) record() *artifact.ContextWindow {
	cw := &artifact.ContextWindow{Tokens: d.Window, Source: d.WindowSource, TruncationWindow: d.TruncationWindow}
	if d.Advertised > 0 {
		n, src := d.Advertised, d.AdvertisedSource
		cw.Advertised, cw.AdvertisedSource = &n, &src
	}
	if d.Note != "" {
		note := d.Note
		cw.Note = &note
	}
	return cw
}
