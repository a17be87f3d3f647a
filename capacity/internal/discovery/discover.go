package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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

// Config says whom a discovery asks and what is declared.
type Config struct {
	// Client sends every request: its headers, its credential, its
	// connection rule; the answers are scrubbed of its secrets.
	Client *client.Client
	// BaseURL is the API root ("http://host:8000/v1", no trailing slash):
	// GET BaseURL + "/models"; the native endpoints hang from the server
	// root, BaseURL without its trailing /v1.
	BaseURL string
	// Model and MaxModelLen are the declared model and window
	// (Target.Model, Target.MaxModelLen); "" and 0 ask the server.
	Model       string
	MaxModelLen int
	// Timeout bounds GET /models (Workload.Timeout); each native step is
	// bounded by the smaller of it and nativeStepTimeout.
	Timeout time.Duration
}

// Result is what a discovery learned: package capacity's Discovery,
// field for field (see it for each field's meaning); capacity converts
// one into the other.
type Result struct {
	Model, ModelSource                string
	Window                            int
	WindowSource                      string
	Advertised                        int
	AdvertisedSource, AdvertisedField string
	Listed                            []string
	ModelsError                       string
	TruncationWindow                  int
	Slots                             int
	SlotsSource                       string
	Asked                             []string
	Note                              string
	SuggestedBaseURL                  string
}

// MaxWindow is the largest context window a run plans for, in tokens: an
// advertised window above it is no window (package capacity bounds
// Target.MaxModelLen and Workload.ContextTokens by it).
const MaxWindow = 1 << 20

// errProbeTimeout is the cause recorded when a step of the discovery runs
// out of time.
var errProbeTimeout = errors.New("timed out")

// ErrRefused is wrapped by the error of a discovery whose GET /models the
// endpoint answered 401, 403 or 404 (package capacity's
// ErrEndpointRefused).
var ErrRefused = errors.New("capacity: the endpoint refused the requests")

// A NoWindowError is the error of a discovery that found no context
// window: none declared, none advertised (package capacity wraps its
// ErrInvalidConfig around it).
type NoWindowError struct{ msg string }

// Error names what /models held and the native endpoints asked.
func (e *NoWindowError) Error() string { return e.msg }

// declaredProbeTimeout bounds the whole discovery when Target.Model and
// Target.MaxModelLen are both declared: the answers are then only
// compared with the declared window, and an idle server answers these
// requests in milliseconds, so a server that does not answer them costs
// the run seconds, not a request timeout per step.
const declaredProbeTimeout = 5 * time.Second

