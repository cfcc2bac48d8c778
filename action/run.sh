#!/usr/bin/env bash
# The GitHub Action's step (action.yml): runs eksdoctor check once and writes, from
# that one run, workflow annotations to the log, a SARIF file for code scanning and
# a Markdown job summary; sets the step's outputs; exits 1 when findings reach
# fail-on (0 otherwise, 2 when nothing could be analysed).
#
# Inputs come as the environment the action sets: INPUT_PATH, INPUT_FAIL_ON,
# INPUT_BASELINE, INPUT_SARIF_FILE, INPUT_CONFIG, INPUT_CONFIG_FROM_BASE (with
# BASE_REF, the pull request's base branch), INPUT_ARGS; EKSDOCTOR is the binary.
#
# The configuration can narrow the gate (disable checks, exclude paths, lower
# severities), and a pull request can carry one: INPUT_CONFIG names a file the
# workflow trusts, INPUT_CONFIG_FROM_BASE takes .eksdoctor.yaml from the base
# branch. Either way the report says what the configuration narrowed.
set -uo pipefail

bin=${EKSDOCTOR:-eksdoctor}
sarif=${INPUT_SARIF_FILE:-eksdoctor.sarif}
summary=$(mktemp)
base_config=$(mktemp)
trap 'rm -f "$summary" "$base_config"' EXIT

args=(check)
# Paths: one or more, separated by spaces or new lines.
read -r -d '' -a paths <<< "${INPUT_PATH:-.}"
args+=("${paths[@]}")
args+=(--fail-on "${INPUT_FAIL_ON:-error}" -o github --write "sarif=$sarif" --write "markdown=$summary")
if [[ -n ${INPUT_BASELINE:-} ]]; then
  args+=(--baseline "$INPUT_BASELINE")
fi
if [[ -n ${INPUT_CONFIG:-} ]]; then
  args+=(--config "$INPUT_CONFIG")
elif [[ ${INPUT_CONFIG_FROM_BASE:-false} == true ]]; then
  ref=${BASE_REF:-}
  if [[ -z $ref ]]; then
    echo "::error title=eksdoctor::config-from-base needs a pull request's base branch (github.base_ref is empty for this event)"
    exit 2
  fi
  if ! git fetch --quiet --depth=1 origin "$ref"; then
    echo "::error title=eksdoctor::config-from-base: cannot fetch the base branch $ref"
    exit 2
  fi
  # No configuration on the base branch: the defaults, not the pull request's.
  git show "FETCH_HEAD:.eksdoctor.yaml" > "$base_config" 2>/dev/null || : > "$base_config"
  echo "eksdoctor: configuration from the base branch $ref ($(wc -c < "$base_config") bytes)"
  args+=(--config "$base_config")
fi
if [[ -n ${INPUT_ARGS:-} ]]; then
  read -r -d '' -a extra <<< "$INPUT_ARGS"
  args+=("${extra[@]}")
fi

"$bin" "${args[@]}"
code=$?

if [[ -n ${GITHUB_STEP_SUMMARY:-} && -s $summary ]]; then
  cat "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  {
    echo "exit-code=$code"
    if [[ -s $sarif ]]; then echo "sarif-file=$sarif"; fi
  } >> "$GITHUB_OUTPUT"
fi
exit "$code"
