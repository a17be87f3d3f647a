#!/usr/bin/env bash
# Decode-rate significance check (not part of `go test ./...`).
#
# Runs the same capacity benchmark twice against the embedded fake server,
# with profiles that differ only in the decode step (ANVIL_FAKE_DECODE_STEP:
# the base profile's 17ms against 20ms, i.e. about 15% slower decoding), each
# with -count 10, and requires benchstat to report the decode-tok/s
# difference as significant (p < 0.05, not "~"). It fails when benchstat
# cannot parse the output or sees no significant difference.
#
# Usage: .ci/decode-significance.sh [BASE_STEP [SLOW_STEP]]
set -euo pipefail
cd "$(dirname "$0")/.."

base_step=${1:-17ms}
slow_step=${2:-20ms}
bench=${SIGNIFICANCE_BENCH:-'CapacityContext/ctx=4096/conc=4$'}
count=${SIGNIFICANCE_COUNT:-10}
benchtime=${SIGNIFICANCE_BENCHTIME:-12x}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset ANVIL_BASE_URL
export ANVIL_OUT="$tmp/artifacts" ANVIL_PROGRESS=0

run() { # run STEP OUTFILE
  echo "== decode step $1: go test -bench '$bench' -benchtime $benchtime -count $count" >&2
  ANVIL_FAKE_DECODE_STEP=$1 go test -run '^$' -bench "$bench" -benchtime "$benchtime" \
    -count "$count" ./anviltest > "$2"
}
run "$base_step" "$tmp/base.txt"
run "$slow_step" "$tmp/slow.txt"

# benchstat from the module's own golang.org/x/perf version.
benchstat() { go run golang.org/x/perf/cmd/benchstat "$@"; }

benchstat "base=$tmp/base.txt" "slow=$tmp/slow.txt" 2> "$tmp/benchstat.err" | tee "$tmp/benchstat.txt"
if [ -s "$tmp/benchstat.err" ]; then
  echo "FAIL: benchstat reported problems:" >&2
  cat "$tmp/benchstat.err" >&2
  exit 1
fi

# In CSV form the decode-tok/s table's comparison row ends with the
# relative change and the p-value; "~" marks an insignificant change.
benchstat -format csv -filter '.unit:decode-tok/s' "base=$tmp/base.txt" "slow=$tmp/slow.txt" \
  > "$tmp/decode.csv" 2> /dev/null
row=$(grep -v '^,' "$tmp/decode.csv" | grep -E '^Capacity' | tail -n 1 || true)
echo "decode-tok/s row: $row"
pval=$(printf '%s\n' "$row" | grep -oE 'p=[0-9.]+' | head -n 1 | cut -d= -f2 || true)
delta=$(printf '%s\n' "$row" | awk -F, '{print $(NF-1)}')
if [ -z "$pval" ] || [ "$delta" = "~" ]; then
  echo "FAIL: no significant decode-tok/s difference (delta '$delta', p '$pval')" >&2
  exit 1
fi
if ! awk -v p="$pval" 'BEGIN { exit !(p < 0.05) }'; then
  echo "FAIL: decode-tok/s difference not significant: p=$pval" >&2
  exit 1
fi
echo "OK: decode-tok/s changed by $delta between decode steps $base_step and $slow_step (p=$pval)"
