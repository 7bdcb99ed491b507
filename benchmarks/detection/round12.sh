#!/bin/bash
# Detection round 12 (DETECTION.md): "held Rummy" signals (a classic player who could declare
# and discarded instead, toward the seat that needed the discard), dump_z's fourth lever and the
# pooled rule as a cross-validated candidate; the built-in model rebuilt from the training world
# (seed 1101, same parameters) and scored once on a seventh fresh held-out world (seed 6262:
# 120,000 games, 36,000 accounts, 2 % fraud, classic + Rummy 500 + Michigan, round 9's protocol).
# The development comparison that chose the 16k training world used seed 6363 (40,000 games,
# 12,000 accounts, 2 %), never a test world.
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round12.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v8 v9 6262
