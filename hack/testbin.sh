#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the live-mode integration tests
# run through controller-runtime's envtest, and the kube-scheduler the placement
# tests compare eksdoctor's answers with, and prints the directory holding them.
#
# There is no container engine and no binary download on the machines this project is
# tested on, so all come from Go source through the module proxy: kube-apiserver and
# kube-scheduler from k8s.io/kubernetes (its staging modules replaced by their tagged
# releases), etcd from a tiny main over go.etcd.io/etcd/server. The result is cached; a
# second run is instant, and a cache from before the scheduler was built gains only it.
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

# kube-apiserver and kube-scheduler: k8s.io/kubernetes refers to its staging modules by relative path; a
# consumer must point each of them at the matching v0.x release.
if [[ ! -x "$dest/kube-apiserver" || ! -x "$dest/kube-scheduler" ]]; then
mkdir -p "$work/apiserver"
(
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
  for bin in kube-apiserver kube-scheduler; do
    if [[ ! -x "$dest/$bin" ]]; then
      go build -o "$dest/$bin.tmp" "k8s.io/kubernetes/cmd/$bin"
      mv "$dest/$bin.tmp" "$dest/$bin"
    fi
  done
) >&2
fi

# etcd: the embedded server started with the usual command-line flags.
if [[ ! -x "$dest/etcd" ]]; then
mkdir -p "$work/etcd"
(
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
  go build -o "$dest/etcd.tmp" .
  mv "$dest/etcd.tmp" "$dest/etcd"
) >&2
fi

echo "$dest"
