#!/usr/bin/env bash
# The main job end to end on sample_logs/: what `make demo` runs.
# ingest → audit → stats → report, each step a real command a user would type.
set -uo pipefail
BIN=${1:-.venv/bin}
OUT=${2:-demo_out}
FL="$BIN/farkle-logs"
rm -rf "$OUT"; mkdir -p "$OUT"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# The directory: its log files are read (.jsonl, .jsonl.gz); the README and the scoresheet
# next to them are named in one note and skipped.
LOGS=(sample_logs)

# rejects and findings are expected: some samples are disputed on purpose
step "ingest the sample logs into $OUT/dataset"
"$FL" ingest "${LOGS[@]}" --out "$OUT/dataset"
rc=$?; [ $rc -le 1 ] || exit $rc

step "audit the disputed game against its hand-kept scoresheet"
"$FL" audit sample_logs/disputed_game.jsonl --scoresheet sample_logs/disputed_game.scoresheet.csv
rc=$?; [ $rc -le 1 ] || exit $rc

step "audit every sample log: the findings as JSON lines"
"$FL" audit "${LOGS[@]}" --format jsonl

step "stats: bust rate by dice left against the exact odds"
"$FL" stats "$OUT/dataset" --section bust || exit $?
step "stats: players"
"$FL" stats "$OUT/dataset" --section players || exit $?

step "stats: decision quality against the exact single-turn policy"
"$FL" stats "$OUT/dataset" --section decision_quality || exit $?

step "coach: every choice of the disputed game, judged (first 12 lines)"
"$FL" audit sample_logs/disputed_game.jsonl --game s814-g000000 --coach | head -12

step "report"
"$FL" report "$OUT/dataset" -o "$OUT/report.html" --title "farkle-logs demo" || exit $?
echo "report written to $(cd "$OUT" && pwd)/report.html"
echo "open it in any browser: it works offline"
