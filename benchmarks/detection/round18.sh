#!/bin/bash
# Detection round 18 (DETECTION.md): no model change. Session 24 renumbered the simulator's
# accounts (a seeded permutation: audit 54), so every world differs from the same seed's
# world before, the training world included: the built-in bundle is rebuilt from the
# renumbered training world (seed 1101) and the model scored once on a thirteenth fresh
# held-out world (seed 7801: 120,000 games, 36,000 accounts, 2 % fraud, classic + Rummy 500
# + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round18.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v14 v14 7801
