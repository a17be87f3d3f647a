package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDisplayURL: the userinfo dropped, every query and fragment value
// redacted with its name kept, and text that is no URL shown as written.
func TestDisplayURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://localhost:8000/v1", "http://localhost:8000/v1"},
		{"https://user:sk-secret@h.example/v1", "https://h.example/v1"},
		{"https://h/v1?api_key=sk-secret&x", "https://h/v1?api_key=[redacted]&[redacted]"},
		{"https://h/v1#token=abc", "https://h/v1#token=[redacted]"},
		{"h.example:8000/v1?key=k", "h.example:8000/v1?key=[redacted]"},
		{"user:pw@h/v1", "h/v1"},
		{" http://h/v1 ", " http://h/v1 "},
		{"", ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, DisplayURL(tt.in), "DisplayURL(%q)", tt.in)
	}
}
