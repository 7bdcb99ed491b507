#!/bin/bash
# Detection round 9 (DETECTION.md): a fourth fresh held-out world, twice the size of rounds
# 6-8's (seed 1515: 120,000 games, 36,000 accounts, 2 % fraud), simulated and replayed to facts
# with the code of commit 5787c69 (the simulator's and the facts' code are those of round 8), then
# scored once by the model trained on train_v3 with the final code of the fifth session. Needs
# round6.sh's training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round9.sh
set -euo pipefail
exec bash "$(dirname "$0")/heldout.sh" v5 1515 120000 36000
