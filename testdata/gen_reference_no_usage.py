#!/usr/bin/env python3
"""Writes reference-no-usage-capacity-v3.json: an artifact shaped exactly as
the reference tool writes it for a server that sends no usage (such as
@dwmkerr/mock-llm 0.1.29): every row's output_tokens and prompt_tokens null
with output_token_source content_chunks, the exact-token fields null, the
run's token totals null and content_chunks_s set. The key set is the seed's
(seed-capacity-v4-reasoning.json); the statistics are computed here with
Python's own arithmetic, independently of the Go code that recomputes them:
mean = fsum / n, stddev = the correctly rounded square root of the exact
sample variance, CI = mean -/+ (1.96 * stddev) / sqrt(n), nearest-rank
percentiles. Run from the repository root: python3 testdata/gen_reference_no_usage.py
"""
import json
import math
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 60

seed = json.load(open("testdata/seed-capacity-v4-reasoning.json"))

# (ttfo, ttft, e2e, content_chunks) per request: no reasoning, so TTFO = TTFT.
raw = [(41.25, 41.25, 230.5, 6), (38.125, 38.125, 251.75, 6), (44.5, 44.5, 219.0625, 5), (40.0, 40.0, 240.375, 6)]
rows = []
for i, (ttfo, ttft, e2e, chunks) in enumerate(raw):
    rows.append({
        "content_chunks": chunks, "controlled_output": None, "decode_tok_s": None,
        "e2e_ms": e2e, "effective_prefill_tok_s": None, "generation_ms": e2e - ttfo,
        "mean_inter_token_latency_ms": None, "mean_time_per_output_token_ms": None,
        "output_token_source": "content_chunks", "output_tokens": None,
        "planned_context_tokens": 512, "prompt_tokens": None, "reasoning_chunks": 0,
        "request_canary": None, "request_index": i, "time_to_first_output_ms": ttfo,
        "tpot_ms": None, "ttft_ms": ttft, "visible_content_truncated": False,
        "visible_generation_ms": e2e - ttft,
    })
assert sorted(rows[0]) == sorted(seed["request_timings"][0]), "the seed's row keys"


def stats(xs):
    n = len(xs)
    out = {"samples": n}
    keys = ["mean", "stddev", "mean_ci95_low", "mean_ci95_high", "min", "p25", "p50", "p75", "p90", "p95", "p99", "max"]
    if n == 0:
        out.update({k: None for k in keys})
        return out
    mean = math.fsum(xs) / n
    out["mean"] = mean
    if n > 1:
        fr = [Fraction(x) for x in xs]
        m = sum(fr) / n
        var = sum((x - m) ** 2 for x in fr) / (n - 1)
        sd = float((Decimal(var.numerator) / Decimal(var.denominator)).sqrt())
        out["stddev"] = sd
        out["mean_ci95_low"] = mean - (1.96 * sd) / math.sqrt(n)
        out["mean_ci95_high"] = mean + (1.96 * sd) / math.sqrt(n)
    else:
        out["stddev"] = out["mean_ci95_low"] = out["mean_ci95_high"] = None
    s = sorted(xs)
    out["min"], out["max"] = s[0], s[-1]
    for p in (25, 50, 75, 90, 95, 99):
        out["p%d" % p] = s[max(1, (p * n + 99) // 100) - 1]
    return out


ms_families = {"e2e": "e2e_ms", "generation": "generation_ms", "mean_time_per_output_token": "mean_time_per_output_token_ms",
               "time_to_first_output": "time_to_first_output_ms", "tpot": "tpot_ms", "ttft": "ttft_ms"}
plain_families = {"completion_tokens": "output_tokens", "prompt_tokens": "prompt_tokens", "decode_tok_s": "decode_tok_s",
                  "effective_prefill_tok_s": "effective_prefill_tok_s", "mean_inter_token_latency_ms": "mean_inter_token_latency_ms"}
metrics = {}
for fam, key in list(ms_families.items()) + list(plain_families.items()):
    st = stats([r[key] for r in rows if r[key] is not None])
    for k, v in st.items():
        name = fam + "_" + k if (fam in plain_families or k == "samples") else fam + "_" + k + "_ms"
        metrics[name] = v

wall_ms = 1015.75
content = sum(r["content_chunks"] for r in rows)
metrics.update({
    "content_chunks": content, "content_chunks_s": content / (wall_ms / 1000),
    "controlled_output_exact_adherence": 0, "controlled_output_exact_adherence_rate": None,
    "controlled_output_samples": 0, "controlled_output_unobservable": 0,
    "output_token_sources": {"content_chunks": len(rows)}, "output_tokens": None,
    "prefix_cache_hit_avg": None, "prompt_token_samples": 0, "prompt_tokens": None,
    "reasoning_chunks": 0, "request_canary_passed": 0, "request_canary_samples": 0,
    "throughput_performance_eligible": False, "throughput_tok_s": None,
})
assert sorted(metrics) == sorted(seed["metrics"]), set(metrics) ^ set(seed["metrics"])

interp = "descriptive-nearest-rank-only"
p99 = {"decode_tok_s": 0, "e2e": len(rows), "effective_prefill_tok_s": 0, "tpot": 0, "ttft": len(rows)}
doc = dict(seed)
doc.update({
    "base_url": "http://127.0.0.1:8000/v1", "completed": len(rows), "concurrency": 2,
    "context_distribution": {"512": len(rows)}, "context_seed": 0, "context_tokens": 512,
    "controlled_output_policy": "observe", "engine": "mock-llm-0.1.29", "failed": 0, "failures": [],
    "finished_at": "2026-11-30T12:00:01Z", "finished_at_unix_ns": 1796040001015750000,
    "gpu": None, "manifest": None, "max_context_tokens": 8192, "max_tokens": 64,
    "measurement_protocol": "capacity-v3",
    "metric_population": {
        "aggregate_throughput_eligible": False, "attempted_requests": len(rows), "excluded_requests": 0,
        "failure_policy": seed["metric_population"]["failure_policy"],
        "p99_interpretation": interp, "p99_interpretation_by_metric": {k: interp for k in p99},
        "p99_minimum_recommended_samples": 100, "p99_samples_by_metric": p99,
        "performance_eligible_requests": len(rows), "successful_requests": len(rows),
    },
    "metrics": metrics, "model": "mock-llm", "performance_eligible": True,
    "prompt_cache_mode": "shared", "request_canaries": False, "request_timings": rows,
    "requests": len(rows), "response_words": 0, "responses_received": len(rows),
    "run_id": "benchmark-20261130T120000Z",
    "sampling": {"temperature": {"effective_request": 0.0, "requested": None, "sent": True},
                 "top_p": {"effective_request": None, "requested": None, "sent": False}},
    "serve_flags": {"no_thinking": False, "reasoning_effort": None, "shared_prefix_burst": False, "thinking_mode": "default"},
    "shared_prefix_tokens": 0, "source_recipe": None, "started_at": "2026-11-30T12:00:00Z",
    "started_at_unix_ns": 1796040000000000000, "tier": None, "wall_clock_ms": wall_ms,
})
assert sorted(doc) == sorted(seed)
with open("testdata/reference-no-usage-capacity-v3.json", "w") as f:
    f.write(json.dumps(doc, indent=2, sort_keys=True))
