#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 1m): the longer run for releases.
# The test command runs the same targets for about ten seconds each. FUZZTIME may be
# a count of inputs (1000000x): a duration can end in a spurious "context deadline
# exceeded" with no failing input under Go 1.26 (golang/go#75804).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
FUZZTIME=${FUZZTIME:-1m}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "=== $target ($pkg, $FUZZTIME)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg"
  done
done
