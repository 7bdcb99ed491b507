"""Upcasting: stored originals are never rewritten; reads bring them to the current
version through a chain of pure ``v -> v+1`` functions (one per step, no skipping).

>>> upcast({"type": "Drew", "v": 1, "payload": {"from": "pile",
...         "card": {"rank": "10", "suit": "hearts"}}})["payload"]
{'source': 'discard', 'cards': ['TH']}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .cards import legacy_to_code
from .models import CURRENT_VERSION

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]


def drew_v1_to_v2(payload: Payload) -> Payload:
    """``{"from": "deck"|"pile", "card": legacy}`` -> ``{"source", "cards": [code]}``."""
    source = {"deck": "stock", "pile": "discard"}[payload["from"]]
    return {"source": source, "cards": [legacy_to_code(payload["card"])]}


def discarded_v1_to_v2(payload: Payload) -> Payload:
    """``{"card": legacy}`` -> ``{"card": code}``."""
    return {"card": legacy_to_code(payload["card"])}


#: (type, from_version) -> the function that lifts a payload one version.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("Drew", 1): drew_v1_to_v2,
    ("Discarded", 1): discarded_v1_to_v2,
}


def check_chains() -> None:
    """Every type has a gap-free chain from v1 to its current version (run at import)."""
    for type_name, current in CURRENT_VERSION.items():
        for version in range(1, current):
            if (type_name, version) not in UPCASTERS:
                raise RuntimeError(f"upcast chain gap: {type_name} v{version} -> v{version + 1}")
    for type_name, version in UPCASTERS:
        if version >= CURRENT_VERSION.get(type_name, 0):
            raise RuntimeError(f"upcaster beyond the current version: {type_name} v{version}")


check_chains()


def upcast(event: dict[str, Any]) -> dict[str, Any]:
    """Return ``event`` at the current version of its type (a new dict if changed).

    The envelope, including ``hash``, is kept as stored: the hash always covers the
    original bytes, never the upcast form.
    """
    type_name = event["type"]
    version = event["v"]
    current = CURRENT_VERSION[type_name]
    if version == current:
        return event
    payload = event["payload"]
    while version < current:
        payload = UPCASTERS[(type_name, version)](payload)
        version += 1
    return {**event, "v": version, "payload": payload, "upcast_from": event["v"]}
