"""A game as a readable timeline: one sentence per event, cards with suit symbols,
and every finding next to the move that caused it (for ``rummyguard replay``).

>>> describe({"type": "Drew", "actor": "p2", "payload": {"source": "discard", "cards": ["7H"]}})
'p2 drew 7♥ from the discard pile'
"""

from __future__ import annotations

from typing import Any

from ..events.cards import parse_card, pretty_card
from ..events.timestamps import ts_millis
from .engine import GameRecord
from .rule_text import rule_text


def cards_text(codes: list[str]) -> str:
    return " ".join(pretty_card(parse_card(c)) for c in codes)


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
        return f"{who} declared the poker hand {cards_text(p['cards'])}"
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


def timeline(events: list[dict[str, Any]], record: GameRecord) -> list[dict[str, Any]]:
    """Rows ``{seq, ts, t (seconds since start), actor, type, text, findings}``."""
    from ..events.upcast import upcast

    by_seq: dict[int, list[dict[str, Any]]] = {}
    for f in record.findings:
        by_seq.setdefault(f.seq, []).append({**f.to_dict(), "rule_text": rule_text(f.rule)})
    start = ts_millis(events[0]["ts"]) if events else 0
    rows = []
    for e in events:
        current = upcast(e)
        rows.append({
            "seq": e["seq"], "ts": e["ts"], "t": (ts_millis(e["ts"]) - start) / 1000,
            "actor": e["actor"], "type": e["type"], "text": describe(current),
            "findings": by_seq.pop(e["seq"], []),
        })
    for seq, extra in sorted(by_seq.items()):  # findings at seqs no event holds (e.g. gaps)
        rows.append({"seq": seq, "ts": None, "t": None, "actor": "", "type": "",
                     "text": "(no event)", "findings": extra})
    return rows
