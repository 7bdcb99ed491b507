#!/bin/bash
# Detection round 7 (DETECTION.md): a second fresh held-out world with round 6's test
# parameters (seed 8808), its facts replayed before the detector change, scored once by the
# model trained on train_v3. Needs round6.sh's training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round7.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
[ -d "$WORK/facts_v3dev/train" ] || { echo "run benchmarks/detection/round6.sh first" >&2; exit 2; }
[ -f "$WORK/test_v3b.jsonl" ] || "$RG" simulate --games 60000 --seed 8808 --fraud-rate 0.02 \
    --players 18000 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_v3b.jsonl" --labels "$WORK/test_v3b.labels.json"
[ -d "$WORK/facts_v3btest" ] || "$PY" "$(dirname "$0")/facts_only.py" "$WORK/test_v3b.jsonl" \
    "$WORK/facts_v3btest"
"$RG" eval --train "$WORK/facts_v3dev/train" --train-labels "$WORK/train_v3.labels.json" \
    --test "$WORK/facts_v3btest" --test-labels "$WORK/test_v3b.labels.json" \
    --save-model "$WORK/model_v3b.joblib" --report "$WORK/report_test_v3b.md" --json \
    --workers 2 > "$WORK/report_test_v3b.json"
