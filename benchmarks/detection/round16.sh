#!/bin/bash
# Detection round 16 (DETECTION.md): a pair's mechanism score is the larger of its own
# probability and its ring link through a common partner (fraud/rings.py,
# close_pair_scores: the two feeders of one receiver feed the receiver, not each other).
# Features and training world unchanged (v12); the built-in bundle rebuilt from the
# training world (seed 1101; expected byte-identical) and the model scored once on an
# eleventh fresh held-out world (seed 7501: 120,000 games, 36,000 accounts, 2 % fraud,
# classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round16.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v12 v12r 7501