// Discover asks the server of cfg for the model and its context window
// (capacity/PROTOCOL.md#context-window): GET {BaseURL}/models, bounded by
// cfg.Timeout, then llama.cpp's /props (and /slots) and Ollama's native
// endpoints, each bounded by nativeStepTimeout, all within ctx. With both
// Model and MaxModelLen declared it still asks, to compare (Result.Note),
// all steps within declaredProbeTimeout, and a failure is no error.
// Errors: one wrapping ErrRefused for a 401, 403 or 404 of /models, a
// *NoWindowError when there is no window anywhere, the probe's own
// otherwise. With an error the Result still holds what was learned before
// it. Its Asked and ModelsError are not scrubbed yet (package capacity's
// Discover scrubs them).
func Discover(ctx context.Context, cfg Config) (Result, error) {
	var d Result
	if cfg.Model != "" {
		d.Model, d.ModelSource = cfg.Model, sourceModel
	}
	if cfg.MaxModelLen > 0 {
		d.Window, d.WindowSource = cfg.MaxModelLen, sourceMaxModelLen
	}
	conflict := "" // two advertised windows that disagree
	declared := cfg.Model != "" && cfg.MaxModelLen > 0
	if declared {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, declaredProbeTimeout, errDeclaredBudget)
		defer cancel()
	}
	info, err := probeWithin(ctx, cfg, cfg.Timeout)
	d.Asked = append(d.Asked, modelsOutcome(info, err))
	switch {
	case err != nil && declared:
		// Only a comparison: the declared model and window stand, and the
		// measured requests meet whatever refused the probe (a base URL
		// without its /v1 is still named, for a tool that judges the
		// server: SuggestedBaseURL).
		d.ModelsError = err.Error()
		if notFound(err) {
			if root, hint := apiRootHint(ctx, cfg); hint != "" {
				d.SuggestedBaseURL, d.ModelsError = root, d.ModelsError+hint
			}
		}
	case err != nil:
		d.ModelsError = err.Error()
		if notFound(err) {
			if root, hint := apiRootHint(ctx, cfg); hint != "" {
				d.SuggestedBaseURL = root
				return d, fmt.Errorf("%w%s", err, hint)
			}
		}
		return d, fmt.Errorf("%w (declare the model and its context window, Target.Model and Target.MaxModelLen, and the run goes on without this answer)", err)
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
		a = discoverNative(ctx, cfg, d.Model, d.Advertised == 0)
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
			return d, noWindowError(cfg.BaseURL, info, a.outOfRange)
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
func noWindowError(baseURL string, info modelInfo, outOfRange []string) error {
	root := serverRoot(baseURL)
	if u, err := url.Parse(baseURL); err == nil {
		root = serverRoot(client.RedactedURL(u))
	}
	models := fmt.Sprintf("the /models entry %q has none of %v", info.ID, contextLengthFields)
	if info.OutOfRange != "" {
		models = fmt.Sprintf("the /models entry %q has %s, out of the range 1..%d of a window", info.ID, info.OutOfRange, MaxWindow)
	}
	native := ""
	if len(outOfRange) > 0 {
		native = fmt.Sprintf(" (%s: out of the range 1..%d of a window)", strings.Join(outOfRange, ", "), MaxWindow)
	}
	return &NoWindowError{msg: fmt.Sprintf("Target.MaxModelLen = 0, %s, and neither %s%s (llama.cpp) nor %s%s or %s%s (ollama) gave a context length%s: set Target.MaxModelLen",
		models, root, llamaCppPropsPath, root, ollamaPSPath, root, ollamaShowPath, native)}
}

// TruncationWindowFrom is where TruncationWindow came from.
func (d Result) TruncationWindowFrom() client.WindowOrigin {
	if d.Advertised > 0 && d.TruncationWindow == d.Advertised {
		return client.WindowOrigin{Source: d.AdvertisedSource, Trained: d.AdvertisedSource == sourceShow}
	}
	return client.WindowOrigin{Source: sourceMaxModelLen, Declared: true}
}

// Record is anvil_go.context_window.
func (d Result) Record() *artifact.ContextWindow {
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

// ModelsTimeout bounds GET /models, or the request timeout
// (Workload.Timeout) when that is shorter: an idle server lists its
// models in milliseconds, a loaded one in seconds, so a server that
// accepts the connection and sends nothing for this long is named within
// half a minute instead of after the 15-minute request timeout, with
// nothing printed meanwhile.
const ModelsTimeout = 30 * time.Second

// probeWithin runs the model probe bounded by the smaller of timeout
// (Workload.Timeout) and ModelsTimeout, so an endpoint that never answers
// GET /models cannot hold Run.
func probeWithin(ctx context.Context, cfg Config, timeout time.Duration) (modelInfo, error) {
	bound, which := timeout, "Workload.Timeout = "+timeout.String()
	if ModelsTimeout < timeout {
		bound, which = ModelsTimeout, fmt.Sprintf("%v, the bound of GET /models (Workload.Timeout lowers it)", ModelsTimeout)
	}
	pctx, cancel := context.WithTimeoutCause(ctx, bound, errProbeTimeout)
	defer cancel()
	info, err := probeModel(pctx, cfg)
	if err != nil && ctx.Err() == nil && context.Cause(pctx) == errProbeTimeout {
		return modelInfo{}, fmt.Errorf("%w (no answer within %s: the server took the request and sent nothing; is it serving, and is Target.BaseURL its API root?)", err, which)
	}
	return info, err
}

// apiRootHint is what a discovery whose GET /models was refused with a
// 404 adds when the same server answers {BaseURL}/v1/models with a model
// list: a base URL without its /v1, the commonest slip. It returns that
// API root (without userinfo) and the hint; "", "" when BaseURL already
// ends in /v1 or /v1/models is no model list either. The question is
// bounded by nativeStepTimeout.
func apiRootHint(ctx context.Context, cfg Config) (root, hint string) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if strings.HasSuffix(base, "/v1") {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(ctx, min(cfg.Timeout, nativeStepTimeout))
	defer cancel()
	info, err := probeModel(ctx, Config{Client: cfg.Client, BaseURL: base + "/v1", Model: cfg.Model, Timeout: cfg.Timeout})
	if err != nil {
		return "", ""
	}
	where := base + "/v1"
	if u, err := url.Parse(where); err == nil {
		where = client.RedactedURL(u)
	}
	return where, fmt.Sprintf("; did you mean %s? Its /models lists %s: Target.BaseURL is the API root, the path /chat/completions and /models hang from, /v1 included",
		where, listedModels(info.Listed))
}

// listedModels names the first few ids of a model list.
func listedModels(ids []string) string {
	const shown = 3
	quoted := make([]string, 0, shown)
	for _, id := range ids[:min(len(ids), shown)] {
		quoted = append(quoted, fmt.Sprintf("%q", id))
	}
	s := strings.Join(quoted, ", ")
	if len(ids) > shown {
		s += fmt.Sprintf(" and %d more", len(ids)-shown)
	}
	return s
}
