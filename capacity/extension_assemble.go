package capacity

import (
	"github.com/anvilbench/anvil/capacity/artifact"
	"github.com/anvilbench/anvil/capacity/internal/client"
	"github.com/anvilbench/anvil/capacity/internal/steady"
)

// connectionsOf is anvil_go.connections of a run, but for the counts
// taken from its requests' phases (extendReport adds them).
func connectionsOf(r *runner) *artifact.Connections {
	c := &artifact.Connections{Prewarmed: r.prewarmed}
	if rule := r.cl.Rule(); rule != nil {
		c.KeptAliveClosed, c.ReuseDisabled = rule.KeptAliveClosed(), rule.ReuseDisabled()
	}
	return c
}

// extendReport fills the anvil_go object of a run's report from its
// measured results (sorted by request index) and the indexes planned but
// never sent.
func extendReport(rep *artifact.Report, f runFacts, results []result, unsent []int) {
	x := rep.Extension()
	api := f.target.apiOf()
	x.Run = &artifact.RunSummary{
		API:               &api,
		NeverSentRequests: len(unsent),
		Interrupted:       f.cancelled || f.runner.stopped,
	}
	if api == apiEmbeddings {
		why := absentTimingsEmbeddings
		x.Run.AbsentTimings = &why
	}
	x.Run.RecordBuild() // the binary that measured: module version, revision, Go
	x.PromptSizing = promptSizingOf(f.plan, results)
	x.ChunkTiming = client.ChunkTimingOf(f.runner.chunks)
	x.Connections = connectionsOf(f.runner)
	x.Requests = make([]artifact.RequestDetail, 0, len(results)+len(unsent))
	if reason := f.runner.earlyStop; reason != "" {
		x.Run.StopReason = &reason
	}
	if w := f.workload; w.Duration > 0 && !w.OpenLoop() {
		ms := client.MS(w.Duration)
		x.Run.DurationMS = &ms
	}
	for _, res := range results {
		c := res.clock
		d := artifact.RequestDetail{
			RequestIndex:        res.index,
			Outcome:             artifact.OutcomeSuccess,
			PlannedPromptTokens: f.plan.Contexts[res.index],
			CountedPromptTokens: res.promptTokens,
			ServerTimings:       res.serverTimings,
		}
		c.SetDetail(&d, f.start)
		if res.least > d.PlannedPromptTokens {
			least := res.least
			d.LeastPromptTokens = &least
		}
		client.SetChunkDetail(&d, res.chunks)
		if sf := res.source; sf != nil {
			if sf.session != "" {
				session, turn := sf.session, sf.turn+1
				d.Session, d.Turn = &session, &turn
			}
			maxTokens := sf.maxTokens
			d.PlannedOutputTokens, d.CountedOutputTokens, d.CachedPromptTokens = &maxTokens, sf.completion, sf.cached
		}
		if p := res.phases; p != nil {
			d.Phases = p
			if p.Retried {
				x.Connections.Retried++
			}
			if !p.Reused {
				x.Connections.DialedInMeasurement++
			}
		}
		if res.fail != nil {
			d.Outcome = string(res.fail.FailureClass)
			d.ScheduledTTFTMS, d.ScheduledE2EMS = nil, nil
		}
		if !c.Sent.IsZero() {
			x.Run.SentRequests++
		}
		x.Requests = append(x.Requests, d)
	}
	x.PromptSizing.CheckPlan(x.Requests, rep.Failures)
	x.Arrival = arrivalOf(f, results, len(results)+len(unsent))
	for _, i := range unsent {
		x.Requests = append(x.Requests, artifact.RequestDetail{
			RequestIndex: i, Outcome: artifact.OutcomeNeverSent, PlannedPromptTokens: f.plan.Contexts[i],
		})
	}
	x.Steady = steady.OfReport(rep, f.runner.steadyLoad())
}
