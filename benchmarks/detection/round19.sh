#!/bin/bash
# Detection round 19 (DETECTION.md): hc_lr's discard context is the free choices only
# (hc_tie_z over hc_tie_n, FEATURES_VERSION 13; session 27's development probes). The
# built-in bundle is rebuilt from the training world (seed 1101) and the model scored once
# on a fourteenth fresh held-out world (seed 8303: 120,000 games, 36,000 accounts, 2 %
# fraud, classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round19.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v15 v15 8303
