#!/bin/bash
# Detection round 6 (DETECTION.md), reproducible from a clone: simulate the worlds, replay the
# held-out world's facts before looking at anything, evaluate on the development world, then
# score the held-out world once. Each step writes into $WORK and is skipped when its output is
# there. About 45 min on 2 cores.
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round6.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
PY=${PY:-$(dirname "$RG")/python}
WORK=${WORK:-benchmarks/_work/eval}
mkdir -p "$WORK"
V=(--variants classic,r500,michigan --workers 2 --no-progress)

sim() {  # name seed games fraud players
    [ -f "$WORK/$1.jsonl" ] || "$RG" simulate --games "$3" --seed "$2" --fraud-rate "$4" \
        --players "$5" "${V[@]}" --out "$WORK/$1.jsonl" --labels "$WORK/$1.labels.json"
}
sim train_v3 1101 16000 0.06 3200   # training world (round 3's parameters)
sim dev_v3 4405 16000 0.04 4000     # development world: may be looked at
sim test_v3 6606 60000 0.02 18000   # held out: twice 2202's size, >= 50 collusion pairs

# the held-out facts, replayed before any detector change (no labels read)
[ -d "$WORK/facts_v3test" ] || "$PY" "$(dirname "$0")/facts_only.py" "$WORK/test_v3.jsonl" \
    "$WORK/facts_v3test"

# development: train on train_v3, score dev_v3 (saves the training facts for the next step)
[ -f "$WORK/report_dev_v3.md" ] || "$RG" eval --train "$WORK/train_v3.jsonl" \
    --train-labels "$WORK/train_v3.labels.json" --test "$WORK/dev_v3.jsonl" \
    --test-labels "$WORK/dev_v3.labels.json" --save-facts "$WORK/facts_v3dev" \
    --report "$WORK/report_dev_v3.md" --json --workers 2 > "$WORK/report_dev_v3.json"

# held out, once
"$RG" eval --train "$WORK/facts_v3dev/train" --train-labels "$WORK/train_v3.labels.json" \
    --test "$WORK/facts_v3test" --test-labels "$WORK/test_v3.labels.json" \
    --save-model "$WORK/model_v3.joblib" --report "$WORK/report_test_v3.md" --json \
    --workers 2 > "$WORK/report_test_v3.json"
