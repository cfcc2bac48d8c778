#!/usr/bin/env bash
# Runs eksdoctor's whole test suite, installing and building what it needs first:
# the kube-apiserver and etcd the live-mode tests run against and the kube-scheduler
# the placement tests compare with (built from Go source,
# cached under ~/.cache), and the SARIF 2.1.0 schema and validator the report tests
# use (from the npm registry, cached). This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# go.mod's go line is satisfied by the Go on the machine; never download another.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# FUZZTIME, when set, runs every fuzz target for that long (or that many
# inputs, as 5000x) instead of its own count below.
FUZZTIME=${FUZZTIME:-}

step() { printf '\n=== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

step "toolchain"
go version

step "test binaries: kube-apiserver, etcd and kube-scheduler"
if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  echo "using the binaries in KUBEBUILDER_ASSETS"
else
  KUBEBUILDER_ASSETS=$(./hack/testbin.sh)
fi
export KUBEBUILDER_ASSETS
echo "$KUBEBUILDER_ASSETS"

step "shared configurations the tests read"
shared=${EKSDOCTOR_SHARED:-../shared}
for d in corpus realworld; do
  if [[ ! -d "$shared/$d" ]]; then
    echo "$shared/$d not found: the tests read the reference and real-world configurations there (set EKSDOCTOR_SHARED)"; exit 1
  fi
done
echo "$shared"

step "SARIF 2.1.0 schema and validator"
EKSDOCTOR_SARIF_SCHEMA=$(./hack/sarif-schema.sh)
export EKSDOCTOR_SARIF_SCHEMA
echo "$EKSDOCTOR_SARIF_SCHEMA"

step "headless Chromium (the HTML report is checked in a real browser)"
if [[ -z "${EKSDOCTOR_CHROMIUM:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium package"
  if [[ $(id -u) -eq 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium >/dev/null
fi
echo "${EKSDOCTOR_CHROMIUM:-$(command -v chromium)}"
export EKSDOCTOR_ARTIFACTS=${EKSDOCTOR_ARTIFACTS:-$PWD/.artifacts}
echo "screenshots go to $EKSDOCTOR_ARTIFACTS"

step "Mermaid (its own parser checks eksdoctor's graphs in the browser)"
EKSDOCTOR_MERMAID=$(./hack/mermaid.sh)
export EKSDOCTOR_MERMAID
echo "$EKSDOCTOR_MERMAID"

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "not gofmt-ed:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

step "go test"
go test -count=1 ./...

# Karpenter's scheduler is driven from a test-only module of its own.
step "go test: Karpenter's provisioning scheduler (internal/differential/karpenter)"
(cd internal/differential/karpenter && go vet ./... && go test -count=1 ./...)

# Karpenter v0.37's, for v1beta1 NodePools: a module of its own again (one
# build holds one Karpenter version), which runs the eksdoctor command.
step "go test: Karpenter v0.37's provisioning scheduler (internal/differential/karpenterv1beta1)"
(cd internal/differential/karpenterv1beta1 && go vet ./... && go test -count=1 ./...)

# Each target runs for a number of inputs, about ten seconds of it on a 2-core
# machine, rather than for a duration: at the end of a duration, Go 1.26's
# fuzzing coordinator can fail a target with a spurious "context deadline
# exceeded" and no failing input (golang/go#75804, fixed in Go 1.27).
step "fuzz, briefly (${FUZZTIME:-about ten seconds} each)"
fuzz() { go test -run='^$' -fuzz="^$2\$" -fuzztime="${FUZZTIME:-$3}" "$1"; }
fuzz ./source/manifest FuzzDecode 10000x
fuzz ./source/manifest FuzzDecodeTemplate 20000x
fuzz ./source/manifest FuzzGitOpsRelease 5000x
fuzz ./source/terraform FuzzLoadHCL 3000x
fuzz ./source/terraform FuzzEvalExpression 8000x
fuzz ./source/terraform FuzzLoadPlan 10000x
fuzz ./source/terraform FuzzLoadJSONConfig 2000x
fuzz ./source/terraform FuzzDecodeYAML 3000x
fuzz ./source/terraform FuzzLocalExecCommand 3000x
fuzz ./source/helm FuzzExpand 600x
fuzz ./source/helm FuzzParseValues 5000x
fuzz ./source/helm FuzzRender 600x
fuzz ./source/live FuzzReadSnapshot 1000x
fuzz ./source/live FuzzTypedPodDecode 10000x
fuzz ./source/live FuzzQuickUnscheduled 10000x
fuzz ./source FuzzKustomize 2000x
fuzz ./internal/cli FuzzReadOwnFiles 3000x
fuzz ./report FuzzReport 1500x
fuzz ./sim FuzzPlace 4000x
fuzz ./schema FuzzValidate 8000x
fuzz ./identity FuzzResolve 10000x

step "the bundled examples"
mkdir -p bin
go build -o bin/eksdoctor ./cmd/eksdoctor
set +e
bin/eksdoctor check examples/broken >/dev/null
broken=$?
bin/eksdoctor check examples/fixed
fixed=$?
set -e
if [[ $broken -ne 1 || $fixed -ne 0 ]]; then
  echo "examples: broken exited $broken (want 1), fixed exited $fixed (want 0)"; exit 1
fi

step "benchmarks compile and run once on a small configuration"
go test -run='^$' -bench=. -benchtime=1x -short ./bench ./sim ./schema >/dev/null

step "all tests passed"
