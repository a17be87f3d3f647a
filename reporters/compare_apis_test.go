package reporters

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// withAPI is the seed artifact as a run over api, read back from its
// JSON as anvilreport reads one.
func withAPI(t *testing.T, api string) *artifact.Report {
	t.Helper()
	raw, err := os.ReadFile(seedPath)
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var doc map[string]any
	require.NoError(t, d.Decode(&doc))
	doc["anvil_go"] = map[string]any{"version": json.Number("1"), "run": map[string]any{"api": api}}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	r, err := artifact.Read(bytes.NewReader(b))
	require.NoError(t, err)
	require.Equal(t, api, artifact.APIOf(r))
	return r
}

func TestCompareAcrossAPIs(t *testing.T) {
	chat, responses := withAPI(t, "chat"), withAPI(t, "responses")
	_, err := Compare([]*artifact.Report{chat}, []*artifact.Report{responses})
	var nc *NotComparableError
	require.ErrorAs(t, err, &nc, "Compare refuses two APIs")
	require.Equal(t, apiKey, nc.Diffs[0].Key)

	c, err := CompareAcrossAPIs([]*artifact.Report{chat}, []*artifact.Report{responses})
	require.NoError(t, err)
	assert.Equal(t, [2]string{"chat", "responses"}, c.APIs)
	assert.Equal(t, []string{byDefinitionFraming, byDefinitionResponsesUsage}, c.ByDefinition)
	var b strings.Builder
	require.NoError(t, WriteComparison(&b, c))
	assert.Contains(t, b.String(), "across APIs: old chat  new responses; by definition these differ:\n  - framing: ")

	c, err = CompareAcrossAPIs([]*artifact.Report{withAPI(t, "messages")}, []*artifact.Report{withAPI(t, "completions")})
	require.NoError(t, err)
	assert.Equal(t, []string{byDefinitionFraming, byDefinitionRawPrompt, byDefinitionMessagesUsage}, c.ByDefinition)

	// One API on both sides: an ordinary comparison.
	c, err = CompareAcrossAPIs([]*artifact.Report{loadReport(t, seedPath)}, []*artifact.Report{chat})
	require.NoError(t, err)
	assert.Empty(t, c.ByDefinition)

	_, err = CompareAcrossAPIs([]*artifact.Report{chat}, []*artifact.Report{withAPI(t, "embeddings")})
	require.Error(t, err)
	assert.False(t, errors.As(err, &nc))
	assert.Contains(t, err.Error(), "compares only with embeddings")

	// The runs of one side speak one API.
	_, err = CompareAcrossAPIs([]*artifact.Report{chat, responses}, []*artifact.Report{chat})
	require.ErrorAs(t, err, &nc)
	assert.Equal(t, [2]string{"old run 1", "old run 2"}, nc.Sides)

	// Every other identity key still refuses.
	other := withAPI(t, "responses")
	other.Concurrency++
	_, err = CompareAcrossAPIs([]*artifact.Report{chat}, []*artifact.Report{other})
	require.ErrorAs(t, err, &nc)
	assert.Equal(t, "concurrency", nc.Diffs[0].Key)
}

// TestWorkloadIdentityAPI: a run over another API than chat says so in
// the .bench workload, so benchstat never mixes it with a chat run.
func TestWorkloadIdentityAPI(t *testing.T) {
	chat := workloadIdentity(loadReport(t, seedPath))
	assert.Equal(t, chat, workloadIdentity(withAPI(t, "chat")))
	assert.Equal(t, "api=messages "+chat, workloadIdentity(withAPI(t, "messages")))
}

// TestByDefinitionDocumented: every sentence a cross-API comparison
// prints is the one capacity/PROTOCOL.md#comparing-apis documents.
func TestByDefinitionDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "capacity", "PROTOCOL.md"))
	require.NoError(t, err)
	text := strings.ReplaceAll(string(doc), "`", "")
	for _, s := range []string{byDefinitionFraming, byDefinitionRawPrompt, byDefinitionMessagesUsage, byDefinitionResponsesUsage} {
		assert.Contains(t, text, s, "PROTOCOL.md lacks the sentence")
	}
}
