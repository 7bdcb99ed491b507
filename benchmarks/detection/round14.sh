#!/bin/bash
# Detection round 14 (DETECTION.md): a Michigan start's look-alikes match the player's cards
# in the suit (facts; features v11); the built-in model rebuilt from the training world (seed
# 1101, same parameters) and scored once on a ninth fresh held-out world (seed 4747: 120,000
# games, 36,000 accounts, 2 % fraud, classic + Rummy 500 + Michigan, round 9's protocol). The
# development check used world 6363 (40,000 games, 12,000 accounts, 2 %), never a test world.
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round14.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v11 v11 4747
