#!/usr/bin/env bash
# Fetches the SARIF 2.1.0 JSON schema that the report tests validate eksdoctor's
# SARIF output against, and prints its path. The schema ships in Microsoft's SARIF
# multitool npm package (also used by GitHub code scanning's own validation); the
# package is downloaded from the npm registry once and cached.
set -euo pipefail

cd "$(dirname "$0")"
dest=$(./npm-files.sh @microsoft/sarif-multitool-linux "${SARIF_MULTITOOL_VERSION:-5.7.0}" sarif-multitool sarif-2.1.0.json Sarif.Multitool)
chmod +x "$dest/Sarif.Multitool"
echo "$dest/sarif-2.1.0.json"
