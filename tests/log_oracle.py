"""An independent log-level checker of one game's events, written from spec/EVENTS.md and
RULES.md §0/§5 alone (no rummyguard import), to audit the engine's LOG-* findings.

Why a second implementation: the engine folds the envelope checks into its hot loop
(fast paths, skipped checks in the common case); a checker that shares none of that code
can tell whether the fast paths still say what the contract says.

What it checks, per event in the order given (EVENTS.md "The envelope"):

- ``LOG-GAME``: an event of another game than the first event's (skipped); the first
  event taken is not ``GameCreated`` (the replay halts); a second ``GameCreated``.
- ``LOG-SEQ``: ``seq`` contiguous from 0: a repeat or step back (event skipped: it is a
  duplicate or out of order), a jump ahead (a gap; the event is taken).
- ``LOG-CHAIN``: a game is all chained (both hash fields) or all not (an event with one of
  the two fields is one finding, and no other chain check; session 15); ``prev_hash`` is the
  previous taken event's ``hash`` (64 zeros before seq 0); ``hash`` is
  ``sha256(JCS(event without "hash"))`` over the event as written (never its upcast).
- ``LOG-EVENT``: a ``type`` not in the catalog (skipped, the replay goes on), a ``v``
  newer than the catalog's (the replay cannot follow: halt), a type the variant does
  not list (skipped), an ``event_id`` already used by another event of the game
  (EVENTS.md: "globally unique"; RULES.md §5: a duplicate is an integrity finding).

Events after ``GameEnded`` are not a log-level matter (the rules judge moves then).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

GENESIS = "0" * 64

#: EVENTS.md catalog: type -> current version
CATALOG: dict[str, int] = {
    "PlayerConnected": 1, "PlayerDisconnected": 1, "PlayerLeft": 1, "Drew": 2, "Discarded": 2,
    "Melded": 1, "LaidDown": 1, "LaidOff": 1, "JokerSwapped": 1, "DeclaredRummy": 1,
    "FreshPressed": 1, "Bought": 1, "RummyCalled": 1, "WidowBought": 1, "CardPlayed": 1,
    "PokerHandDeclared": 1, "GameCreated": 1, "RoundStarted": 1, "StockReplenished": 1,
    "AutoPlayed": 1, "PlayerRemoved": 1, "ChipsTransferred": 1, "RoundEnded": 1, "GameEnded": 1,
}
_ALL = frozenset({"classic", "r500", "liverpool", "michigan"})
#: EVENTS.md catalog "variants" column (system events and sessions: all variants)
VARIANTS: dict[str, frozenset[str]] = {
    "Drew": frozenset({"classic", "r500", "liverpool"}),
    "Discarded": frozenset({"classic", "r500", "liverpool"}),
    "Melded": frozenset({"r500"}), "LaidDown": frozenset({"liverpool"}),
    "LaidOff": frozenset({"r500", "liverpool"}), "JokerSwapped": frozenset({"r500"}),
    "DeclaredRummy": frozenset({"classic"}), "FreshPressed": frozenset({"classic"}),
    "Bought": frozenset({"liverpool"}), "RummyCalled": frozenset({"liverpool"}),
    "WidowBought": frozenset({"michigan"}), "CardPlayed": frozenset({"michigan"}),
    "PokerHandDeclared": frozenset({"michigan"}),
}


# -- JCS (RFC 8785) for the JSON values events hold: strings, integers, bools, null -------
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _jcs_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jcs(value: Any) -> bytes:
    """RFC 8785 bytes: keys sorted by UTF-16 code units, compact, ECMAScript escaping."""
    return _jcs(value).encode("utf-8")


def _jcs(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > 2**53 - 1:
            raise ValueError("integer outside the I-JSON range")
        return str(value)
    if isinstance(value, str):
        return _jcs_string(value)
    if isinstance(value, list):
        return "[" + ",".join(_jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_jcs_string(k) + ":" + _jcs(value[k]) for k in keys) + "}"
    raise ValueError(f"no JCS form for {type(value).__name__} in an event")


def sha(event: dict[str, Any]) -> str:
    return hashlib.sha256(jcs({k: v for k, v in event.items() if k != "hash"})).hexdigest()


def rechain(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``events`` with a valid chain in list order (a forger's re-chain)."""
    prev, out = GENESIS, []
    for e in events:
        e = {k: v for k, v in e.items() if k not in ("hash", "prev_hash")}
        e["prev_hash"] = prev
        e["hash"] = prev = sha(e)
        out.append(e)
    return out


@dataclass
class Prediction:
    #: every log-level finding (seq, rule), in the order found
    findings: list[tuple[int, str]] = field(default_factory=list)
    #: the seq of the event at which the replay cannot go on (None: it goes on)
    halt_seq: int | None = None

    @property
    def first(self) -> tuple[int, str] | None:
        """The first finding by seq (found order within a seq), as a replay lists them."""
        if not self.findings:
            return None
        low = min(s for s, _ in self.findings)
        return next(f for f in self.findings if f[0] == low)

    def rules_at(self, seq: int) -> list[str]:
        return [r for s, r in self.findings if s == seq]


