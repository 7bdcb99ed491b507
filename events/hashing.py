"""Canonical form and the per-game hash chain (EVENTS.md "The envelope").

``hash = sha256(JCS(event without "hash"))``, hex; ``prev_hash`` of seq 0 is 64 zeros.
JCS is RFC 8785. Events hold only integers and strings, for which JCS is sorted-key
compact JSON with ECMAScript string escaping and UTF-16 key order; orjson produces
exactly that when every key is ASCII (the common case, checked), and the reference
implementation (``rfc8785``) is used otherwise.

>>> canonical({"b": 1, "a": [True, None, "é"]})
b'{"a":[true,null,"\\xc3\\xa9"],"b":1}'
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from .models import GENESIS_HASH

__all__ = ["GENESIS_HASH", "canonical", "chain", "event_hash", "take_event_hash", "verify_chain"]


class CanonicalError(ValueError):
    """A value outside what JCS (and our contract) can canonicalise."""


def _ascii_keys(value: Any) -> bool:
    if isinstance(value, dict):
        return all(k.isascii() and _ascii_keys(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_ascii_keys(v) for v in value)
    if isinstance(value, float):
        raise CanonicalError("events hold integers only; got a float")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
        raise CanonicalError("integers beyond 2**53 have no exact JCS form")
    return True


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``."""
    if _ascii_keys(value):
        # orjson escapes exactly like ECMAScript (\b \t \n \f \r, \u00XX lowercase
        # for the rest below 0x20, raw UTF-8 otherwise), and ASCII keys sort the same
        # by code point as by UTF-16 unit.
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    import rfc8785  # the reference; only non-ASCII keys take this slow path

    return rfc8785.dumps(value)


#: bound once: the replay hashes every event, and each attribute look-up counts there
_dumps = orjson.dumps
_SORT_KEYS = orjson.OPT_SORT_KEYS
#: an empty SHA-256 state, copied per event: a copy skips the digest look-up OpenSSL 3
#: makes for every new hash object (~20 ns of ~300 per event); never updated itself
_SHA256_EMPTY = hashlib.sha256()


def event_hash(event: dict[str, Any]) -> str:
    """The hash of an event: sha256 over JCS of the event without its ``hash`` key.

    For a *validated* event (integers only, within ±(2**53 - 1): the contract) sorted
    compact orjson output that is pure ASCII is exactly JCS, so the bytes are checked
    instead of walking the event; anything else takes :func:`canonical`.
    """
    return take_event_hash(dict(event))


def take_event_hash(event: dict[str, Any]) -> str:
    """:func:`event_hash` of an event its caller gives up: the ``hash`` member is removed
    from ``event`` itself instead of from a copy (the copy is a quarter of the hash
    check's cost). For readers that parse lines only to replay them and drop them.

    >>> e = chain([{"seq": 0, "type": "GameCreated"}])[0]
    >>> claimed = e["hash"]
    >>> take_event_hash(e) == claimed, "hash" in e
    (True, False)
    """
    event.pop("hash", None)
    out = _dumps(event, None, _SORT_KEYS)
    if not out.isascii():
        out = canonical(event)
    digest = _SHA256_EMPTY.copy()
    digest.update(out)
    return digest.hexdigest()


def chain(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return copies of one game's events (in seq order) with prev_hash and hash set."""
    prev = GENESIS_HASH
    out = []
    for event in events:
        linked = {k: v for k, v in event.items() if k not in ("hash", "prev_hash")}
        linked["prev_hash"] = prev
        linked["hash"] = prev = event_hash(linked)
        out.append(linked)
    return out


def verify_chain(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Check one game's chain; returns ``(seq, problem)`` for every break, in order.

    Problems: a hash that does not match the content, a ``prev_hash`` that does not
    match the previous event's hash (a reorder, a drop or an edit before it), a seq
    gap or repeat, and a chain that is only partly present.
    """
    problems: list[tuple[int, str]] = []
    prev = GENESIS_HASH
    expected_seq = 0
    for event in events:
        seq = event["seq"]
        if seq != expected_seq:
            what = "repeated" if seq < expected_seq else "gap"
            problems.append((seq, f"sequence {what}: expected seq {expected_seq}, got {seq}"))
        expected_seq = seq + 1
        if event.get("hash") is None or event.get("prev_hash") is None:
            problems.append((seq, "event is not chained (hash or prev_hash missing)"))
            prev = event.get("hash") or event_hash(event)
            continue
        if event["prev_hash"] != prev:
            problems.append((seq, "prev_hash does not match the previous event's hash"))
        actual = event_hash(event)
        if actual != event["hash"]:
            problems.append((seq, "hash does not match the event's content"))
        prev = event["hash"]
    return problems
