#!/bin/bash
# Detection round 7 (DETECTION.md): a second fresh held-out world with round 6's test
# parameters (seed 8808), its facts replayed before the detector change, scored once by the
# model trained on train_v3. Needs round6.sh's training facts ($WORK/facts_v3dev/train).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round7.sh
set -euo pipefail
exec bash "$(dirname "$0")/heldout.sh" v3b 8808 60000 18000
