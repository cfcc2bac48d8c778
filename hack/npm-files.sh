#!/usr/bin/env bash
# Fetches files of one npm package into the cache once and prints the cache
# directory that holds them (by their base names):
#
#   hack/npm-files.sh PACKAGE VERSION CACHE-NAME PATH-IN-PACKAGE...
#
# The tests' tools that come from the npm registry (the SARIF schema and
# validator, Mermaid) are fetched through it.
set -euo pipefail

pkg=$1 version=$2 name=$3
shift 3
dest=${XDG_CACHE_HOME:-$HOME/.cache}/eksdoctor/${name}-${version}

have=1
for f in "$@"; do
  [[ -s "$dest/$(basename "$f")" ]] || have=0
done
if ((have)); then
  echo "$dest"
  exit 0
fi

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  npm pack --silent "${pkg}@${version}" >/dev/null 2>&1
  tar -xzf ./*.tgz "${@/#/package/}"
) >&2
for f in "$@"; do
  # Into place whole, so a second run never sees half a file.
  mv "$work/package/$f" "$dest/$(basename "$f").tmp"
  mv "$dest/$(basename "$f").tmp" "$dest/$(basename "$f")"
done
echo "$dest"
