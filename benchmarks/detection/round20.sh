#!/bin/bash
# Detection round 20 (DETECTION.md): hc_lr reads the next-seat discards as two contexts, the
# free choices (hc_tie_z over hc_tie_n) and the rest (hc_oth_z over hc_oth_n), each at its
# own shift (FEATURES_VERSION 14; session 29's development probes, hc_contexts.py). The
# built-in bundle is rebuilt from the training world (seed 1101) and the model scored once
# on a fifteenth fresh held-out world (seed 8606: 120,000 games, 36,000 accounts, 2 %
# fraud, classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round20.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v15 v16 8606
