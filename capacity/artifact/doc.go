// Package artifact is the anvil-serving.benchmark/v1 capacity artifact: the
// document a capacity run produces, its exact JSON codec, and Recompute,
// which derives every metric of the document from its own request timings.
// It is to the engine in package capacity what benchfmt is to benchstat: a
// model and a codec that readers of results (package reporters, the
// anvilreport command) use without linking an HTTP client.
//
// There is one way in and one way out:
//
//	r, err := artifact.Read(f) // any generation, keys kept as read
//	_, err = r.WriteTo(w)      // the artifact bytes
//	err = r.WriteFile(path)    // atomic: temporary file, sync, rename
//
// Report also implements json.Marshaler and json.Unmarshaler, so a Report
// embedded in other JSON is still the artifact (compacted by encoding/json).
//
// The bytes are what Python's json.dump(indent=2, sort_keys=True,
// ensure_ascii=False) writes, so artifacts of this module and of the
// reference tool compare byte for byte. A Report read from JSON remembers
// which keys its document had at every level and keeps unknown keys (the
// anvil_go extension of a newer writer, say) verbatim, so a legacy artifact
// round-trips unchanged. Every key is listed, with its meaning, in the
// protocol reference, capacity/PROTOCOL.md#artifact-keys.
//
// Reading the code:
//
//   - report.go, row.go, metrics.go: the document's types, one Go field per
//     key (the field comments name the key); metrics.go also has the naming
//     rule of the 159 distribution keys (family, statistic).
//   - recompute.go: Recompute, the protocol's arithmetic (distributions via
//     package stats, eligibility, population accounting).
//   - schema.go: the key tables of every object; one table per type drives
//     both writing and reading.
//   - extension_observers.go, schema_observers.go: the anvil_go members
//     the run's observers write (server_metrics, audit) and their tables.
//   - codec_table.go, codec_values.go: the table-driven encoder and decoder
//     and the per-type value codecs; json_scan.go splits a validated
//     document into members without decoding it twice; key_presence.go is
//     the remembered key set.
//   - json.go: Report's json.Marshaler and json.Unmarshaler.
//   - file.go: Read, Report.WriteTo and Report.WriteFile, and the
//     MaxBytes bound; atomic_file.go: WriteFile and CreateFile, the
//     module's one atomic writer, which every output goes through.
//   - shard.go: the anvil_go members of a workload run as shards (one
//     process or machine each) and of the artifact package capacity/merge
//     makes of them (capacity/PROTOCOL.md#merging-shards).
//   - workload.go: the members of a trace or sessions workload.
package artifact
