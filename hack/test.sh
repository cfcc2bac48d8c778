#!/usr/bin/env bash
# Runs eksdoctor's whole test suite, installing and building what it needs first:
# the kube-apiserver and etcd the live-mode tests run against and the kube-scheduler
# the placement tests compare with (built from Go source, cached under
# ~/.cache/eksdoctor/testbin, or taken from KUBEBUILDER_ASSETS / EKSDOCTOR_TESTBIN),
# the SARIF 2.1.0 schema and validator the report tests use and Mermaid (from the
# npm registry, cached), and headless Chromium (Debian's package) when missing.
# Independent steps run concurrently; their logs are printed in order. This is
# what CI runs (.ci/run).
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
start=$(date +%s)

# Independent steps run at the same time. Each background job writes its output
# to a file of its own; the files are printed in a fixed order once the job has
# ended, so the log reads as if the steps had run one after another, and every
# job's exit status is collected (any failure fails the run).
logs=$(mktemp -d)
# On exit, jobs still running (a step failed first) are stopped with everything
# they started.
killtree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null || true); do killtree "$child"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in $(jobs -pr); do killtree "$pid"; done
  rm -rf "$logs"
}
trap cleanup EXIT
declare -A job_pid job_title
job() { # job NAME TITLE COMMAND...: runs COMMAND in the background; its stdout goes to $logs/NAME.out
  local name=$1 title=$2; shift 2
  ( "$@" ) >"$logs/$name.out" 2>"$logs/$name.log" &
  job_pid[$name]=$!
  job_title[$name]=$title
}
finish() { # finish NAME: waits for the job, prints its step and output, fails the run if it failed
  local name=$1 status=0
  wait "${job_pid[$name]}" || status=$?
  step "${job_title[$name]}"
  cat "$logs/$name.log" "$logs/$name.out"
  if ((status != 0)); then
    echo "${job_title[$name]}: failed (exit $status)"; exit "$status"
  fi
}

chromium_check() {
  if [[ -z "${EKSDOCTOR_CHROMIUM:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium package" >&2
    local sudo=sudo
    if [[ $(id -u) -eq 0 ]]; then sudo=""; fi
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium >/dev/null
  fi
  echo "${EKSDOCTOR_CHROMIUM:-$(command -v chromium)}"
}

# The slow preparation (building the test binaries from source, the first time)
# overlaps with the downloads, gofmt and go vet; all share one Go build cache.
if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  job testbin "test binaries: kube-apiserver, etcd and kube-scheduler" \
    bash -c 'echo "using the binaries in KUBEBUILDER_ASSETS" >&2; echo "$KUBEBUILDER_ASSETS"'
else
  job testbin "test binaries: kube-apiserver, etcd and kube-scheduler" ./hack/testbin.sh
fi
job controllers "the cluster with controllers: kube-controller-manager, Karpenter's kwok binary and kwok" ./hack/testbin.sh controllers
job sarif "SARIF 2.1.0 schema and validator" ./hack/sarif-schema.sh
job mermaid "Mermaid (its own parser checks eksdoctor's graphs in the browser)" ./hack/mermaid.sh
job chromium "headless Chromium (the HTML report is checked in a real browser)" chromium_check

step "shared configurations the tests read"
shared=${EKSDOCTOR_SHARED:-../shared}
for d in corpus realworld; do
  if [[ ! -d "$shared/$d" ]]; then
    echo "$shared/$d not found: the tests read the reference and real-world configurations there (set EKSDOCTOR_SHARED)"; exit 1
  fi
done
echo "$shared"

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "not gofmt-ed:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...
go vet -tags livecontrollers ./internal/livecontrollers ./internal/testenv

finish testbin
KUBEBUILDER_ASSETS=$(tail -n 1 "$logs/testbin.out")
export KUBEBUILDER_ASSETS
finish controllers
finish sarif
EKSDOCTOR_SARIF_SCHEMA=$(tail -n 1 "$logs/sarif.out")
export EKSDOCTOR_SARIF_SCHEMA
finish mermaid
EKSDOCTOR_MERMAID=$(tail -n 1 "$logs/mermaid.out")
export EKSDOCTOR_MERMAID
finish chromium
export EKSDOCTOR_ARTIFACTS=${EKSDOCTOR_ARTIFACTS:-$PWD/.artifacts}
echo "screenshots go to $EKSDOCTOR_ARTIFACTS"

# Karpenter's scheduler is driven from test-only modules of their own: Karpenter
# v1's, and v0.37's for v1beta1 NodePools (one build holds one Karpenter version;
# that module runs the eksdoctor command). They are tested while the main module's
# tests run, and their logs are printed after theirs.
job differential "go test: Karpenter's provisioning scheduler (internal/differential/karpenter)" \
  bash -c 'cd internal/differential/karpenter && go vet ./... && go test -count=1 -timeout 30m ./...'
job differential_v1beta1 "go test: Karpenter v0.37's provisioning scheduler (internal/differential/karpenterv1beta1)" \
  bash -c 'cd internal/differential/karpenterv1beta1 && go vet ./... && go test -count=1 -timeout 30m ./...'

# The live suite against the real controllers (internal/livecontrollers, build
# tag livecontrollers): kube-controller-manager, kube-scheduler, Karpenter with
# its kwok provider and kwok reproduce each failure family, and eksdoctor's
# diagnosis is compared with what they did. Most of its time is waiting for the
# controllers (Karpenter's registration timeout is fifteen minutes), so it runs
# beside the main module's tests; -v prints each scenario's record.
job livecontrollers "go test: eksdoctor against the real controllers (internal/livecontrollers)" \
  go test -tags livecontrollers -count=1 -v -parallel 8 -timeout 45m ./internal/livecontrollers

step "go test"
main_status=0
# On a cold machine the release test compiles the binary from an empty cache
# with the release's flags, twice, while the other steps compile too: it can
# pass go test's default ten minutes, as can the Karpenter modules' tests.
go test -count=1 -timeout 30m ./... || main_status=$?
if ((main_status != 0)); then echo "go test: failed (exit $main_status)"; fi
finish differential
finish differential_v1beta1
if ((main_status != 0)); then exit "$main_status"; fi

# Each target runs for a number of inputs (about 25 seconds of it on a 2-core
# machine, the build of its instrumented test binary included; each target's
# time is printed) rather than for a duration: at the end of a duration, Go 1.26's
# fuzzing coordinator can fail a target with a spurious "context deadline
# exceeded" and no failing input (golang/go#75804, fixed in Go 1.27).
step "fuzz, briefly (${FUZZTIME:-a number of inputs} each)"
fuzz() {
  local TIMEFORMAT="$2: %R s (CPU %U s user, %S s system)"
  time go test -run='^$' -fuzz="^$2\$" -fuzztime="${FUZZTIME:-$3}" "$1"
}
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

# The live suite has been running beside the tests and the fuzzing.
finish livecontrollers

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

step "all tests passed in $(( ($(date +%s) - start) / 60 )) min $(( ($(date +%s) - start) % 60 )) s"
