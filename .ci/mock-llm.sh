#!/usr/bin/env bash
# Runs the conformance suite and a short capacity benchmark against
# @dwmkerr/mock-llm, an OpenAI mock server from npm that nobody here wrote
# (anviltest/conformance/mockllm_test.go asserts its known verdicts).
# Needs Node.js and npm; installs into a temporary directory, serves on a
# free loopback port, stops the server and removes everything on exit.
# Bounded: npm install, at most 30 s for the server to come up, then go
# test with a 5 minute timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

# The version whose behaviour the test asserts; change both together.
version="${MOCK_LLM_VERSION:-0.1.29}"

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== npm install @dwmkerr/mock-llm@$version"
npm install --prefix "$work" --no-audit --no-fund --no-save --loglevel=error "@dwmkerr/mock-llm@$version" >/dev/null

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# mock-llm's default rules plus one for the capacity prompts (see the file).
config="$PWD/anviltest/testdata/mock-llm.yaml"
mkdir "$work/run"
(cd "$work/run" && HOST=127.0.0.1 PORT="$port" exec node "$work/node_modules/@dwmkerr/mock-llm/dist/main.js" --config "$config") >"$work/mock-llm.log" 2>&1 &
pid=$!

for _ in $(seq 1 300); do
  if curl -fs --max-time 1 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "mock-llm exited:"; cat "$work/mock-llm.log"; exit 1; fi
  sleep 0.1
done
curl -fs --max-time 1 "http://127.0.0.1:$port/health" >/dev/null || { echo "mock-llm did not come up in 30 s:"; cat "$work/mock-llm.log"; exit 1; }
echo "== mock-llm $version on 127.0.0.1:$port"

ANVIL_MOCK_LLM_URL="http://127.0.0.1:$port/v1" go test -count=1 -timeout 5m -run '^TestMockLLM' -v ./anviltest/conformance
