#!/usr/bin/env bash
# Builds an eksdoctor release into dist/ (or $DIST), reproducibly: the same commit
# and version give the same bytes on any machine.
#
#   hack/release.sh v1.2.3
#
#   dist/eksdoctor_<version>_<os>_<arch>.tar.gz   static binary + README, for
#                                                 linux and darwin on amd64 and arm64
#                                                 ($PLATFORMS to choose)
#   dist/checksums.txt                            their SHA-256 sums
#   dist/eksdoctor_<version>_oci.tar              container image (OCI image layout,
#                                                 the Linux binaries, no container
#                                                 engine needed to build it)
#   dist/krew/eksdoctor.yaml                      krew plugin manifest for the archives
#                                                 as published under the GitHub release
#
# Binaries are built with CGO off, -trimpath, no build ID and no VCS stamp; the
# version, commit and date (the commit's time, or SOURCE_DATE_EPOCH) are set with
# -X so `eksdoctor version` prints them. Archives are tar files sorted by name with
# fixed owners and times, gzip-compressed without a name or time.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-${VERSION:-v0.0.0-dev}}
if [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release: version $version is not vMAJOR.MINOR.PATCH[-PRERELEASE]" >&2; exit 2
fi
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
date=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
dist=${DIST:-dist}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
repo=https://github.com/eksdoctor/eksdoctor

export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0 GOFLAGS=-buildvcs=false
pkg=github.com/eksdoctor/eksdoctor/internal/cli
ldflags="-s -w -buildid= -X $pkg.buildVersion=$version -X $pkg.buildCommit=$commit -X $pkg.buildDate=$date"

# dist is made afresh: rm removes a link committed under its name (never what
# it points to), so the release is never written through one.
rm -rf "$dist"
mkdir -p "$dist/krew"
images=()
krew_platforms=""
# The platforms are compiled at the same time (into one Go build cache), each
# into a staging directory of its own; packaging, in the order of $platforms,
# follows once every build has succeeded.
stages=$(mktemp -d)
trap 'rm -rf "$stages"' EXIT
declare -A pids
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  mkdir -p "$stages/$os-$arch"
  GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$stages/$os-$arch/eksdoctor" ./cmd/eksdoctor \
    >"$stages/$os-$arch.log" 2>&1 &
  pids[$p]=$!
done
failed=0
for p in $platforms; do
  if ! wait "${pids[$p]}"; then
    echo "release: go build for $p failed:" >&2
    cat "$stages/${p%/*}-${p#*/}.log" >&2
    failed=1
  fi
done
if ((failed)); then exit 1; fi
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  name="eksdoctor_${version}_${os}_${arch}"
  stage=$stages/$os-$arch
  cp README.md "$stage/README.md"
  touch -d "@$epoch" "$stage/eksdoctor" "$stage/README.md"
  chmod 0755 "$stage/eksdoctor"; chmod 0644 "$stage/README.md"
  tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$stage" -cf - eksdoctor README.md | gzip -n -9 > "$dist/$name.tar.gz"
  if [[ $os == linux ]]; then
    mkdir -p "$dist/bin/$os-$arch"
    cp "$stage/eksdoctor" "$dist/bin/$os-$arch/eksdoctor"
    images+=("$p=$dist/bin/$os-$arch/eksdoctor")
  fi
  sum=$(sha256sum "$dist/$name.tar.gz" | cut -d' ' -f1)
  krew_platforms+="  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: $repo/releases/download/$version/$name.tar.gz
    sha256: $sum
    bin: eksdoctor
    files:
      - from: eksdoctor
        to: .
      - from: README.md
        to: .
"
done
(cd "$dist" && sha256sum -- *.tar.gz > checksums.txt)

if ((${#images[@]})); then
  go run ./hack/ociimage -out "$dist/eksdoctor_${version}_oci.tar" -version "$version" -epoch "$epoch" "${images[@]}"
fi
rm -rf "$dist/bin"

cat > "$dist/krew/eksdoctor.yaml" <<YAML
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: eksdoctor
spec:
  version: $version
  homepage: $repo
  shortDescription: Find EKS and Karpenter misconfigurations
  description: |
    eksdoctor explains, the way kube-scheduler and Karpenter would, why pods stay
    Pending, nodes never join, volumes stay attached and destroys hang on EKS with
    Karpenter, in the running cluster (kubectl eksdoctor cluster, read-only) and
    in the Terraform, Helm, eksctl and manifests before they are applied.
  caveats: |
    eksdoctor only reads the cluster (get, list, never Secrets); deploy/rbac.yaml
    in the repository grants exactly what it reads.
  platforms:
$krew_platforms
YAML
echo "$dist"
