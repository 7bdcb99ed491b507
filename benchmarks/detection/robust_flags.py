"""The product path of a robustness world (DETECTION.md): after `ingest` and `scan --model
builtin`, how many flags fall on honest accounts. Reads `rummyguard flags --json` and the
world's labels.

    python benchmarks/detection/robust_flags.py FLAGS.json LABELS.json

"Honest" = no mechanism label (players); not two members of one labelled group (pairs); a
ring with at least one member without a label.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import orjson


def main() -> None:
    doc = orjson.loads(Path(sys.argv[1]).read_bytes())
    labels = orjson.loads(Path(sys.argv[2]).read_bytes())
    flags = doc["flags"] if isinstance(doc, dict) else doc
    groups: dict[str, set[str]] = {}
    for row in labels["mechanisms"]:
        groups.setdefault(row["player_id"], set()).add(row["group_id"])
    counts: Counter[str] = Counter()
    honest: Counter[str] = Counter()
    for f in flags:
        kind, source = f["subject_kind"], f["source"]
        players = f["subject"].split("|")
        key = f"{kind}/{source}"
        counts[key] += 1
        if kind == "player":
            bad = players[0] not in groups
        elif kind == "pair":
            a, b = players
            bad = not (groups.get(a, set()) & groups.get(b, set()))
        else:
            bad = any(p not in groups for p in players)
        honest[key] += bad
    print(orjson.dumps({"flags": dict(sorted(counts.items())),
                        "on_honest_subjects": dict(sorted(honest.items())),
                        "labelled_accounts": len(groups)},
                       option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
