#!/bin/bash
# Detection round 10 (DETECTION.md): the built-in model rebuilt after the simulator's audit
# (eighth session: family devices, no tournament tell for dumpers), scored once on a fifth
# fresh held-out world (seed 2727: 120,000 games, 36,000 accounts, 2 % fraud, classic + Rummy
# 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round10.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v4 v6 2727
