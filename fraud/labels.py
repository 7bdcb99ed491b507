"""The simulator's ground truth (docs/fraud.md, "The simulator's labels file"), as the
sets the models use.

A player is positive for a mechanism if a ``mechanisms`` row names him. A pair is
positive for a pair-level mechanism if both players are in the same ``group_id`` of
that mechanism. ``intensity`` is kept per (mechanism, player) and per (mechanism, pair)
(the pair's is the mean of its members) for "detection vs intensity".

The ``planted`` rows are kept twice: as the set of evidence moves (evidence precision)
and, per (mechanism, group, player), as the games where that player's mechanism acted
(``acted_games``) — the record the "acted positives" view of the evaluation filters on
(fraud/evaluate.py: a labelled subject that never acted in the scored world cannot be
found by any detector, so that view leaves it out).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .models import MECHANISMS


class LabelsError(Exception):
    """A labels file that is missing or not in the contract's shape."""


@dataclass
class Truth:
    player_pos: dict[str, set[str]] = field(default_factory=dict)
    pair_pos: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    player_intensity: dict[tuple[str, str], float] = field(default_factory=dict)
    pair_intensity: dict[tuple[str, tuple[str, str]], float] = field(default_factory=dict)
    planted: set[tuple[str, int]] = field(default_factory=set)
    #: (game_id, seq) -> the players whose mechanism acted there
    planted_by: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    #: (mechanism, group_id) -> members (every group, pairs and rings alike)
    groups: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    #: (mechanism, pair) -> the group ids holding both players (usually one)
    pair_groups: dict[tuple[str, tuple[str, str]], set[str]] = field(default_factory=dict)
    #: (mechanism, group_id, player) -> game ids with a planted event of that player's
    #: mechanism in that group (the labels record the actor, not the partner acted for)
    acted_games: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)
    hard_negatives: dict[str, str] = field(default_factory=dict)  # player -> kind
    players: list[str] = field(default_factory=list)
    seed: int | None = None

    def fraud_players(self) -> set[str]:
        return set().union(*self.player_pos.values()) if self.player_pos else set()


def parse_labels(doc: dict[str, Any]) -> Truth:
    try:
        truth = Truth(seed=doc.get("seed"))
        truth.players = sorted(str(p["player_id"]) for p in doc.get("players", []))
        groups: dict[tuple[str, str], list[tuple[str, float]]] = {}
        for row in doc.get("mechanisms", []):
            mech = row["mechanism"]
            if mech not in MECHANISMS:
                raise LabelsError(f"unknown mechanism {mech!r}")
            pid = str(row["player_id"])
            intensity = float(row.get("intensity", 1.0))
            truth.player_pos.setdefault(mech, set()).add(pid)
            key = (mech, pid)
            truth.player_intensity[key] = max(truth.player_intensity.get(key, 0.0), intensity)
            groups.setdefault((mech, str(row["group_id"])), []).append((pid, intensity))
        for (mech, gid), members in groups.items():
            truth.groups[(mech, gid)] = {pid for pid, _ in members}
            for (a, ia), (b, ib) in itertools.combinations(sorted(members), 2):
                if a == b:
                    continue
                pair = (a, b) if a < b else (b, a)
                truth.pair_pos.setdefault(mech, set()).add(pair)
                truth.pair_intensity[(mech, pair)] = (ia + ib) / 2
                truth.pair_groups.setdefault((mech, pair), set()).add(gid)
        for row in doc.get("planted", []):
            key = (str(row["game_id"]), int(row["seq"]))
            pid = str(row["player_id"])
            truth.planted.add(key)
            truth.planted_by.setdefault(key, set()).add(pid)
            act = (str(row["mechanism"]), str(row["group_id"]), pid)
            truth.acted_games.setdefault(act, set()).add(key[0])
        for row in doc.get("hard_negatives", []):
            truth.hard_negatives[str(row["player_id"])] = str(row["kind"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LabelsError(f"labels file does not follow the contract: {exc!r}") from None
    return truth


def read_labels(path: str | Path) -> Truth:
    p = Path(path)
    if not p.exists():
        raise LabelsError(f"no labels file at {p}")
    if not p.is_file():
        raise LabelsError(f"{p} is not a file (give the labels JSON `simulate --labels` wrote)")
    try:
        doc = orjson.loads(p.read_bytes())
    except OSError as exc:
        raise LabelsError(f"cannot read {p}: {exc}") from None
    except orjson.JSONDecodeError as exc:
        raise LabelsError(f"{p} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise LabelsError(f"{p} is not a labels file: a JSON object is expected, "
                          f"got {type(doc).__name__}")
    # another JSON object (a bundle's manifest.json, `{}`) would read as a world without
    # fraud and score as one, silently (audit 50): the simulator's file has both lists
    missing = [k for k in ("players", "mechanisms") if not isinstance(doc.get(k), list)]
    if missing:
        raise LabelsError(f"{p} is not a labels file (`rummyguard simulate --labels` writes "
                          f"one): it has no {' and no '.join(repr(k) for k in missing)} list")
    return parse_labels(doc)


__all__ = ["LabelsError", "Truth", "parse_labels", "read_labels"]
