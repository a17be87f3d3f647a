#!/usr/bin/env bash
# Cross-checks that the module and its tests build on every platform a
# user may run the README's commands on: linux/arm64, darwin and windows
# (amd64 and arm64). linux/amd64 is the machine's own, which .ci/run vets
# and tests natively. No binary runs.
#
# go vet ./... for each of the five: it type-checks every package with
# its tests under that platform's build constraints (a file for one OS
# or architecture, a call such as syscall.Kill that windows lacks) and
# runs vet's checks there, asmdecl on the assembly included.
#
# go test -c of every package, its test binary linked (symbols and
# DWARF stripped, -s -w: only that it links matters), for one target of
# each other OS family: windows/amd64 and darwin/arm64. A link sees what
# vet cannot: the compiler's back end, the assembler, the linker's
# object format (PE, Mach-O) and its go:linkname rules (the test graph's
# github.com/modern-go/reflect2 declares functions without bodies, given
# by go:linkname, beside an empty .s file per architecture). The other
# architecture of a family adds nothing to that: cross builds have no
# cgo, the module has no assembly and reflect2's files have no OS tag,
# so darwin/arm64 assembles and links what linux/arm64 and windows/arm64
# would, and windows/amd64 links PE as windows/arm64 would. The links
# cost 27 to 30 CPU-seconds a target every run (the go command never
# caches a link; -o /dev/null links all the same), and a target's test
# packages about 140 CPU-seconds to compile the first time after a
# change: vet and links of all five took 350 s of a 1,007-second CI run.
#
# The targets run one after another: one go command already keeps both
# cores of the 2-core machine busy (go's default -p). Measured on the
# shared machine, three vet-only targets one after another against all
# three at once: 4 s against 3 s with nothing changed; after a change to
# capacity/internal/client, 176 s and 64 s against 95 s (load average 10
# to 22 from other work): no gain the noise does not swamp.
#
# Usage: .ci/cross.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for target in linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  start=$SECONDS
  export GOOS=${target%/*} GOARCH=${target#*/}
  case $target in
  windows/amd64 | darwin/arm64)
    echo "== $target: go vet ./... and go test -c ./..."
    go vet ./...
    # go test -c prints "[no test files]" for packages without tests.
    go test -c -ldflags='-s -w' -o "$bin/" ./... | { grep -v 'no test files' || true; }
    echo "   vetted, $(find "$bin" -type f | wc -l) test binaries linked in $((SECONDS - start)) s"
    rm -rf "${bin:?}"/*
    ;;
  *)
    echo "== $target: go vet ./..."
    go vet ./...
    echo "   vetted in $((SECONDS - start)) s"
    ;;
  esac
done