def predict(events: list[dict[str, Any]]) -> Prediction:
    """The log-level findings of one game's events as given (file order)."""
    p = Prediction()
    game_id: str | None = None
    expected = 0
    prev = GENESIS
    chained: bool | None = None
    ids: dict[str, int] = {}
    variant: str | None = None
    started = False
    for e in events:
        if p.halt_seq is not None:
            break
        seq = e["seq"]
        if game_id is None:
            game_id = e["game_id"]
        elif e["game_id"] != game_id:
            p.findings.append((seq, "LOG-GAME"))
            continue
        if seq < expected:
            p.findings.append((seq, "LOG-SEQ"))
            continue
        if seq > expected:
            p.findings.append((seq, "LOG-SEQ"))
        expected = seq + 1
        has_hash, has_prev = "hash" in e, "prev_hash" in e
        if has_prev != has_hash:  # one link field only: one finding, no other chain check
            p.findings.append((seq, "LOG-CHAIN"))
            if chained is None:
                chained = True
            if has_hash:
                prev = e["hash"]
        else:
            if chained is None:
                chained = has_hash
            if has_hash != chained:
                p.findings.append((seq, "LOG-CHAIN"))
                chained = has_hash
        if has_hash and has_prev:
            if e.get("prev_hash") != prev:
                p.findings.append((seq, "LOG-CHAIN"))
            if sha(e) != e["hash"]:
                p.findings.append((seq, "LOG-CHAIN"))
            prev = e["hash"]
        if e["event_id"] in ids:
            p.findings.append((seq, "LOG-EVENT"))
        ids.setdefault(e["event_id"], seq)
        kind, v = e["type"], e["v"]
        current = CATALOG.get(kind)
        if current is None:
            p.findings.append((seq, "LOG-EVENT"))
            continue
        if v > current:
            p.findings.append((seq, "LOG-EVENT"))
            p.halt_seq = seq
            continue
        if not started:
            started = True
            if kind != "GameCreated":
                p.findings.append((seq, "LOG-GAME"))
                p.halt_seq = seq
                continue
            variant = e["payload"]["variant"]
            continue
        if kind == "GameCreated":
            p.findings.append((seq, "LOG-GAME"))
        elif variant is not None and variant not in VARIANTS.get(kind, _ALL):
            p.findings.append((seq, "LOG-EVENT"))
    return p


def predict_ingest(events: list[dict[str, Any]]) -> list[tuple[str, frozenset[str]]]:
    """Per line of a file (all readable JSON objects), what ingest must do with it
    (EVENTS.md "Ingest rules"): ``("stored", {})``, ``("duplicate", {})`` or
    ``("quarantined", reasons)`` where ``reasons`` holds every reason code that applies
    to the line (the spec does not order them; the store must name one of them). Codes
    are the project's (events/ingest.py REASONS). A quarantined line takes no place:
    the next line of its game must still follow the last *stored* one."""
    by_id: dict[str, bytes] = {}
    taken: set[tuple[str, int]] = set()
    nxt: dict[str, int] = {}
    last: dict[str, str] = {}
    mode: dict[str, bool] = {}
    out: list[tuple[str, frozenset[str]]] = []
    for e in events:
        body = jcs(e)
        eid, gid, seq = e["event_id"], e["game_id"], e["seq"]
        current = CATALOG.get(e["type"])
        if current is None:
            out.append(("quarantined", frozenset({"unknown_type"})))
            continue
        if e["v"] > current:
            out.append(("quarantined", frozenset({"future_version"})))
            continue
        if eid in by_id:
            out.append(("duplicate", frozenset()) if by_id[eid] == body
                       else ("quarantined", frozenset({"conflict_event_id"})))
            continue
        problems: set[str] = set()
        if (gid, seq) in taken:
            problems.add("conflict_seq")
        elif seq > nxt.get(gid, 0):
            problems.add("sequence_gap")
        chained = "hash" in e and "prev_hash" in e
        if ("hash" in e) != ("prev_hash" in e) or mode.get(gid, chained) != chained:
            problems.add("chain_mixed")
        elif chained:
            if e["prev_hash"] != last.get(gid, GENESIS):
                problems.add("chain_break")
            if sha(e) != e["hash"]:
                problems.add("bad_hash")
        if problems:
            out.append(("quarantined", frozenset(problems)))
            continue
        by_id[eid] = body
        taken.add((gid, seq))
        nxt[gid] = seq + 1
        mode[gid] = chained
        if chained:
            last[gid] = e["hash"]
        out.append(("stored", frozenset()))
    return out
