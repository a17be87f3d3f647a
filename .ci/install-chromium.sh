#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report's browser test
# (reporters.TestBrowserRendersReport), which is skipped without it.
# Does nothing when a chromium binary is already on PATH.
#
# Usage: .ci/install-chromium.sh   (as root, or with sudo available)
set -euo pipefail

for bin in chromium chromium-browser google-chrome; do
  if command -v "$bin" > /dev/null 2>&1; then
    echo "chromium present: $(command -v "$bin")"
    exit 0
  fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends chromium
command -v chromium
