#!/bin/bash
# Detection round 15 (DETECTION.md): mi_reach_z compares a Michigan start's hidden reach with
# the population's for starts with as many of his cards above the visible run (facts: the
# starts' `held`; features v12), and the one-class collusion figure is the pair flags' own
# ranking (the likeliest mechanism's probability; `any_pair` beside it). The built-in model
# rebuilt from the training world (seed 1101, same parameters) and scored once on a tenth
# fresh held-out world (seed 5858: 120,000 games, 36,000 accounts, 2 % fraud, classic +
# Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round15.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v12 v12 5858
