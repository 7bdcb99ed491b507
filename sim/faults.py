"""Platform faults planted on purpose, each with the one finding a replay must give.

The simulator's games replay clean; these are the exceptions, there to exercise the
dispute tools. Each fault changes one game so that exactly one finding appears:

- ``wrong_payout``: one amount of the last ``ChipsTransferred`` is short (the platform
  paid less than the rules give) -> C-CLAIM ``discrepancy`` at that event.
- ``early_autoplay``: the platform auto-plays a turn before both clocks ran out
  (planted during play by the driver, classic) -> CL-AUTOPLAY ``violation``.
- ``skipped_holder``: Michigan's platform lets the wrong player play the next card of a
  sequence (planted during play) -> MI-FOLLOW ``violation``.
- ``tampered_event``: after the game is hash-chained, a ``PlayerConnected`` payload is
  edited (an IP hash swapped, as someone hiding a shared IP would) without re-hashing
  -> LOG-CHAIN ``integrity`` at that event. No rule reads IP hashes, so the chain is
  the only witness — which is the point of the chain.
"""

from __future__ import annotations

from typing import Any

from ..events.hashing import chain
from .population import stable_hash

#: fault -> (expected rule, expected kind)
EXPECTED: dict[str, tuple[str, str]] = {
    "wrong_payout": ("C-CLAIM", "discrepancy"),
    "early_autoplay": ("CL-AUTOPLAY", "violation"),
    "skipped_holder": ("MI-FOLLOW", "violation"),
    "tampered_event": ("LOG-CHAIN", "integrity"),
}
#: faults each variant can carry
FAULTS_FOR: dict[str, tuple[str, ...]] = {
    "classic": ("wrong_payout", "early_autoplay", "tampered_event"),
    "r500": ("wrong_payout", "tampered_event"),
    "liverpool": ("wrong_payout", "tampered_event"),
    "michigan": ("wrong_payout", "skipped_holder", "tampered_event"),
}
#: faults that need the hash chain
NEEDS_CHAIN = frozenset({"tampered_event"})


class FaultError(RuntimeError):
    """A fault could not be planted in this game."""


def wrong_payout(events: list[dict[str, Any]]) -> int:
    """Short-pay one transfer of the game's last ``ChipsTransferred``; returns its seq.

    The biggest payout to a player is cut by a tenth (at least one chip), so the
    logged multiset differs from the computed one by that one entry."""
    for event in reversed(events):
        if event["type"] != "ChipsTransferred":
            continue
        transfers = event["payload"]["transfers"]
        best = max(range(len(transfers)), key=lambda i: transfers[i]["amount"])
        t = transfers[best]
        if t["amount"] < 2:
            continue
        cut = max(1, t["amount"] // 10)
        payload = dict(event["payload"])
        payload["transfers"] = [dict(x) for x in transfers]
        payload["transfers"][best]["amount"] = t["amount"] - cut
        event["payload"] = payload
        return int(event["seq"])
    raise FaultError("no ChipsTransferred to short-pay")


def chain_and_tamper(events: list[dict[str, Any]], seed: int) -> tuple[list[dict[str, Any]], int]:
    """Chain the game, then swap the IP hash of one ``PlayerConnected`` (not the first
    event) without re-hashing. Returns the events and the tampered seq."""
    chained = chain(events)
    targets = [e for e in chained if e["type"] == "PlayerConnected" and e["seq"] > 0]
    if not targets:
        raise FaultError("no PlayerConnected to tamper with")
    victim = targets[seed % len(targets)]
    payload = dict(victim["payload"])
    payload["ip_hash"] = stable_hash("tampered", seed, payload.get("ip_hash", ""))
    victim["payload"] = payload
    return chained, int(victim["seq"])


__all__ = ["EXPECTED", "FAULTS_FOR", "NEEDS_CHAIN", "FaultError", "chain_and_tamper",
           "wrong_payout"]
