"""A game as a readable timeline: one sentence per event, cards with suit symbols,
and every finding next to the move that caused it (for ``rummyguard replay``).

>>> describe({"type": "Drew", "actor": "p2", "payload": {"source": "discard", "cards": ["7H"]}})
'p2 drew 7♥ from the discard pile'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..events.cards import is_card_code, parse_card, pretty_card
from ..events.timestamps import ts_millis
from .engine import GameEngine, GameRecord
from .rule_text import rule_text


def cards_text(codes: list[str]) -> str:
    """Cards with suit symbols; a card a player's view hides (``??``) stays ``??``."""
    return " ".join(pretty_card(parse_card(c)) if is_card_code(c) else str(c) for c in codes)


def _melds_text(melds: list[dict[str, Any]]) -> str:
    return "  ".join(f"[{cards_text(m['cards'])}]" for m in melds)


def describe(event: dict[str, Any]) -> str:
    """One sentence for an event (current version)."""
    t = event["type"]
    p = event["payload"]
    who = event["actor"]
    if t == "GameCreated":
        return (f"{p['variant']} game at table {p['table_id']}: seats {', '.join(p['seats'])}; "
                f"dealer seat {p['dealer']}; stake {p['stake']}")
    if t == "RoundStarted":
        extra = f" (Fresh redeal {p['redeal']})" if p["redeal"] else ""
        return f"round {p['round']} dealt by seat {p['dealer']}{extra}: {len(p['deck'])} cards"
    if t == "Drew":
        where = "the stock" if p["source"] == "stock" else "the discard pile"
        return f"{who} drew {cards_text(p['cards'])} from {where}"
    if t == "Discarded":
        return f"{who} discarded {cards_text([p['card']])}"
    if t == "DeclaredRummy":
        return f"{who} declared Rummy: {_melds_text(p['melds'])}, discarding {cards_text([p['discard']])}"
    if t in ("Melded",):
        return f"{who} melded a {p['kind']} [{cards_text(p['cards'])}]"
    if t == "LaidDown":
        return f"{who} laid down {_melds_text(p['melds'])}"
    if t == "LaidOff":
        end = f" ({p['end']} end)" if p.get("end") else ""
        return f"{who} laid off {cards_text([p['card']])} on meld {p['meld']}{end}"
    if t == "JokerSwapped":
        return f"{who} gave {cards_text([p['card']])} for the joker of meld {p['meld']}"
    if t == "Bought":
        return f"{who} bought {cards_text([p['card']])} (+{cards_text([p['penalty']])} penalty)"
    if t == "RummyCalled":
        return (f"{who} called Rummy on {cards_text([p['card']])} (meld {p['meld']}), "
                f"discarding {cards_text([p['discard']])}")
    if t == "CardPlayed":
        return f"{who} played {cards_text([p['card']])}"
    if t == "WidowBought":
        return f"{who} bought the widow for {p['price']}"
    if t == "PokerHandDeclared":
        return f"{who} declared a poker hand: {cards_text(p['cards'])}"
    if t == "FreshPressed":
        return f"{who} pressed Fresh"
    if t == "PlayerConnected":
        return f"{who} connected ({p['client']}, device {p['device_hash']}, ip {p['ip_hash']})"
    if t == "PlayerDisconnected":
        return f"{who} disconnected"
    if t == "PlayerLeft":
        return f"{who} left the game"
    if t == "AutoPlayed":
        drew = f"drew {cards_text([p['drew']])}, " if p["drew"] else ""
        return f"system auto-played {p['player']} (strike {p['strike']}): {drew}discarded {cards_text([p['discarded']])}"
    if t == "PlayerRemoved":
        return f"system removed {p['player']} ({p['reason']})"
    if t == "StockReplenished":
        return f"system turned the discard pile into a new stock of {len(p['stock'])} cards"
    if t == "ChipsTransferred":
        return "system claims transfers: " + ", ".join(
            f"{x['from']}→{x['to']} {x['amount']} ({x['reason']})" for x in p["transfers"])
    if t == "RoundEnded":
        return f"system claims round {p['round']} ended: winners {', '.join(p['winners']) or '-'}; scores {p['scores']}"
    if t == "GameEnded":
        return f"system claims the game ended: winners {', '.join(p['winners']) or '-'}; net {p['net']}"
    return f"{who}: {t} {p}"


def _producers(events: list[dict[str, Any]]) -> dict[tuple[int, str, str, str], list[int]]:
    """For each finding a fresh replay of ``events`` raises, the positions of the events
    whose application raised it (in order)."""
    engine = GameEngine()
    made: dict[tuple[int, str, str, str], list[int]] = {}
    for i, event in enumerate(events):
        before = len(engine.findings)
        engine.apply(event)
        for f in engine.findings[before:]:
            made.setdefault((f.seq, f.rule, f.kind, f.message), []).append(i)
    return made


