#!/bin/bash
# Detection round 13 (DETECTION.md): the hidden-card shifts of hc_lr fitted on the training
# world's cheaters (models.hc_shifts; features v10, model format 4) and the any-model's player
# flags; the built-in model rebuilt from the training world (seed 1101, same parameters) and
# scored once on an eighth fresh held-out world (seed 8585: 120,000 games, 36,000 accounts,
# 2 % fraud, classic + Rummy 500 + Michigan, round 9's protocol). The development check used
# world 6363 (40,000 games, 12,000 accounts, 2 %), never a test world.
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round13.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v9 v10 8585
