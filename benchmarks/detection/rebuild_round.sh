#!/bin/bash
# One detection round that rebuilds the built-in model (DETECTION.md rounds 10-11): simulate the
# training world (seed 1101, round6.sh's train_v3 parameters) with the current simulator,
# replay it to facts and rebuild fraud/builtin from it; then simulate a fresh held-out world
# (120,000 games, 36,000 accounts, 2 % fraud, classic + Rummy 500 + Michigan, round 9's
# protocol), replay it to facts and score it once. Worlds and facts already in $WORK are reused.
#   rebuild_round.sh TRAIN_TAG TEST_TAG TEST_SEED
#     (files in $WORK: train_TRAIN_TAG.jsonl, facts_TRAIN_TAGtrain, test_TEST_TAG.jsonl,
#      facts_TEST_TAGtest, model_TEST_TAG.joblib, report_test_TEST_TAG.md/.json)
set -euo pipefail
TRAIN=$1 TEST=$2 SEED=$3
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
HERE=$(dirname "$0")
mkdir -p "$WORK"
[ -f "$WORK/train_$TRAIN.jsonl" ] || "$RG" simulate --games 16000 --seed 1101 --fraud-rate 0.06 \
    --players 3200 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/train_$TRAIN.jsonl" --labels "$WORK/train_$TRAIN.labels.json"
[ -d "$WORK/facts_${TRAIN}train" ] || "$PY" "$HERE/facts_only.py" "$WORK/train_$TRAIN.jsonl" \
    "$WORK/facts_${TRAIN}train"
"$PY" "$HERE/build_builtin.py" --facts "$WORK/facts_${TRAIN}train" \
    --labels "$WORK/train_$TRAIN.labels.json"
[ -f "$WORK/test_$TEST.jsonl" ] || "$RG" simulate --games 120000 --seed "$SEED" --fraud-rate 0.02 \
    --players 36000 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_$TEST.jsonl" --labels "$WORK/test_$TEST.labels.json"
[ -d "$WORK/facts_${TEST}test" ] || "$PY" "$HERE/facts_only.py" "$WORK/test_$TEST.jsonl" \
    "$WORK/facts_${TEST}test"
"$RG" eval --train "$WORK/facts_${TRAIN}train" --train-labels "$WORK/train_$TRAIN.labels.json" \
    --test "$WORK/facts_${TEST}test" --test-labels "$WORK/test_$TEST.labels.json" \
    --save-model "$WORK/model_$TEST.joblib" --report "$WORK/report_test_$TEST.md" --json \
    --workers 2 > "$WORK/report_test_$TEST.json"
