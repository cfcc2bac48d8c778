#!/usr/bin/env bash
# Fetches Mermaid's browser build (mermaid.min.js), whose own parser the tests run in
# headless Chromium over eksdoctor's Mermaid graphs, and prints its path. The package
# is downloaded from the npm registry once and cached.
set -euo pipefail
cd "$(dirname "$0")"
dest=$(./npm-files.sh mermaid "${MERMAID_VERSION:-12.3.0}" mermaid dist/mermaid.min.js)
echo "$dest/mermaid.min.js"