def timeline(events: list[dict[str, Any]], record: GameRecord) -> list[dict[str, Any]]:
    """Rows ``{seq, ts, t (seconds since start), actor, type, text, findings}``.

    A finding sits on the row of its ``seq``. When several events hold that seq (a
    repeated or conflicting event, which the replay skips), it sits on the one whose
    replay raised it — the skipped copy, not the event that was applied — so the row
    shows the move that caused it; findings no event raised go on the first.
    """
    from ..events.upcast import upcast

    positions: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        positions.setdefault(e["seq"], []).append(i)
    producers = (_producers(events) if any(len(v) > 1 for v in positions.values())
                 else {})
    at_row: dict[int, list[dict[str, Any]]] = {}
    orphans: dict[int, list[dict[str, Any]]] = {}
    for f in record.findings:
        shown = {**f.to_dict(), "rule_text": rule_text(f.rule)}
        rows_of_seq = positions.get(f.seq)
        if not rows_of_seq:  # a seq no event holds (a gap, a line that is not an event)
            orphans.setdefault(f.seq, []).append(shown)
            continue
        made = producers.get((f.seq, f.rule, f.kind, f.message))
        row = rows_of_seq[0]
        if made:
            raised = made.pop(0)
            if raised in rows_of_seq:
                row = raised
        at_row.setdefault(row, []).append(shown)
    start = ts_millis(events[0]["ts"]) if events else 0
    rows = []
    for i, e in enumerate(events):
        current = upcast(e)
        rows.append({
            "seq": e["seq"], "ts": e["ts"], "t": (ts_millis(e["ts"]) - start) / 1000,
            "actor": e["actor"], "type": e["type"], "text": describe(current),
            "findings": at_row.get(i, []),
        })
    for seq, extra in sorted(orphans.items()):  # findings at seqs no event holds (e.g. gaps)
        rows.append({"seq": seq, "ts": None, "t": None, "actor": "", "type": "",
                     "text": "(no event)", "findings": extra})
    return rows


# -- the finishing touches of a timeline with lines the replay did not take (replay --json,
# a dispute bundle's report: one code, so the two cannot drift) ---------------------------

def unreplayed_text(obj: dict[str, Any], viewer: str | None) -> str | None:
    """The timeline's sentence for a line of the game that was not replayed, as
    ``viewer`` could see it; None unless the line is a valid event of the contract (a
    chain break, a gap, a conflict): only then does the redaction know its fields."""
    from ..events.models import EventError, validate_event
    from ..events.upcast import upcast
    from .html import redact

    try:
        validate_event(obj)
        shown = upcast(obj) if viewer is None else redact(obj, viewer)
        return f"not replayed: {describe(shown)}"
    except (EventError, KeyError, TypeError, ValueError):
        return None


def mark_kept_back(rows: list[dict[str, Any]], kept_back: dict[int, Any],
                   bad: list[Any], count: int) -> None:
    """Mark, in place, the timeline rows of lines the store holds only in its quarantine
    (``"quarantined"``: the reason code ingest gave): the replay of the store takes them
    where ingest read them, as the replay of the file does, and the agent must still see
    which moves and claims were never stored (verify-log, the views and a dispute bundle
    know only the stored ones). ``rows[:count]`` are the rows of the events, in order; a
    row past them is a seq no event holds, marked if a quarantined line of it is there."""
    for i, line in kept_back.items():
        rows[i]["quarantined"] = line.code
    orphans = {b.seq: b.code for b in bad if b.quarantined and b.seq is not None}
    for row in rows[count:]:
        if row["seq"] in orphans:
            row["quarantined"] = orphans[row["seq"]]


def in_place(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Timeline rows in log order, with each finding at a seq no event holds (a line that
    was not a valid event, a gap) moved to where that seq belongs, not left at the end."""
    events: list[dict[str, Any]] = []
    orphans: list[dict[str, Any]] = []
    for row in rows:
        (orphans if row["ts"] is None else events).append(row)
    for row in orphans:
        at = next((i for i, e in enumerate(events) if e["seq"] > row["seq"]), len(events))
        events.insert(at, row)
    return events


def finish_timeline(rows: list[dict[str, Any]], count: int, lines: dict[int, dict[str, Any]],
                    kept_back: dict[int, Any], bad: list[Any], viewer: str | None) -> None:
    """The rows past the ``count`` rows of the replayed events (seqs no event holds) say
    what their line held (``lines``: seq -> the line's object), as ``viewer`` could see
    it; rows of lines the store kept only in its quarantine are marked
    (:func:`mark_kept_back`). In place."""
    for row in rows[count:]:
        text = unreplayed_text(lines[row["seq"]], viewer) if row["seq"] in lines else None
        if text is not None:
            row["text"] = text
    mark_kept_back(rows, kept_back, bad, count)
