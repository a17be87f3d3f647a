package artifact

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkMarshalSeed writes the seed artifact: every string of a real
// report goes through the artifact's string encoder.
func BenchmarkMarshalSeed(b *testing.B) {
	data, err := os.ReadFile(seedPath)
	require.NoError(b, err)
	var r Report
	require.NoError(b, r.UnmarshalJSON(data))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := r.writeTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEscapeText is a failure message as servers send them: mostly ASCII,
// quotes, line ends and some non-ASCII text.
var benchEscapeText = strings.Repeat("HTTP 500: {\"error\": {\"message\": \"upstream \\ failed\\n\", \"type\": \"server_error\"}}\tdétail 世界\n", 20)

// BenchmarkArtifactString encodes a server message as the artifact does.
func BenchmarkArtifactString(b *testing.B) {
	e := artEncoder{buf: make([]byte, 0, 4*len(benchEscapeText))}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEscapeText)))
	for b.Loop() {
		e.buf = e.buf[:0]
		e.string(benchEscapeText)
	}
}
