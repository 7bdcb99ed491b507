#!/bin/bash
# Detection round 17 (DETECTION.md): the play mechanisms' learners (card feeding, soft play,
# chip dumping) no longer read the identifier columns (fraud/models.py IDENTITY_BLIND):
# one person's accounts feed each other, and a feeding model that reads shared devices
# ranks a feeding ring of strangers low. Features and training world unchanged (v12); the
# built-in bundle rebuilt from the training world (seed 1101; expected byte-identical) and
# the model scored once on a twelfth fresh held-out world (seed 7601: 120,000 games,
# 36,000 accounts, 2 % fraud, classic + Rummy 500 + Michigan, round 9's protocol).
#   RG=.venv/bin/rummyguard WORK=benchmarks/_work/eval bash benchmarks/detection/round17.sh
set -euo pipefail
exec bash "$(dirname "$0")/rebuild_round.sh" v12 v13 7601
