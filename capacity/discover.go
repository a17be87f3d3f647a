package capacity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/discovery"
)

// Discovery is what Run learns of the model and its context window before
// it plans, and where each came from. (It is the engine's own
// discovery result field for field: Discover converts one into the other,
// which stops compiling the moment they differ.)
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
	// SuggestedBaseURL is the API root the server does answer when
	// Target.BaseURL is not it: BaseURL + "/v1" (without userinfo) when
	// GET /models was refused with a 404 and the same server's
	// /v1/models lists models, the error (ModelsError, with Model and
	// MaxModelLen declared) then asking "did you mean" it; "" otherwise.
	SuggestedBaseURL string
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
		var closeIdle func()
		hc, closeIdle = ownClient(own)
		defer closeIdle()
	}
	hc, _ = client.WithConnectionRule(hc, own)
	d, err := discover(ctx, hc, t, key, defaultTimeout)
	sec := t.secrets(key)
	d.ModelsError = sec.Scrub(d.ModelsError)
	for i, a := range d.Asked {
		d.Asked[i] = sec.Scrub(a)
	}
	return Discovery(d), sec.Redact(err)
}

// discover runs package discovery's Discover for a run against t (resolved)
// with the bearer token key over hc, /models bounded by timeout: a
// discovery that found no window is ErrInvalidConfig's, one whose /models
// refused is ErrEndpointRefused's (discovery.ErrRefused).
func discover(ctx context.Context, hc *http.Client, t Target, key string, timeout time.Duration) (discovery.Result, error) {
	cl, err := client.New(client.Config{BaseURL: t.BaseURL, HTTPClient: hc, Header: t.Headers, APIKey: key, Secrets: t.secrets(key)})
	if err != nil {
		return discovery.Result{}, err
	}
	d, err := discovery.Discover(ctx, discovery.Config{Client: cl, BaseURL: t.BaseURL, Model: t.Model, MaxModelLen: t.MaxModelLen, Timeout: timeout})
	if _, ok := errors.AsType[*discovery.NoWindowError](err); ok {
		err = fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return d, err
}
