#!/bin/bash
# Detection round 11 (DETECTION.md): the built-in model rebuilt after the ninth session's
# acceptance check taught the simulator soft play's "delay going out" (issue 7), scored once
# on a sixth fresh held-out world (seed 3131: 120,000 games, 36,000 accounts, 2 % fraud,
# classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round11.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
HERE=$(dirname "$0")
mkdir -p "$WORK"
# the training world (round6.sh's train_v3 parameters) with this simulator, and the bundle
[ -f "$WORK/train_v5.jsonl" ] || "$RG" simulate --games 16000 --seed 1101 --fraud-rate 0.06 \
    --players 3200 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/train_v5.jsonl" --labels "$WORK/train_v5.labels.json"
[ -d "$WORK/facts_v5train" ] || "$PY" "$HERE/facts_only.py" "$WORK/train_v5.jsonl" "$WORK/facts_v5train"
"$PY" "$HERE/build_builtin.py" --facts "$WORK/facts_v5train" --labels "$WORK/train_v5.labels.json"
# the held-out world, simulated and replayed to facts once, then scored once
[ -f "$WORK/test_v7.jsonl" ] || "$RG" simulate --games 120000 --seed 3131 --fraud-rate 0.02 \
    --players 36000 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_v7.jsonl" --labels "$WORK/test_v7.labels.json"
[ -d "$WORK/facts_v7test" ] || "$PY" "$HERE/facts_only.py" "$WORK/test_v7.jsonl" "$WORK/facts_v7test"
"$RG" eval --train "$WORK/facts_v5train" --train-labels "$WORK/train_v5.labels.json" \
    --test "$WORK/facts_v7test" --test-labels "$WORK/test_v7.labels.json" \
    --save-model "$WORK/model_v7.joblib" --report "$WORK/report_test_v7.md" --json \
    --workers 2 > "$WORK/report_test_v7.json"
