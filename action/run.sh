#!/usr/bin/env bash
# The GitHub Action's step (action.yml): runs eksdoctor check once and writes, from
# that one run, workflow annotations to the log, a SARIF file for code scanning and
# a Markdown job summary; sets the step's outputs; exits 1 when findings reach
# fail-on (0 otherwise, 2 when nothing could be analysed).
#
# Inputs come as the environment the action sets: INPUT_PATH, INPUT_FAIL_ON,
# INPUT_BASELINE, INPUT_SARIF_FILE, INPUT_ARGS; EKSDOCTOR is the binary.
set -uo pipefail

bin=${EKSDOCTOR:-eksdoctor}
sarif=${INPUT_SARIF_FILE:-eksdoctor.sarif}
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

args=(check)
# Paths: one or more, separated by spaces or new lines.
read -r -d '' -a paths <<< "${INPUT_PATH:-.}"
args+=("${paths[@]}")
args+=(--fail-on "${INPUT_FAIL_ON:-error}" -o github --write "sarif=$sarif" --write "markdown=$summary")
if [[ -n ${INPUT_BASELINE:-} ]]; then
  args+=(--baseline "$INPUT_BASELINE")
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
