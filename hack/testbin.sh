#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the live-mode integration tests
# run through controller-runtime's envtest, the kube-scheduler the placement tests
# compare eksdoctor's answers with, and the kube-controller-manager of the live
# test cluster with the real controllers, and prints the directory holding them.
#
# `hack/testbin.sh controllers` instead prepares what that cluster runs beside
# them: Karpenter's controllers with its kwok cloud provider (sigs.k8s.io/karpenter/kwok),
# the kwok node agent (sigs.k8s.io/kwok/cmd/kwok), the CRDs Karpenter's kwok provider
# serves and the agent's stage configuration (both read from the two modules as the
# module proxy serves them), and prints that directory.
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
# Karpenter's version is the one the Karpenter differential module pins.
KARPENTER_VERSION=${KARPENTER_VERSION:-1.14.1}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/eksdoctor/testbin
# k8s: kube-apiserver, kube-scheduler, kube-controller-manager and etcd;
# ctrl: Karpenter's kwok binary, kwok, and their CRDs and stages.
k8s=${EKSDOCTOR_TESTBIN:-$cache/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}}
ctrl=${EKSDOCTOR_CONTROLLERS:-$cache/karpenter-${KARPENTER_VERSION}-kwok-${KWOK_VERSION}}
kubernetes_bins=(kube-apiserver kube-scheduler kube-controller-manager)

# given DIR NAME: the machine already has NAME in KUBEBUILDER_ASSETS, or DIR
# does; the test setup takes KUBEBUILDER_ASSETS' first, and nothing is built
# for it.
given() { [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/$2" ]] || [[ -x "$1/$2" ]]; }

# What to build. The test binaries proper (kube-apiserver, kube-scheduler,
# etcd) are enough for every test but the cluster with controllers; a cache
# that holds them is used as it is. The cluster with controllers needs the
# controller manager beside them and the controllers' own directory.
need_k8s=() need_etcd=0 need_karpenter=0 need_kwok=0 need_data=0
if [[ ${1:-} == controllers ]]; then
  print=$ctrl
  given "$k8s" kube-controller-manager || need_k8s+=(kube-controller-manager)
  given "$ctrl" karpenter-kwok || need_karpenter=1
  given "$ctrl" kwok || need_kwok=1
  [[ -f "$ctrl/ready" ]] || need_data=1
else
  print=$k8s
  for b in kube-apiserver kube-scheduler; do
    [[ -x "$k8s/$b" ]] || need_k8s+=("$b")
  done
  [[ -x "$k8s/etcd" ]] || need_etcd=1
  if ((${#need_k8s[@]} > 0)); then
    # One go build links them all: the controller manager costs little more.
    need_k8s=("${kubernetes_bins[@]}")
  fi
fi
if ((${#need_k8s[@]} == 0 && need_etcd + need_karpenter + need_kwok + need_data == 0)); then
  echo "$print"
  exit 0
fi

mkdir -p "$k8s" "$ctrl"
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
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  go mod tidy >/dev/null 2>&1 || true
  local pkgs=() bin
  for bin in "${need_k8s[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$bin"); done
  go build -ldflags "$ldflags" -o "$work/apiserver-out/" "${pkgs[@]}"
  for bin in "${need_k8s[@]}"; do
    mv "$work/apiserver-out/$bin" "$k8s/$bin.tmp"
    mv "$k8s/$bin.tmp" "$k8s/$bin"
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
  go build -ldflags "$ldflags" -o "$k8s/etcd.tmp" .
  mv "$k8s/etcd.tmp" "$k8s/etcd"
}

# build_main NAME MODULE VERSION PACKAGE: builds a main package of a module, as
# the module proxy serves it, unchanged, into $ctrl/NAME.
build_main() {
  local name=$1 module=$2 version=$3 pkg=$4
  mkdir -p "$work/$name"
  cd "$work/$name"
  printf 'module testbin/%s\n\ngo 1.26\n\nrequire %s v%s\n' "$name" "$module" "$version" > go.mod
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" > tools.go
  go mod tidy >/dev/null 2>&1 || true
  go build -ldflags "$ldflags" -o "$ctrl/$name.tmp" "$pkg"
  mv "$ctrl/$name.tmp" "$ctrl/$name"
}

# Karpenter's controllers with its kwok cloud provider: the main package of
# sigs.k8s.io/karpenter/kwok. Karpenter embeds its CRDs but never installs them;
# the test cluster installs the ones of this version: NodePool and NodeClaim
# (pkg/apis/crds) and KWOKNodeClass (kwok/apis/crds).
build_karpenter() { build_main karpenter-kwok sigs.k8s.io/karpenter "$KARPENTER_VERSION" sigs.k8s.io/karpenter/kwok; }

# kwok, the node agent: it makes the nodes it manages Ready (keeping their leases)
# and their pods Running, and finishes pod deletions, as kubelets would.
build_kwok() { build_main kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok; }

# The data the cluster reads beside the binaries, copied from the two modules as
# the module proxy serves them: the CRDs (crds/) and kwok's own stages (stages/:
# nodes become Ready and keep a heartbeat; pods become Ready, Jobs' pods complete,
# deleted pods go away).
controller_data() {
  local karpenter kwok
  cd "$work"
  karpenter=$(go mod download -json "sigs.k8s.io/karpenter@v${KARPENTER_VERSION}" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  kwok=$(go mod download -json "sigs.k8s.io/kwok@v${KWOK_VERSION}" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  rm -rf "$ctrl/crds" "$ctrl/stages"
  mkdir -p "$ctrl/crds" "$ctrl/stages"
  install -m 0644 "$karpenter/pkg/apis/crds/karpenter.sh_nodepools.yaml" \
    "$karpenter/pkg/apis/crds/karpenter.sh_nodeclaims.yaml" \
    "$karpenter/kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml" "$ctrl/crds/"
  install -m 0644 "$kwok/kustomize/stage/node/fast/node-initialize.yaml" \
    "$kwok/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
    "$kwok/kustomize/stage/pod/fast/pod-ready.yaml" \
    "$kwok/kustomize/stage/pod/fast/pod-complete.yaml" \
    "$kwok/kustomize/stage/pod/fast/pod-delete.yaml" "$ctrl/stages/"
  touch "$ctrl/ready"
}

# Only what the cache lacks is built; the builds run concurrently and each one's
# exit status is collected (a failure in any fails the script).
pids=()
if ((${#need_k8s[@]} > 0)); then
  (build_kubernetes) >&2 &
  pids+=($!)
fi
if ((need_etcd)); then
  (build_etcd) >&2 &
  pids+=($!)
fi
if ((need_karpenter)); then
  (build_karpenter) >&2 &
  pids+=($!)
fi
if ((need_kwok)); then
  (build_kwok) >&2 &
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
if ((need_data)); then
  (controller_data) >&2
fi

echo "$print"
