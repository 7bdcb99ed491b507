#!/bin/bash
# Detection round 11 (DETECTION.md): the built-in model rebuilt after the ninth session's
# acceptance check taught the simulator soft play's "delay going out" (issue 7), scored once
# on a sixth fresh held-out world (seed 3131: 120,000 games, 36,000 accounts, 2 % fraud,
# classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round11.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v5 v7 3131
