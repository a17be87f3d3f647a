package servermetrics

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Off, as the override of EndpointURL (ANVIL_METRICS_URL=off, say),
// disables the sampler.
const Off = "off"

// defaultPath is the path of the metrics endpoint vLLM, SGLang, llama.cpp
// (with --metrics) and TGI serve, at the server's root.
const defaultPath = "/metrics"

// errInvalidConfig is the Kind of every error about a bad Config or URL,
// a *capacity.FieldError naming the field, its value and
// what is allowed.
var errInvalidConfig = errors.New("servermetrics: invalid configuration")

// configError is the *field.Error of a bad Config field or URL.
func configError(name string, value any, rule string, err error) *field.Error {
	return &field.Error{Pkg: "servermetrics", Field: name, Value: value, Rule: rule, Kind: errInvalidConfig, Err: err}
}

// EndpointURL returns the metrics endpoint of a run against baseURL (the
// OpenAI-compatible root, usually ending in /v1): override when set (an
// http or https URL), "" when override is Off, else /metrics at the
// server's root: baseURL without a trailing "/v1", as the engine's other
// native endpoints (/tokenize, /props) are found, so
// "http://gpu-box:8000/v1" gives "http://gpu-box:8000/metrics". The
// result may hold baseURL's userinfo (it is what the GET uses); the
// artifact records it without (see Sampler).
func EndpointURL(baseURL, override string) (string, error) {
	switch {
	case strings.EqualFold(override, Off):
		return "", nil
	case override != "":
		if _, err := checkURL("override", override); err != nil {
			return "", err
		}
		return override, nil
	}
	if _, err := checkURL("base URL", baseURL); err != nil {
		return "", err
	}
	root := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
	return root + defaultPath, nil
}

// checkURL parses raw as an http or https URL with a host; the error never
// repeats raw, which may hold credentials.
func checkURL(name, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the input
		}
		return nil, configError("metrics "+name, nil, "must parse", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, configError("metrics "+name, nil, fmt.Sprintf("must be an http or https URL with a host, or %q", Off), nil)
	}
	return u, nil
}

// recordedEndpoint returns the form of the metrics URL the artifact records:
// without userinfo, query or fragment, then passed through scrub (the
// run's redactor, which removes every credential it knows; nil for none).
func recordedEndpoint(raw string, scrub func(string) string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable URL]"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	if scrub == nil {
		return u.String()
	}
	return scrub(u.String())
}
