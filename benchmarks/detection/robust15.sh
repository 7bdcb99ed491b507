#!/bin/bash
# Robustness of the round-15 built-in model (DETECTION.md "Robustness, round 15"): five worlds
# unlike its training world, on seeds never used before, with the tenth session's parameters
# (Rummy 500 only, Michigan only, classic only, 8 % fraud, all four variants), each scored once
# with `--model builtin` (nothing fitted on them).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/robust15 bash benchmarks/detection/robust15.sh
set -euo pipefail
RG=${RG:-.venv/bin/rummyguard}
WORK=${WORK:-benchmarks/_work/robust15}
mkdir -p "$WORK"
#     name      seed games players fraud variants
WORLDS="r500     7211 20000 6000 0.04 r500
michigan 7221 20000 6000 0.04 michigan
classic  7231 12000 3600 0.04 classic
fraud8   7241 20000 6000 0.08 classic,r500,michigan
allfour  7251 8000  2400 0.04 classic,r500,liverpool,michigan"
while read -r name seed games players fraud variants; do
    [ -f "$WORK/$name.labels.json" ] || "$RG" simulate --games "$games" --seed "$seed" \
        --fraud-rate "$fraud" --players "$players" --variants "$variants" --workers 2 \
        --no-progress --out "$WORK/$name.jsonl" --labels "$WORK/$name.labels.json"
    [ -f "$WORK/report_$name.json" ] || "$RG" eval --test "$WORK/$name.jsonl" \
        --test-labels "$WORK/$name.labels.json" --model builtin --boots 100 --no-lomo \
        --workers 2 --report "$WORK/report_$name.md" --json > "$WORK/report_$name.json"
    echo "$name done $(date -u +%H:%M:%S)"
done <<< "$WORLDS"
