#!/usr/bin/env bash
# The curve of docs/EVAL.md ("The curve"): the reference model at one window W = 4,096 tokens for
# every strategy, HotpotQA dev questions padded to 1x, 2x, 4x and 8x W, CMRC 2018 at 1x and 4x W.
# Every step is `extagents eval` into a fixed output folder, so the script resumes where it stopped
# (finished records are skipped) and can be run again across sittings; the phases run in the order
# that makes a cut-short run most useful (the headline 4x and 8x cells first).
#
# Usage: scripts/eval-curve.sh [out-dir (default docs/eval-curve)] [questions per cell (default 20)]
# Environment: EXTAGENTS_REFERENCE_MODEL (default: the path scripts/fetch-reference-model.sh prints),
#   CURVE_PHASES (default "1 2 3 4 5 6": which phases to run, see below).
# Run it alone on the machine: two model processes on 2 cores slow each other many times.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-docs/eval-curve}"
N="${2:-20}"
MODEL_FILE="${EXTAGENTS_REFERENCE_MODEL:-$(./scripts/fetch-reference-model.sh)}"
MODEL="llama:${MODEL_FILE}?ctx=4096"
export EXTAGENTS_LLAMA_THREADS="${EXTAGENTS_LLAMA_THREADS:-2}"
W=4096
run() { ./bin/extagents eval --model "$MODEL" --concurrency 1 --reuse-calls --no-progress --limit "$N" "$@"; }
# extagents first in each list: its records are measured without reused calls (its wall time is real);
# its ablations reuse its round-1 seeks (--reuse-calls).
CORE=extagents,extagents-no-sync,extagents-no-kar,direct,rag,question-only
for phase in ${CURVE_PHASES:-1 2 3 4 5 6}; do
  case "$phase" in
    1) run --dataset hotpotqa --lengths $((4 * W)) --strategies "$CORE" --out-dir "$OUT/hotpotqa" ;;
    2) run --dataset hotpotqa --lengths $((8 * W)) --strategies "$CORE" --out-dir "$OUT/hotpotqa" ;;
    3) run --dataset hotpotqa --lengths $((1 * W)),$((2 * W)) --strategies "$CORE" --out-dir "$OUT/hotpotqa" ;;
    4) run --dataset cmrc --lengths $((1 * W)),$((4 * W)) --strategies extagents,direct,rag,question-only --out-dir "$OUT/cmrc" ;;
    5) run --dataset hotpotqa --lengths $((4 * W)),$((8 * W)) --strategies chain-of-agents --out-dir "$OUT/hotpotqa" ;;
    6) run --dataset hotpotqa --lengths $((1 * W)),$((2 * W)) --strategies chain-of-agents --out-dir "$OUT/hotpotqa" ;;
    *) echo "eval-curve: unknown phase $phase (1-6)" >&2; exit 2 ;;
  esac
done
