#!/bin/bash
# Detection round 9 (DETECTION.md): a fourth fresh held-out world, twice the size of rounds
# 6-8's (seed 1515: 120,000 games, 36,000 accounts, 2 % fraud), simulated and replayed to facts
# with the code of commit 5787c69 (the simulator's and the facts' code are those of round 8), then
# scored once by the model trained on train_v3 with the final code of the fifth session. Needs
# round6.sh's training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round9.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
[ -d "$WORK/facts_v3dev/train" ] || { echo "run benchmarks/detection/round6.sh first" >&2; exit 2; }
[ -f "$WORK/test_v5.jsonl" ] || "$RG" simulate --games 120000 --seed 1515 --fraud-rate 0.02 \
    --players 36000 --variants classic,r500,michigan --workers 2 --no-progress \
    --out "$WORK/test_v5.jsonl" --labels "$WORK/test_v5.labels.json"
[ -d "$WORK/facts_v5test" ] || "$PY" "$(dirname "$0")/facts_only.py" "$WORK/test_v5.jsonl" \
    "$WORK/facts_v5test"
"$RG" eval --train "$WORK/facts_v3dev/train" --train-labels "$WORK/train_v3.labels.json" \
    --test "$WORK/facts_v5test" --test-labels "$WORK/test_v5.labels.json" \
    --save-model "$WORK/model_v5.joblib" --report "$WORK/report_test_v5.md" --json \
    --workers 2 > "$WORK/report_test_v5.json"
