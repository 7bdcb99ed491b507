#!/bin/bash
# One detection round's held-out evaluation (DETECTION.md rounds 7-9): simulate a fresh world
# (unless its JSONL exists), replay it to facts (unless they exist: a round fixes them before
# any detector change), then score it once with the model trained on train_v3.
#   heldout.sh TAG SEED GAMES PLAYERS   (files: test_TAG.jsonl, facts_TAGtest, model_TAG.joblib,
#                                        report_test_TAG.md/.json in $WORK)
# Needs round6.sh's training facts ($WORK/facts_v3dev/train).
set -euo pipefail
TAG=$1 SEED=$2 GAMES=$3 PLAYERS=$4
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
[ -d "$WORK/facts_v3dev/train" ] || { echo "run benchmarks/detection/round6.sh first" >&2; exit 2; }
[ -f "$WORK/test_$TAG.jsonl" ] || "$RG" simulate --games "$GAMES" --seed "$SEED" --fraud-rate 0.02 \
    --players "$PLAYERS" --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_$TAG.jsonl" --labels "$WORK/test_$TAG.labels.json"
[ -d "$WORK/facts_${TAG}test" ] || "$PY" "$(dirname "$0")/facts_only.py" "$WORK/test_$TAG.jsonl" \
    "$WORK/facts_${TAG}test"
"$RG" eval --train "$WORK/facts_v3dev/train" --train-labels "$WORK/train_v3.labels.json" \
    --test "$WORK/facts_${TAG}test" --test-labels "$WORK/test_$TAG.labels.json" \
    --save-model "$WORK/model_$TAG.joblib" --report "$WORK/report_test_$TAG.md" --json \
    --workers 2 > "$WORK/report_test_$TAG.json"
