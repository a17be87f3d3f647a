package trace

import (
	"path/filepath"
	"strings"

	"github.com/anvilbench/anvil/capacity/internal/field"
)

// Format is the Option that names a trace's file format: "mooncake",
// "azure" or "jsonl". Without it (or with Format("")) NewReader tells the
// format from the file's name: a name ending in .csv is azure; a .jsonl
// name holding "mooncake" (any case) is mooncake, any other .jsonl name
// is jsonl.
type Format string

// The formats a Reader reads.
const (
	// formatAuto tells the format from the file name.
	formatAuto Format = ""
	// formatMooncake is the JSONL of the Mooncake traces (kvcache-ai/Mooncake,
	// FAST25-release/traces): one object a line with timestamp (ms),
	// input_length, output_length and hash_ids (512-token blocks).
	formatMooncake Format = "mooncake"
	// formatAzure is the CSV of the Azure LLM inference traces
	// (Azure/AzurePublicDataset): a header, then TIMESTAMP (a date-time),
	// ContextTokens and GeneratedTokens.
	formatAzure Format = "azure"
	// formatJSONL is anvil's own JSONL for users' logs; the package
	// documentation lists its keys.
	formatJSONL Format = "jsonl"
)

// wantFormat is the allowed range of a Format, for messages.
const wantFormat = `"mooncake", "azure" or "jsonl"`

// Check returns the error NewReader would report for f: nil for a known
// format or "", else a *capacity.FieldError naming it (what
// ANVIL_TRACE_FORMAT accepts).
func (f Format) Check() error {
	switch f {
	case formatAuto, formatMooncake, formatAzure, formatJSONL:
		return nil
	}
	return &field.Error{Pkg: pkg, Kind: errInvalid, Field: "format", Value: string(f), Rule: "must be " + wantFormat}
}

func (f Format) apply(o *options) error {
	if err := o.once("Format"); err != nil {
		return err
	}
	if err := f.Check(); err != nil {
		return err
	}
	o.format = f
	return nil
}

// formatOf tells a trace's format from its file name (see Format); false
// when the name does not tell.
func formatOf(name string) (Format, bool) {
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(base, ".csv"):
		return formatAzure, true
	case strings.HasSuffix(base, ".jsonl") && strings.Contains(base, "mooncake"):
		return formatMooncake, true
	case strings.HasSuffix(base, ".jsonl"):
		return formatJSONL, true
	}
	return formatAuto, false
}
