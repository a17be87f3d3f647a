#!/usr/bin/env bash
# Cross-checks that the module and its tests build on every platform a
# user may run the README's commands on: linux/arm64, darwin and windows
# (amd64 and arm64). For each: go vet ./..., which type-checks every
# package with its tests (the build constraints of each platform
# applied), and go test -c of every package, which compiles the test
# packages and links their test binaries (symbols and DWARF stripped,
# -s -w: only that they link matters). linux/amd64 is the machine's own,
# which .ci/run vets and tests natively. No binary runs.
#
# Cost, measured on the shared 2-core machine (user+sys CPU-seconds; one
# job per package, go's default -p, already keeps both cores busy, so the
# targets run one after another): each vet 4 s when nothing changed,
# about 55 with an empty build cache; the links of one target's 43 test
# binaries 27 to 30 CPU-seconds every time (the go command never caches a
# link; -o /dev/null links all the same, 30), 46 s wall for
# windows/amd64 beside other work; compiling a target's test packages
# the first time, 140. The 450 MB of binaries are removed after each
# target.
#
# Usage: .ci/cross.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for target in linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  start=$SECONDS
  echo "== $target: go vet ./... and go test -c ./..."
  GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
  # go test -c prints "[no test files]" for packages without tests.
  GOOS=${target%/*} GOARCH=${target#*/} go test -c -ldflags='-s -w' -o "$bin/" ./... | { grep -v 'no test files' || true; }
  echo "   $(find "$bin" -type f | wc -l) test binaries linked in $((SECONDS - start)) s"
  rm -rf "${bin:?}"/*
done
