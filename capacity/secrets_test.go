package capacity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// TestHeaderCredentialsNeverRecorded: credentials passed as Target.Headers
func TestHeaderCredentialsNeverRecorded(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, "rejected: auth=%q key=%q team=%q token=%s",
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Team"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	})
	synctest.Test(t, func(t *testing.T) {
		tg := pipeTarget(t, echo)
		tg.Headers = http.Header{"Authorization": {"Bearer sk-header-secret"}, "X-Api-Key": {"key-0123456789"}, "X-Team": {"bench"}}
		rep, err := Run(t.Context(), tg, Workload{Requests: 1, Concurrency: 1, ContextTokens: 512})
		require.NoError(t, err)
		require.Len(t, rep.Failures, 1)
		require.Equal(t, `HTTP 500 Internal Server Error: rejected: auth="[redacted]" key="[redacted]" team="[redacted]" token=[redacted]`, rep.Failures[0].ErrorMessage)
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		require.NotContains(t, string(b), "sk-header-secret")
		require.NotContains(t, string(b), "key-0123456789")
	})
}
