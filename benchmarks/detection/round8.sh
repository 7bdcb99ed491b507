#!/bin/bash
# Detection round 8 (DETECTION.md): a third fresh held-out world with round 6's test
# parameters (seed 9909), simulated and replayed to facts with the code before round 8's
# changes (commit e916c31), scored once by the model trained on train_v3. Needs round6.sh's
# training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round8.sh
set -euo pipefail
exec bash "$(dirname "$0")/heldout.sh" v4 9909 60000 18000
