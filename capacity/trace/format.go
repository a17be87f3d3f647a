package trace

import (
	"path/filepath"
	"strings"
)

// Format is a trace file format. The zero value, Auto, asks NewReader to
// tell the format from the file's name (see FormatOf).
type Format string

// The formats a Reader reads.
const (
	// Auto tells the format from the file name.
	Auto Format = ""
	// Mooncake is the JSONL of the Mooncake traces (kvcache-ai/Mooncake,
	// FAST25-release/traces): one object a line with timestamp (ms),
	// input_length, output_length and hash_ids (512-token blocks).
	Mooncake Format = "mooncake"
	// Azure is the CSV of the Azure LLM inference traces
	// (Azure/AzurePublicDataset): a header, then TIMESTAMP (a date-time),
	// ContextTokens and GeneratedTokens.
	Azure Format = "azure"
	// JSONL is anvil's own JSONL for users' logs; the package
	// documentation lists its keys.
	JSONL Format = "jsonl"
)

// wantFormat is the allowed range of a Format, for messages.
const wantFormat = `"mooncake", "azure" or "jsonl"`

// ParseFormat returns the Format named s: "mooncake", "azure" or "jsonl"
// (the values of ANVIL_TRACE_FORMAT). The empty string is Auto. Anything
// else is a *FieldError.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Auto, Mooncake, Azure, JSONL:
		return f, nil
	}
	return Auto, &FieldError{Field: "format", Value: s, Want: wantFormat}
}

// FormatOf tells a trace's format from its file name: a name ending in
// .csv is Azure; a .jsonl name holding "mooncake" (any case) is Mooncake,
// any other .jsonl name is JSONL. The second result is false when the
// name does not tell; give the format explicitly then.
func FormatOf(name string) (Format, bool) {
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(base, ".csv"):
		return Azure, true
	case strings.HasSuffix(base, ".jsonl") && strings.Contains(base, "mooncake"):
		return Mooncake, true
	case strings.HasSuffix(base, ".jsonl"):
		return JSONL, true
	}
	return Auto, false
}
