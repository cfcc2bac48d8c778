#!/usr/bin/env bash
# Fetches the SARIF 2.1.0 JSON schema that the report tests validate eksdoctor's
# SARIF output against, and prints its path. The schema ships in Microsoft's SARIF
# multitool npm package (also used by GitHub code scanning's own validation); the
# package is downloaded from the npm registry once and cached.
set -euo pipefail

VERSION=${SARIF_MULTITOOL_VERSION:-5.7.0}
dest=${XDG_CACHE_HOME:-$HOME/.cache}/eksdoctor/sarif-multitool-${VERSION}
schema="$dest/sarif-2.1.0.json"

if [[ -s "$schema" ]]; then
  echo "$schema"
  exit 0
fi

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  npm pack --silent "@microsoft/sarif-multitool-linux@${VERSION}" >/dev/null 2>&1
  tar -xzf microsoft-sarif-multitool-linux-"${VERSION}".tgz package/sarif-2.1.0.json package/Sarif.Multitool
) >&2
mv "$work/package/sarif-2.1.0.json" "$schema.tmp"
mv "$work/package/Sarif.Multitool" "$dest/Sarif.Multitool"
chmod +x "$dest/Sarif.Multitool"
mv "$schema.tmp" "$schema"
echo "$schema"
