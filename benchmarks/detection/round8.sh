#!/bin/bash
# Detection round 8 (DETECTION.md): a third fresh held-out world with round 6's test
# parameters (seed 9909), simulated and replayed to facts with the code before round 8's
# changes (commit e916c31), scored once by the model trained on train_v3. Needs round6.sh's
# training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round8.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
[ -d "$WORK/facts_v3dev/train" ] || { echo "run benchmarks/detection/round6.sh first" >&2; exit 2; }
[ -f "$WORK/test_v4.jsonl" ] || "$RG" simulate --games 60000 --seed 9909 --fraud-rate 0.02 \
    --players 18000 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_v4.jsonl" --labels "$WORK/test_v4.labels.json"
[ -d "$WORK/facts_v4test" ] || "$PY" "$(dirname "$0")/facts_only.py" "$WORK/test_v4.jsonl" \
    "$WORK/facts_v4test"
"$RG" eval --train "$WORK/facts_v3dev/train" --train-labels "$WORK/train_v3.labels.json" \
    --test "$WORK/facts_v4test" --test-labels "$WORK/test_v4.labels.json" \
    --save-model "$WORK/model_v4.joblib" --report "$WORK/report_test_v4.md" --json \
    --workers 2 > "$WORK/report_test_v4.json"
