package reporters

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/anvilbench/anvil/capacity/artifact"
)

// Why it got slow: the lines the benchmark log, the summary and the HTML
// header show of anvil_go.audit and anvil_go.server_metrics
// (capacity/PROTOCOL.md#anvil-go). Every string read from the artifact
// is printed through Printable.

// auditOf returns r's self-audit, or nil.
func auditOf(r *artifact.Report) *artifact.Audit {
	if r.AnvilGo == nil {
		return nil
	}
	return r.AnvilGo.Audit
}

// suspect reports whether r's client audited itself suspect: its timings
// may be the client's, not the server's.
func suspect(r *artifact.Report) bool {
	return auditOf(r).Suspect()
}

// auditAdvice ends a suspect audit's line: what the user can do about a
// client that distorted its own timings.
const auditAdvice = "the client, not the server, may have made these numbers: " +
	"rerun with nothing else busy on the machine, one test package at a time (go test -p 1), " +
	"and GOMAXPROCS no higher than the cores the client really has"

// auditLine is the audit's verdict in one line: "client audit ok (...)"
// with the scheduler latency, wake-up lag, GC pauses and CPU share it
// judged, or "client audit SUSPECT: ", the reasons and auditAdvice; ""
// without an audit.
func auditLine(r *artifact.Report) string {
	a := auditOf(r)
	if a == nil {
		return ""
	}
	if a.Suspect() {
		return "client audit SUSPECT: " + Printable(strings.Join(a.Reasons, "; ")) + "; " + auditAdvice
	}
	cpu := "-"
	if a.CPUShare != nil {
		cpu = fmt.Sprintf("%.0f%%", *a.CPUShare*100)
	}
	return fmt.Sprintf("client audit %s (scheduler latency p99 %s ms, max %s ms; wake-ups late by %s ms at the median; %d GC pauses, max %s ms; CPU %s of %d cores)",
		Printable(a.Verdict), num(a.SchedLatencyP99MS), num(a.SchedLatencyMaxMS), num(a.WakeLagP50MS), a.GCPauses, num(a.GCPauseMaxMS), cpu, a.GOMAXPROCS)
}

// crossCheckLines are the server-metrics cross-checks, one line each
// (the server's generation-token counter against the run's usage, the
// server's mean TTFT against the client's with their difference, the
// network and the client; its speculative decoding), then the GPU
// endpoints' and the energy's (energy.go); nil without any of them.
func crossCheckLines(r *artifact.Report) []string {
	out := serverLines(r)
	if l := specLine(r); l != "" {
		out = append(out, l)
	}
	out = append(out, gpuLines(r)...)
	if l := energyLine(r); l != "" {
		out = append(out, l)
	}
	return out
}

// serverLines are the server-metrics line and its cross-checks; nil
// without server metrics.
func serverLines(r *artifact.Report) []string {
	if r.AnvilGo == nil || r.AnvilGo.ServerMetrics == nil {
		return nil
	}
	m := r.AnvilGo.ServerMetrics
	engine := "-"
	if m.Engine != nil {
		engine = Printable(*m.Engine)
	}
	line := fmt.Sprintf("server metrics %s (%s): %d samples every %s ms, %d failed",
		Printable(m.Endpoint), engine, m.Samples, num(&m.IntervalMS), m.Failed)
	if m.Failed > 0 && m.LastError != nil {
		line += " (last: " + lastFailure(m.Endpoint, *m.LastError) + ")"
	}
	out := []string{line}
	if m.Checks == nil {
		return out
	}
	if g := m.Checks.GenerationTokens; g != nil {
		line := fmt.Sprintf("server tokens %s +%.0f vs usage %d: difference %.0f (allowance %.0f): %s",
			Printable(g.Counter), g.ServerIncrease, g.ClientTokens, g.Difference, g.Allowance, Printable(g.Verdict))
		if g.Reason != nil {
			line += ": " + Printable(*g.Reason)
		}
		out = append(out, line)
	}
	if c := m.Checks.TTFT; c != nil {
		out = append(out, fmt.Sprintf("server TTFT mean %s ms (%.0f requests) vs client %s ms: network + client %s ms",
			num(&c.ServerMeanMS), c.ServerRequests, num(&c.ClientMeanMS), num(&c.NetworkAndClientMS)))
	}
	return out
}

// maxFailureBytes bounds the server-metrics failure quoted in a line.
const maxFailureBytes = 160

// lastFailure is a server-metrics sample's failure (last_error, which the
// sampler recorded scrubbed of the run's credentials) as the metrics line
// quotes it: without the "GET <endpoint>: " the line already names, cut
// to maxFailureBytes on a character boundary, made Printable.
func lastFailure(endpoint, msg string) string {
	msg = strings.TrimPrefix(msg, "GET "+endpoint+": ")
	if len(msg) > maxFailureBytes {
		n := maxFailureBytes
		for n > 0 && !utf8.RuneStart(msg[n]) {
			n--
		}
		msg = msg[:n] + "…"
	}
	return Printable(msg)
}
