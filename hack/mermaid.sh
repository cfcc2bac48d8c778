#!/usr/bin/env bash
# Fetches Mermaid's browser build (mermaid.min.js), whose own parser the tests run in
# headless Chromium over eksdoctor's Mermaid graphs, and prints its path. The package
# is downloaded from the npm registry once and cached.
set -euo pipefail

VERSION=${MERMAID_VERSION:-12.3.0}
dest=${XDG_CACHE_HOME:-$HOME/.cache}/eksdoctor/mermaid-${VERSION}
js="$dest/mermaid.min.js"

if [[ -s "$js" ]]; then
  echo "$js"
  exit 0
fi

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  npm pack --silent "mermaid@${VERSION}" >/dev/null 2>&1
  tar -xzf "mermaid-${VERSION}.tgz" package/dist/mermaid.min.js
) >&2
mv "$work/package/dist/mermaid.min.js" "$js.tmp"
mv "$js.tmp" "$js"
echo "$js"
