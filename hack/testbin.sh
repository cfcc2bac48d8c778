#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the live-mode integration tests
# run through controller-runtime's envtest, and the kube-scheduler the placement
# tests compare eksdoctor's answers with, and prints the directory holding them.
#
# There is no container engine and no binary download on the machines this project is
# tested on, so all come from Go source through the module proxy: kube-apiserver and
# kube-scheduler from k8s.io/kubernetes (its staging modules replaced by their tagged
# releases), etcd from a tiny main over go.etcd.io/etcd/server. The two Kubernetes
# binaries come from one go build and etcd from a second one running at the same
# time, both in the one Go build cache (GOCACHE). The result is cached; a second run
# is instant, and a cache missing a binary gains only the build that makes it.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.1}
ETCD_VERSION=${ETCD_VERSION:-3.7.3}
dest=${EKSDOCTOR_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/eksdoctor/testbin/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}}

if [[ -x "$dest/kube-apiserver" && -x "$dest/kube-scheduler" && -x "$dest/etcd" ]]; then
  echo "$dest"
  exit 0
fi

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# No symbol table or DWARF: linking kube-apiserver is a large part of the build,
# and nothing debugs these binaries.
ldflags="-s -w"

# kube-apiserver and kube-scheduler: k8s.io/kubernetes refers to its staging modules
# by relative path; a consumer must point each of them at the matching v0.x release.
# Both are built by one go build, so the packages they share are compiled once and
# the two links overlap with the compiles.
build_kubernetes() {
  mkdir -p "$work/apiserver" "$work/apiserver-out"
  cd "$work/apiserver"
  staging=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    echo "module testbin/apiserver"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes v${K8S_VERSION}"
    echo
    grep -E '^\s+k8s\.io/[a-z0-9-]+ => \./staging' "$staging" |
      awk -v v="v0.${K8S_VERSION#1.}" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  go mod tidy >/dev/null 2>&1 || true
  go build -ldflags "$ldflags" -o "$work/apiserver-out/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler
  for bin in kube-apiserver kube-scheduler; do
    mv "$work/apiserver-out/$bin" "$dest/$bin.tmp"
    mv "$dest/$bin.tmp" "$dest/$bin"
  done
}

# etcd: the embedded server started with the usual command-line flags. Its module
# graph differs from Kubernetes' (newer etcd, gRPC, OpenTelemetry), so it is a module
# of its own, built at the same time as the other two into the same build cache.
build_etcd() {
  mkdir -p "$work/etcd"
  cd "$work/etcd"
  cat > go.mod <<GOMOD
module testbin/etcd

go 1.26

require go.etcd.io/etcd/server/v3 v${ETCD_VERSION}
GOMOD
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go mod tidy >/dev/null
  go build -ldflags "$ldflags" -o "$dest/etcd.tmp" .
  mv "$dest/etcd.tmp" "$dest/etcd"
}

# Only what the cache lacks is built; the builds run concurrently and each one's
# exit status is collected (a failure in either fails the script).
pids=()
if [[ ! -x "$dest/kube-apiserver" || ! -x "$dest/kube-scheduler" ]]; then
  (build_kubernetes) >&2 &
  pids+=($!)
fi
if [[ ! -x "$dest/etcd" ]]; then
  (build_etcd) >&2 &
  pids+=($!)
fi
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
if ((failed)); then
  echo "testbin: building the test binaries failed (output above)" >&2
  exit 1
fi

echo "$dest"
