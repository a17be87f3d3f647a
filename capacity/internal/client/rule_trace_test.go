package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestRuleTraceCallsEveryHookOnce sends requests through a ConnectionRule
// with a request trace handed to the rule (withRuleTrace), alone and under
// a trace of the caller's own (httptrace.WithClientTrace): every hook of
// each is called once per request, the rule's own watch still sees the
// attempt, and a second request reports its connection reused.
func TestRuleTraceCallsEveryHookOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rule := NewConnectionRule(tr)

	counting := func(calls map[string]int, reused *[]bool) *httptrace.ClientTrace {
		return &httptrace.ClientTrace{
			GetConn:              func(string) { calls["GetConn"]++ },
			ConnectStart:         func(string, string) { calls["ConnectStart"]++ },
			ConnectDone:          func(string, string, error) { calls["ConnectDone"]++ },
			GotConn:              func(i httptrace.GotConnInfo) { calls["GotConn"]++; *reused = append(*reused, i.Reused) },
			WroteRequest:         func(httptrace.WroteRequestInfo) { calls["WroteRequest"]++ },
			GotFirstResponseByte: func() { calls["GotFirstResponseByte"]++ },
		}
	}
	for _, outer := range []bool{false, true} {
		tr.CloseIdleConnections()
		inner, user := map[string]int{}, map[string]int{}
		var innerReused, userReused []bool
		for range 2 {
			ctx := withRuleTrace(t.Context(), counting(inner, &innerReused))
			if outer {
				ctx = httptrace.WithClientTrace(ctx, counting(user, &userReused))
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := rule.RoundTrip(req)
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
		}
		want := map[string]int{"GetConn": 2, "ConnectStart": 1, "ConnectDone": 1, "GotConn": 2, "WroteRequest": 2, "GotFirstResponseByte": 2}
		require.Empty(t, cmp.Diff(want, inner), "the request's trace (outer trace %v)", outer)
		require.Equal(t, []bool{false, true}, innerReused)
		if outer {
			require.Empty(t, cmp.Diff(want, user), "the caller's own trace")
			require.Equal(t, []bool{false, true}, userReused)
		} else {
			require.Empty(t, user)
		}
	}
	require.Zero(t, rule.KeptAliveClosed())
}

// TestConnTraceUnderRuleRecordsPhases sends one request through a Client
// whose transport is a ConnectionRule and one through a plain transport:
// both fill the same phases of the row, through the rule's trace and
// through the request's own httptrace.
func TestConnTraceUnderRuleRecordsPhases(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, underRule := range []bool{false, true} {
		tr := &http.Transport{}
		var rt http.RoundTripper = tr
		if underRule {
			rt = NewConnectionRule(tr)
		}
		var ct connTrace
		ctx := ct.attach(context.Background(), underRule)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		ct.start = time.Now()
		resp, err := (&http.Client{Transport: rt}).Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		a := ct.cur
		require.GreaterOrEqual(t, a.dialStart, int64(0), "under rule %v: dial start", underRule)
		require.GreaterOrEqual(t, a.dialDone, a.dialStart, "under rule %v", underRule)
		require.GreaterOrEqual(t, a.gotConn, a.dialDone, "under rule %v", underRule)
		require.GreaterOrEqual(t, a.wrote, a.gotConn, "under rule %v", underRule)
		require.GreaterOrEqual(t, a.firstByte, a.wrote, "under rule %v", underRule)
		require.False(t, a.reused)
		require.Equal(t, 1, ct.attempts)
		tr.CloseIdleConnections()
	}
}
