package capacity

import (
	"net/http"
	"testing"

	"github.com/anvilbench/anvil/capacity/internal/pipenet"
)

// servePipe serves h over an in-memory transport (package pipenet) and
// returns a client for it; the server and the client's connections are
// closed at cleanup.
func servePipe(t testing.TB, h http.Handler) *http.Client {
	s := pipenet.NewServer(h)
	t.Cleanup(s.Close)
	return s.Client()
}
