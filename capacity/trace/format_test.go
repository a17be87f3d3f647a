package trace

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormat(t *testing.T) {
	for name, want := range map[string]Format{
		"a/b/Mooncake_conv.jsonl": formatMooncake, "x.CSV": formatAzure, "logs.jsonl": formatJSONL, "x.json": formatAuto,
	} {
		got, ok := formatOf(name)
		require.Equal(t, want, got, name)
		require.Equal(t, want != formatAuto, ok, name)
	}
	require.NoError(t, Format("azure").Check())
	require.NoError(t, Format("").Check())
	err := Format("sharegpt").Check()
	require.EqualError(t, err, `trace: format = "sharegpt": must be "mooncake", "azure" or "jsonl"`)
	require.ErrorIs(t, err, errInvalid)
}
