package h1_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/internal/wiretest"
)

// TestRealCaptures replays the response of every real engine's capture
// (testdata/transcripts: its head byte for byte, its body in the head's
// framing, chunked in 1000-byte chunks) and requires h1 to decode it as
// net/http does: status, head, framing and body.
func TestRealCaptures(t *testing.T) {
	dir := wiretest.Transcripts(t)
	heads, err := filepath.Glob(filepath.Join(dir, "*.headers"))
	require.NoError(t, err)
	require.Greater(t, len(heads), 50)
	for _, path := range heads {
		base := strings.TrimSuffix(path, ".headers")
		t.Run(filepath.Base(base), func(t *testing.T) {
			head, err := os.ReadFile(path)
			require.NoError(t, err)
			var body []byte
			for _, ext := range []string{".sse", ".json"} {
				if b, err := os.ReadFile(base + ext); err == nil {
					body = b
				}
			}
			wire := append([]byte(nil), head...)
			if bytes.Contains(bytes.ToLower(head), []byte("transfer-encoding: chunked")) {
				for rest := body; len(rest) > 0; {
					n := min(len(rest), 1000)
					wire = fmt.Appendf(wire, "%x\r\n%s\r\n", n, rest[:n])
					rest = rest[n:]
				}
				wire = append(wire, "0\r\n\r\n"...)
			} else {
				wire = append(wire, body...)
			}
			srv := startScript(t, func(c net.Conn, _ *bufio.Reader, req *http.Request, _ int) bool {
				drained(req)
				_, _ = c.Write(wire)
				return false
			})
			got := map[string]exchange{}
			for name, rt := range both(t, nil) {
				ex, err := send(t, t.Context(), rt, http.MethodPost, srv.URL, `{"stream":true}`)
				require.NoError(t, err, name)
				got[name] = ex
			}
			require.NotZero(t, got["h1"].Status)
			require.Equal(t, string(body), got["h1"].Body)
			if diff := cmp.Diff(got["net/http"], got["h1"]); diff != "" {
				t.Errorf("(-net/http +h1):\n%s", diff)
			}
		})
	}
}
