#!/usr/bin/env bash
# Cross-checks that the module and its tests build on every platform a
# user may run the README's commands on. For linux/arm64, darwin and
# windows (amd64 and arm64): go vet ./..., which type-checks every package
# with its tests (the build constraints of each platform applied). For
# windows/amd64, the system least like the machine's own: every package's
# test binary, linked (symbols stripped: only that it links matters); the
# darwin link is left out to keep .ci/run well under its time budget, the
# vets above cover its build constraints. linux/amd64 is the machine's own,
# which .ci/run vets and tests natively. No binary runs.
#
# Cost, measured on the shared 2-core machine: the links are never cached
# (26 CPU-seconds per set of test binaries); each vet 4 s when nothing
# changed, about 55 CPU-seconds with an empty build cache.
#
# Usage: .ci/cross.sh
set -euo pipefail
cd "$(dirname "$0")/.."

for target in linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  echo "== $target: go vet ./..."
  GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
done

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for target in windows/amd64; do
  echo "== $target: go test -c ./..."
  # go test -c prints "[no test files]" for packages without tests.
  GOOS=${target%/*} GOARCH=${target#*/} go test -c -ldflags='-s -w' -o "$bin/" ./... | { grep -v 'no test files' || true; }
  rm -rf "${bin:?}"/*
done
