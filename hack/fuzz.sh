#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 1m): the longer run for releases.
# The test command runs the same targets for 10s each.
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
