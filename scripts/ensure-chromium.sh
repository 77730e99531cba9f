#!/usr/bin/env bash
# Makes Debian's Chromium available for the report test (tests/report.rs). Idempotent.
# Prints the browser's path on stdout. Exit 3 (one line on stderr) when it is missing and this
# user is not root to apt-get it, so that the test can skip saying why. Install: ~20 s.
set -euo pipefail
find_chromium() { command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true; }
bin=$(find_chromium)
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "skip: Chromium is not installed and this user is not root to apt-get it" >&2
    exit 3
  fi
  start=$(date +%s)
  export DEBIAN_FRONTEND=noninteractive
  # /tmp/sweep-apt.lock: one apt-get at a time among the tests' installers.
  flock /tmp/sweep-apt.lock bash -c 'apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium' >&2
  bin=$(find_chromium)
  [ -n "$bin" ] || { echo "error: chromium not found after apt-get install chromium" >&2; exit 1; }
  echo "installed chromium in $(( $(date +%s) - start )) s" >&2
fi
echo "$bin"
