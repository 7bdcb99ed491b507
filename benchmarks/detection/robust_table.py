"""The robustness table of DETECTION.md from `eval --json` reports: per world and mechanism,
the model's PR-AUC [95 % CI] (labelled / acted positives) and P@50; then the acted view's
PR-AUC and the best naive baseline's.

    python benchmarks/detection/robust_table.py benchmarks/_work/robust15 r500 michigan ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

ROWS = ("collusion", "card_feeding", "multi_account", "chip_dumping", "soft_play", "bot",
        "hidden_card", "timeout_abuse")


def _model(block: dict) -> str:
    """PR-AUC [95 % CI] (labelled / acted positives), P@50."""
    model, acted = block["model"], block["acted"]
    lo, hi = model["pr_auc_ci"]
    return (f"{model['pr_auc']:.3f} [{lo:.2f}, {hi:.2f}] ({model['positives']}/{acted['acted']}), "
            f"P@50 {model['p_at_50']:.2f}")


def _acted(block: dict) -> str:
    """The acted view's PR-AUC / the best naive baseline's (all labelled)."""
    acted = block["acted"]
    base = max(block["baseline_winrate"]["pr_auc"], block["baseline_chipflow"]["pr_auc"])
    seen = "no act" if acted["acted"] == 0 else f"{acted['model']['pr_auc']:.3f}"
    return f"{seen} / {base:.3f}"


def main() -> None:
    work, names = Path(sys.argv[1]), sys.argv[2:]
    reports = {n: orjson.loads((work / f"report_{n}.json").read_bytes()) for n in names}
    for title, cell in (("model PR-AUC [95 % CI] (labelled/acted), P@50", _model),
                        ("acted view / best naive baseline (PR-AUC)", _acted)):
        print(f"\n{title}\n")
        print("| mechanism | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for row in ROWS:
            cells = []
            for n in names:
                r = reports[n]
                block = r["collusion"] if row == "collusion" else r["mechanisms"].get(row)
                empty = block is None or block["model"]["positives"] == 0
                cells.append("—" if empty else cell(block))
            print(f"| {row.replace('_', ' ')} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
