#!/usr/bin/env bash
# The main job end to end on sample_logs/: what `make demo` runs.
set -euo pipefail
BIN=${1:-.venv/bin}
OUT=${2:-demo_out}
FL="$BIN/farkle-logs"
rm -rf "$OUT"; mkdir -p "$OUT"
echo "== rules: the standard table and its exact odds"
"$FL" rules show standard
echo "== score: 1 1 1 5"
"$FL" score 1 1 1 5
