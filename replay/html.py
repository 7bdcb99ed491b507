"""The HTML replay page: one self-contained file a support agent opens to settle a dispute.

``render_html(events)`` replays a game through :class:`~rummyguard.replay.engine.GameEngine`
one event at a time and writes a page that shows the table after every event (card
faces, hands, stock, discard pile, melds, pots, the variant's extras), a timeline with
the findings marked on it, each finding with its rule text and — for discrepancies —
the claimed and recomputed values side by side, and a summary header.

Why it is built this way:

- **Self-contained and offline.** CSS, JavaScript and data are inlined; no font, CDN
  or network fetch, so the file can be mailed, archived with the dispute and opened
  years later, and it cannot leak anything when opened.
- **Generic over variants.** The page reads only the snapshot key convention of
  :meth:`~rummyguard.replay.variant.Variant.snapshot`; keys it does not know are drawn
  generically (card lists as cards, numbers per player as a table), so a new variant
  shows without touching this module.
- **Small.** A game can run to thousands of events. Each snapshot is stored as a
  patch against the previous one (dict keys changed, lists spliced by common prefix and
  suffix); the browser rebuilds the states with structural sharing.
- **Untrusted text stays text.** Everything from the log (ids, reasons, messages) is
  HTML-escaped here or inserted with ``textContent`` by the script; the embedded JSON
  escapes ``<``, ``>`` and ``&`` so it cannot close its ``<script>`` element.
- **Per-player view.** With ``viewer`` the states are ``snapshot(viewer)`` and events
  that carry cards the viewer could not see (the recorded deck, a stock restock, the
  card another player drew from the stock, a buy's penalty card, another player's auto
  draw or declared poker hand) are redacted to ``??`` before they are embedded, so the
  hidden cards are not in the file at all; nor are the events' ``hash``/``prev_hash``
  (a redacted event's hash would give its card back to anyone trying the 53 codes). Every finding
  is shown in every view (it is the replay's verdict), but a card its message names that
  the viewer could not see is masked too (:func:`mask_findings`).
- **Deterministic.** Same events and arguments give a byte-identical page (no clock,
  no randomness, insertion-ordered JSON).
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from ..events.cards import is_card_code
from ..events.models import IngestLinked
from ..events.upcast import upcast
from .engine import GameEngine
from .findings import DISCREPANCY, INTEGRITY, Finding
from .rule_text import rule_text
from .verify import BadLine, fold, fold_order
from .verify import bad_line_message as bad_message

#: the code a redacted card is shown as (a face-down card on the page)
HIDDEN = "??"

Json = Any
Segment = str | dict[str, Any]


# -- JSON helpers ------------------------------------------------------------------------
def _jsonable(value: Any) -> Json:
    """Plain JSON data (tuples -> lists, sets -> sorted lists, keys -> str), so the
    patches compare what the page will see."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=repr)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _same(a: Json, b: Json) -> bool:
    """JSON equality: ``True`` is not ``1`` and key order counts (Python's ``==`` says
    otherwise), so a patch never loses what the page would show."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(prev: Json, cur: Json) -> list[Any] | None:
    """A patch turning ``prev`` into ``cur`` (None when equal).

    ``["=", value]`` replaces; ``["{", {key: patch}]`` patches a dict whose key order
    is unchanged; ``["[", p, s, items]`` splices a list: ``old[:p] + items + old[len-s:]``.
    :func:`apply_patch` is the inverse, and the page's script implements the same.
    """
    if _same(prev, cur):
        return None
    if isinstance(prev, dict) and isinstance(cur, dict) and list(prev) == list(cur):
        sub = {}
        for key, value in cur.items():
            patch = diff(prev[key], value)
            if patch is not None:
                sub[key] = patch
        return ["{", sub]
    if isinstance(prev, list) and isinstance(cur, list):
        limit = min(len(prev), len(cur))
        p = 0
        while p < limit and _same(prev[p], cur[p]):
            p += 1
        s = 0
        while s < limit - p and _same(prev[len(prev) - 1 - s], cur[len(cur) - 1 - s]):
            s += 1
        middle = cur[p : len(cur) - s]
        if len(middle) >= len(cur):
            return ["=", cur]
        return ["[", p, s, middle]
    return ["=", cur]


def apply_patch(prev: Json, patch: list[Any] | None) -> Json:
    """Apply a :func:`diff` patch (used by the tests to prove the encoding round-trips)."""
    if patch is None:
        return prev
    op = patch[0]
    if op == "=":
        return patch[1]
    if op == "{":
        out = dict(prev)
        for key, sub in patch[1].items():
            out[key] = apply_patch(prev[key], sub)
        return out
    if op == "[":
        _, p, s, items = patch
        return prev[:p] + items + prev[len(prev) - s :]
    raise ValueError(f"unknown patch op {op!r}")


def _script_json(data: Json) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</script>``, no
    HTML-significant characters, no U+2028/2029 (``ensure_ascii``)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- events: redaction and description ------------------------------------------------------
def _current(event: dict[str, Any]) -> dict[str, Any]:
    """The event at its current version, or as logged if the type is unknown."""
    try:
        return upcast(event)
    except (KeyError, TypeError, ValueError):
        return event


def _hidden_list(value: Any) -> list[str]:
    return [HIDDEN] * len(value) if isinstance(value, list) else [HIDDEN]


#: a card code in a finding's message (not the card of a pay-card pool, ``pay:JS``)
_CARD_IN_TEXT = re.compile(r"(?<!pay:)\b(?:[2-9TJQKA][CDHS]|JK)\b")


def mask_findings(findings: list[dict[str, Any]], events: list[dict[str, Any]],
                   viewer: str) -> None:
    """Mask, in place, every card a finding's message names that ``viewer`` could not see
    in the event(s) at the finding's seq: a message speaks from the full state ("ann
    holds 9D, the next card", "the stock's top card is QC"), and the per-player view
    hides others' cards everywhere, not only in the state. A card stays when the
    event, as the viewer sees it (html.redact), shows it; any other card becomes ``??``
    (strict: a table card the event does not show is masked too). A LOG-EVENT message
    names the file and line ingest read; the viewer gets "a line of the log" instead."""
    shown: dict[int, set[str]] = {}
    for event in events:
        _card_codes(redact(event, viewer).get("payload"), shown.setdefault(event["seq"], set()))
    for f in findings:
        message = f["message"]
        if f.get("rule") == "LOG-EVENT":  # the server's file path is not the player's to see
            message = _SOURCE_OF_BAD_LINE.sub("a line of the log", message, count=1)
        elif f.get("rule") == "C-HOLD":  # where a card lies is a hidden card's place
            message = _PLACE_OF_CARD.sub(
                lambda m: m.group(0) if m.group("holder") == viewer else ", which is not in his hand",
                message)
        elif f.get("rule") == "MI-FOLLOW":  # who holds the next card: the same (audit 43)
            message = _HOLDER_OF_NEXT.sub(
                lambda m: m.group(0) if m.group("holder") == viewer else
                "the holder of the next card should have played it", message)
        f["message"] = _masked(message, shown.get(f["seq"], set()))


#: the "SOURCE:LINE" a LOG-EVENT message starts with (replay.verify.bad_line_message)
_SOURCE_OF_BAD_LINE = re.compile(r"^.*?:\d+(?= is not a valid event: )")
#: where a C-HOLD message says the card an event moved really is (Michigan: "p1 plays 4C,
#: which is held by p3" / "in the widow" / "in a dead hand"): the card is in the event, so
#: its code stays, but its place is a hidden card's place (another hand, the widow, a
#: dead hand), which only the holder knows; "already played" is public and stays
_PLACE_OF_CARD = re.compile(
    r", which is (?:held by (?P<holder>[^;]+?)|in the widow|in a dead hand)(?=;|$)")


#: the message of the whole game's chip-transfer comparison (engine: C-CLAIM)
_TRANSFERS = "chip transfers differ"


def claims_so_far(findings: list[dict[str, Any]], events: list[dict[str, Any]],
                  bad: Sequence[BadLine], until: int) -> None:
    """Rewrite, in place, the chip-transfer C-CLAIM findings of a player's view cut at seq
    ``until`` from the comparison of the game *up to* ``until`` (audit 43).

    The engine compares the whole game's claimed transfers with the due ones and puts
    the finding at the first claim that differs, its message listing every difference:
    the stakes' finding at seq 2 named the payout, the winner's, claimed at the end. A
    view at ``until`` shows the findings at seqs up to it; their text may not tell what
    came after. The comparison of the game replayed to ``until`` (claims so far against
    the transfers due so far, as for a log that ends there) gives the finding's message;
    a finding that comparison does not make reads "chip transfers differ". The claimed
    and recomputed rows of the page are the whole game's, so such a finding has none."""
    judged = [f for f in findings
              if f.get("rule") == "C-CLAIM" and str(f.get("message", "")).startswith(_TRANSFERS)]
    if not judged:
        return
    # the game as a log that ends at ``until`` (its claims judged, as verify judges a
    # log cut there; replay's ``until_seq`` leaves claims unjudged)
    placed = [b for b in bad if b.obj is not None and (b.seq or 0) <= until]
    partial = fold([e for e in events if e["seq"] <= until], placed)
    so_far = {f.seq: f.message for f in partial.findings
              if f.rule == "C-CLAIM" and f.message.startswith(_TRANSFERS)}
    for f in judged:
        f["message"] = so_far.get(f["seq"], _TRANSFERS)
        if "details" in f:
            f["details"] = None


#: who a MI-FOLLOW message says holds the next card ("b holds 5C, the next card, and should
#: have played it"): everyone knows which card is next, only its holder knows whose it is
_HOLDER_OF_NEXT = re.compile(
    r"^(?P<holder>.+?) holds \S+, the next card, and should have played it")


def _masked(message: str, visible: set[str]) -> str:
    return _CARD_IN_TEXT.sub(lambda m: m.group(0) if m.group(0) in visible else "??", message)


def _card_codes(value: Any, into: set[str]) -> None:
    """Every card code in a JSON value (an event's payload), added to ``into``."""
    if isinstance(value, str):
        if is_card_code(value):
            into.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _card_codes(item, into)
    elif isinstance(value, list):
        for item in value:
            _card_codes(item, into)


def redact(event: dict[str, Any], viewer: str) -> dict[str, Any]:
    """The event as ``viewer`` could see it (current version): cards he could not see
    become ``??``, as do another player's connection identifiers (``ip_hash``,
    ``device_hash``). Event types this module does not know are kept as logged."""
    event = _current(event)
    payload = event.get("payload")
    if not isinstance(payload, dict):
        return event
    kind, actor = event.get("type"), event.get("actor")
    hide: dict[str, Any] = {}
    if kind == "RoundStarted" and "deck" in payload:
        hide["deck"] = _hidden_list(payload["deck"])
    elif kind == "StockReplenished" and "stock" in payload:
        hide["stock"] = _hidden_list(payload["stock"])
    elif kind == "Drew" and actor != viewer and payload.get("source") == "stock":
        hide["cards"] = _hidden_list(payload.get("cards"))
    elif kind == "Bought" and actor != viewer and "penalty" in payload:
        hide["penalty"] = HIDDEN
    elif kind == "AutoPlayed" and payload.get("player") != viewer and payload.get("drew") is not None:
        hide["drew"] = HIDDEN
    elif kind == "PokerHandDeclared" and actor != viewer and "cards" in payload:
        hide["cards"] = _hidden_list(payload["cards"])
    elif kind == "PlayerConnected" and actor != viewer:
        # nobody at a table sees another player's IP or device: they are the platform's
        # (and the multi-account detector's) identifiers, and a short hash of an IP can
        # be reversed by trying addresses
        hide.update({k: HIDDEN for k in ("ip_hash", "device_hash") if k in payload})
    if not hide:
        return event
    return {**event, "payload": {**payload, **hide}, "redacted": sorted(hide)}


def _unhashed(event: dict[str, Any]) -> dict[str, Any]:
    """The event without ``hash`` and ``prev_hash``, for a player's view.

    A hash names the event it was made from: with every other field of a redacted
    event in view, trying the 53 card codes (or the few thousand five-card hands) until
    one gives the hash recovers the hidden card, and the next event's ``prev_hash`` is
    that same hash. So a per-player page carries no hash at all; the chain is verified
    by the replay (``meta.chained``) and shown in full in the omniscient page.
    """
    if "hash" not in event and "prev_hash" not in event:
        return event
    return {k: v for k, v in event.items() if k not in ("hash", "prev_hash")}


def _card(code: Any) -> Segment:
    return {"c": code} if is_card_code(code) or code == HIDDEN else str(code)


def _cards(codes: Any) -> list[Segment]:
    if not isinstance(codes, list):
        return [_card(codes)]
    return [_card(code) for code in codes]


def _melds(melds: Any) -> list[Segment]:
    out: list[Segment] = []
    for k, meld in enumerate(melds if isinstance(melds, list) else []):
        if k:
            out.append(" · ")
        if isinstance(meld, dict):
            out.append(f"{meld.get('kind', 'meld')} ")
            out.extend(_cards(meld.get("cards", [])))
        else:
            out.append(str(meld))
    return out


def _generic(value: Any) -> list[Segment]:
    """Any payload value as segments: card codes become cards."""
    if isinstance(value, list) and value and all(is_card_code(v) or v == HIDDEN for v in value):
        return _cards(value)
    if isinstance(value, str) and (is_card_code(value) or value == HIDDEN):
        return [_card(value)]
    return [json.dumps(value, ensure_ascii=False, separators=(", ", ": "))]


def _players(value: Any) -> str:
    return ", ".join(str(p) for p in value) if isinstance(value, list) and value else "nobody"


def _amounts(value: Any) -> str:
    if not isinstance(value, dict) or not value:
        return "none"
    return ", ".join(f"{k} {v:+d}" if isinstance(v, int) else f"{k} {v}" for k, v in value.items())


def describe(event: dict[str, Any], seats: Sequence[str] = ()) -> list[Segment]:
    """One line a person reads for an event: text and ``{"c": code}`` card segments."""
    try:
        return _describe(_current(event), seats)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return _describe_generic(event)


def _describe_generic(event: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = [f"{event.get('actor', '?')}: {event.get('type', '?')}"]
    payload = event.get("payload")
    if isinstance(payload, dict):
        for key, value in payload.items():
            out.append(f" {key}=")
            out.extend(_generic(value))
    return out


def _describe(e: dict[str, Any], seats: Sequence[str]) -> list[Segment]:
    kind, actor, p = e["type"], e["actor"], e["payload"]
    if kind == "GameCreated":
        dealer = p["seats"][p["dealer"]] if 0 <= p["dealer"] < len(p["seats"]) else p["dealer"]
        return [f"Game created: {p['variant']} at table {p['table_id']}, seats {_players(p['seats'])}; "
                f"dealer {dealer}; stake {p['stake']}"]
    if kind == "RoundStarted":
        dealer = seats[p["dealer"]] if 0 <= p["dealer"] < len(seats) else p["dealer"]
        redeal = f" (redeal {p['redeal']})" if p.get("redeal") else ""
        return [f"Round {p['round']} dealt by {dealer}{redeal}: {len(p['deck'])} cards shuffled"]
    if kind == "StockReplenished":
        return [f"Stock replenished from the discard pile: {len(p['stock'])} cards"]
    if kind == "PlayerConnected":
        return [f"{actor} connected ({p.get('client', '?')})"]
    if kind == "PlayerDisconnected":
        return [f"{actor} disconnected"]
    if kind == "PlayerLeft":
        return [f"{actor} left the table"]
    if kind == "Drew":
        where = "the stock" if p["source"] == "stock" else "the discard pile"
        return [f"{actor} drew ", *_cards(p["cards"]), f" from {where}"]
    if kind == "Discarded":
        return [f"{actor} discarded ", _card(p["card"])]
    if kind == "Melded":
        return [f"{actor} melded a {p['kind']}: ", *_cards(p["cards"])]
    if kind == "LaidDown":
        return [f"{actor} laid down: ", *_melds(p["melds"])]
    if kind == "LaidOff":
        end = f" ({p['end']} end)" if p.get("end") else ""
        return [f"{actor} laid off ", _card(p["card"]), f" on meld #{p['meld']}{end}"]
    if kind == "JokerSwapped":
        return [f"{actor} gave ", _card(p["card"]), f" for the joker of meld #{p['meld']}"]
    if kind == "DeclaredRummy":
        return [f"{actor} declared Rummy: ", *_melds(p["melds"]), "; discarded ", _card(p["discard"])]
    if kind == "FreshPressed":
        return [f"{actor} pressed Fresh"]
    if kind == "Bought":
        return [f"{actor} bought ", _card(p["card"]), " with the penalty card ", _card(p["penalty"])]
    if kind == "RummyCalled":
        return [f"{actor} called Rummy on ", _card(p["card"]), f" (meld #{p['meld']}); discarded ",
                _card(p["discard"])]
    if kind == "WidowBought":
        return [f"{actor} bought the widow for {p['price']} chip{'' if p['price'] == 1 else 's'}"]
    if kind == "CardPlayed":
        return [f"{actor} played ", _card(p["card"])]
    if kind == "PokerHandDeclared":
        return [f"{actor} declared a poker hand: ", *_cards(p["cards"])]
    if kind == "AutoPlayed":
        drew: list[Segment] = ["drew ", _card(p["drew"])] if p.get("drew") is not None else ["no draw"]
        return [f"Auto-play for {p['player']} (strike {p['strike']}): ", *drew, ", discarded ",
                _card(p["discarded"])]
    if kind == "PlayerRemoved":
        return [f"{p['player']} removed ({p['reason']})"]
    if kind == "ChipsTransferred":
        moves = [f"{t['from']} → {t['to']} {t['amount']} ({t.get('reason', '')})" for t in p["transfers"]]
        more = f" … +{len(moves) - 6} more" if len(moves) > 6 else ""
        return ["Chips claimed: " + "; ".join(moves[:6]) + more]
    if kind == "RoundEnded":
        return [f"Round {p['round']} ended (claimed): winners {_players(p['winners'])}; "
                f"scores {_amounts(p['scores'])}"]
    if kind == "GameEnded":
        return [f"Game ended (claimed): winners {_players(p['winners'])}; net {_amounts(p['net'])}"]
    return _describe_generic(e)


# -- claimed vs recomputed ------------------------------------------------------------------
_PAIR = re.compile(
    r"(?:(?P<label>[^:;,]+?):\s+)?claimed\s+(?P<claimed>\[[^\]]*\]|\{[^}]*\}|[^,;]+?),\s+"
    r"recomputed\s+(?P<recomputed>\[[^\]]*\]|\{[^}]*\}|[^,;]+?)(?=[,;]|$)"
)
_CLAIMS = re.compile(r"^(?P<what>.+?) claims (?P<claimed>.+?); by the rules (?P<recomputed>.+)$")


def parse_claims(message: str) -> list[list[str]]:
    """``[label, claimed, recomputed]`` rows read from a discrepancy message (the engine
    and the variants write ``label: claimed X, recomputed Y``)."""
    rows = [
        [(m["label"] or "value").strip(), m["claimed"].strip(), m["recomputed"].strip()]
        for m in _PAIR.finditer(message)
    ]
    if not rows and (m := _CLAIMS.match(message)):
        rows.append([m["what"].strip(), m["claimed"].strip(), m["recomputed"].strip()])
    return rows


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def _claim_rows(engine: GameEngine, event: dict[str, Any]) -> dict[str, list[list[str]]]:
    """The structured comparison for the engine's own claim events, right after they
    are applied: rows per topic (``winners``, ``scores``, ``net``)."""
    variant = engine.variant
    if variant is None:
        return {}
    p = event["payload"]
    if event["type"] == "RoundEnded":
        result = variant.round_result(p["round"])
        if result is None:
            return {"ended": [[f"round {p['round']} ended", "yes", "no (not by the rules)"]]}
        winners, scores = result
        return {
            "winners": [["winners", _fmt(sorted(p["winners"])), _fmt(sorted(winners))]],
            "scores": [[f"score {k}", _fmt(p["scores"].get(k)), _fmt(scores.get(k))]
                       for k in sorted(set(p["scores"]) | set(scores))],
        }
    if event["type"] == "GameEnded":
        net = engine.net()
        return {
            "ended": [["game over", "yes", "yes" if variant.is_over() else "no"]],
            "winners": [["winners", _fmt(sorted(p["winners"])), _fmt(sorted(variant.winners()))]],
            "net": [[f"net {k}", _fmt(p["net"].get(k)), _fmt(net.get(k, 0))]
                    for k in sorted(set(p["net"]) | set(net))],
        }
    return {}


def _topic(message: str) -> str | None:
    if " winners: " in message:
        return "winners"
    if " scores: " in message:
        return "scores"
    if message.startswith("net differs"):
        return "net"
    if " claims " in message:
        return "ended"
    return None


def _transfer_rows(engine: GameEngine) -> list[list[str]]:
    """C-CLAIM over the whole game's transfers: per (from, to), the claimed amounts vs
    the recomputed ones, for the pairs that differ."""
    if engine.ctx is None:
        return []
    claimed: dict[tuple[str, str], Counter[int]] = {}
    for _, (src, dst, amount) in engine.claimed:
        claimed.setdefault((src, dst), Counter())[amount] += 1
    due: dict[tuple[str, str], Counter[int]] = {}
    for t in engine.ctx.transfers:
        due.setdefault((t.src, t.dst), Counter())[t.amount] += 1
    rows = []
    for pair in sorted(set(claimed) | set(due)):
        a, b = claimed.get(pair, Counter()), due.get(pair, Counter())
        if a != b:
            rows.append([f"{pair[0]} → {pair[1]}", _amount_list(a), _amount_list(b)])
    return rows


def _amount_list(amounts: Counter[int]) -> str:
    items = sorted(amounts.elements())
    return " + ".join(str(n) for n in items) if items else "none"


def _details(finding: Finding, rows_by_topic: dict[str, list[list[str]]] | None,
             transfer_rows: list[list[str]] | None) -> list[list[str]] | None:
    """Claimed/recomputed rows for a discrepancy: a ``details`` dict on the finding if a
    variant provides one, the engine's structured claim, or the message parsed."""
    extra = getattr(finding, "details", None)
    if isinstance(extra, dict) and "claimed" in extra and "recomputed" in extra:
        return [[str(extra.get("label", "value")), _fmt(extra["claimed"]), _fmt(extra["recomputed"])]]
    if finding.kind != DISCREPANCY:
        return None
    if transfer_rows is not None and finding.message.startswith("chip transfers differ"):
        return transfer_rows or None
    if rows_by_topic:
        topic = _topic(finding.message)
        if topic in rows_by_topic:
            rows = rows_by_topic[topic]
            return [r for r in rows if r[1] != r[2]] or rows
    return parse_claims(finding.message) or None


# -- the report model -------------------------------------------------------------------------
def _in_fold_order(events: Sequence[dict[str, Any]],
                   bad: Sequence[BadLine]) -> Iterator[tuple[dict[str, Any], BadLine | None]]:
    """The game's events with its placed bad lines (``obj`` set) where ``verify`` takes
    them: ``(event, None)`` or ``(line's object, line)``, in the very order of
    :func:`~rummyguard.replay.verify.fold_order` (a file's line where the file had it,
    ``position``, not by its seq: a line before the event of its own seq halts the
    replay there in ``verify`` and ``replay --json``, and so it does on the page)."""
    return fold_order(list(events), bad)


def _bad_row(obj: dict[str, Any], line: BadLine, viewer: str | None) -> tuple[str, dict[str, Any]]:
    """The page's sentence and embedded object for a line that is not a valid event.
    A player's view embeds only its envelope: its payload may hold cards he never saw.
    Its sentence is the LOG-EVENT finding's, as :func:`mask_findings` shows it to him: "a
    line of the log" for the server's file and line, ``??`` for any card its reason names
    (nothing of the line's payload is in his view to show it)."""
    if viewer is None:
        return bad_message(line), obj
    shown = {k: v for k, v in obj.items() if k not in ("payload", "hash", "prev_hash")}
    text = _SOURCE_OF_BAD_LINE.sub("a line of the log", bad_message(line), count=1)
    return _masked(text, set()), shown


def build_report(events: Sequence[dict[str, Any]], viewer: str | None = None,
                 bad: Sequence[BadLine] = (), *, until: int | None = None,
                 kept_back: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Replay ``events`` and gather everything the page shows, as JSON-able data.

    Returns ``meta`` (summary), ``events`` (each with index, seq, type, actor, ts, a
    description and the event as embedded), ``patches`` (snapshot after event ``i`` as a
    patch of the one after ``i-1``; the first a full value) and ``findings`` (each with
    the event index it belongs to, its rule text and claimed/recomputed rows).

    ``bad``: the game's lines that are not valid events (as ``rummyguard verify`` reads
    them). Those that name their seq take their place in the replay and on the page
    (one row each, a LOG-EVENT finding, a halt if the replay cannot follow them), the
    others are LOG-EVENT findings at their seq: the page's findings are ``verify``'s.

    ``until``: the game as it stood right after seq ``until`` (a player's view at
    ``--at``): the rows end at the first row of a later seq, and nothing after them is
    in the report — no later event, state or finding (those at a seq up to ``until`` are
    the whole game's, as the timeline shows them), and the results, the halt and the
    verdict are the game's so far (``meta.until`` says where it was cut).

    ``kept_back``: the events (by index in ``events``) that the store holds only in its
    quarantine, with ingest's reason (``replay --db`` folds them in where ingest read
    them, as a replay of the file meets them): their rows say "not stored", as do the
    rows of bad lines from the quarantine (``BadLine.quarantined``).
    """
    if not events and not any(b.obj is not None for b in bad):
        raise ValueError("no events to render")
    #: with ``until``: the first row past it, and the results right before that row
    cut: int | None = None
    cut_results: dict[str, Any] | None = None
    engine = GameEngine()
    seats: list[str] = []
    out_events: list[dict[str, Any]] = []
    patches: list[Any] = []
    #: id(finding) -> (event index it belongs to, claimed/recomputed rows); the record
    #: holds the same objects (ordered by seq), plus the end-of-game transfer check
    found: dict[int, tuple[int, list[list[str]] | None]] = {}
    prev: Json = None
    halt_index: int | None = None
    seq_index: dict[int, int] = {}
    event_index = -1  # the index in ``events`` of the last row that is one of them
    for i, (event, line) in enumerate(_in_fold_order(events, bad)):
        if line is None:
            event_index += 1
        row_seq = event.get("seq")
        if (until is not None and cut is None and isinstance(row_seq, int)
                and row_seq > until):
            cut, cut_results = i, _results_so_far(engine)
        before = len(engine.findings)
        if line is None:
            engine.apply(event)
        else:
            engine.unreadable(event, line.code, bad_message(line))
        if engine.ctx is not None and not seats:
            seats = list(engine.ctx.seats)
            if viewer is not None and viewer not in seats:
                raise ValueError(f"{viewer!r} is not seated at this game (seats: {', '.join(seats)})")
        if halt_index is None and engine.halted:
            halt_index = i
        seq = event.get("seq")
        if isinstance(seq, int):
            seq_index.setdefault(seq, i)  # the first row of a seq, as the timeline's
        new = engine.findings[before:]
        rows_by_topic = None
        if any(f.kind == DISCREPANCY for f in new) and event.get("type") in ("RoundEnded", "GameEnded"):
            rows_by_topic = _claim_rows(engine, _current(event))
        for f in new:
            found[id(f)] = (seq_index.get(f.seq, i) if f.seq != seq else i, _details(f, rows_by_topic, None))
        if cut is not None:  # past ``until``: replayed for the findings up to it, not shown
            continue
        state = engine.variant.snapshot(viewer) if engine.variant is not None else {}
        state = _jsonable(state)
        patches.append(["=", state] if i == 0 else diff(prev, state))
        prev = state
        if line is None:
            shown = event if viewer is None else _unhashed(redact(event, viewer))
            desc = describe(shown, seats)
        else:
            text, shown = _bad_row(event, line, viewer)
            desc = [text]
        reason = (line.code if line.quarantined else None) if line is not None else (
            (kept_back or {}).get(event_index))
        if reason is not None:
            desc = [*desc, f" — not stored: quarantined by ingest ({reason})"]
        out_events.append({
            "i": i,
            "seq": seq,
            "type": str(event.get("type", "?")),
            "actor": str(event.get("actor", "?")),
            "ts": str(event.get("ts", "")),
            "desc": desc,
            "event": _jsonable(shown),
            **({} if reason is None else {"quarantined": reason}),
        })
    if viewer is not None and not seats:
        raise ValueError("the log has no GameCreated: there is no seat to view it from")
    record = engine.record()
    unplaced = [Finding(b.seq if b.seq is not None else record.last_seq, "LOG-EVENT", INTEGRITY,
                        bad_message(b)) for b in bad if b.obj is None]
    if unplaced:  # where verify puts them: in seq order, after the engine's at a seq
        record.findings = sorted([*record.findings, *unplaced], key=lambda f: f.seq)
    transfer_rows = _transfer_rows(engine)
    findings = []
    for f in record.findings:
        anchor, rows = found.get(id(f)) or (_anchor(seq_index, f.seq, len(out_events)),
                                            _details(f, None, transfer_rows))
        findings.append({
            "i": anchor,
            "seq": f.seq,
            "rule": f.rule,
            "kind": f.kind,
            "message": f.message,
            "rule_text": rule_text(f.rule),
            "details": rows,
        })
    results = _jsonable(record.results.to_dict())
    halted = record.halted
    if cut is not None:  # nothing past ``until``: its rows, states, findings, results
        if cut == 0:
            raise ValueError(f"no event at or before seq {until} in game {record.game_id!r}")
        out_events, patches = out_events[:cut], patches[:cut]
        findings = [f for f in findings if f["i"] < cut and f["seq"] <= until]
        results = _jsonable(cut_results)
        if halt_index is not None and halt_index >= cut:
            halt_index = None
        halted = halt_index is not None
    if viewer is not None:  # a finding speaks from the full state: the view masks it too
        if cut is not None and until is not None:
            claims_so_far(findings, events, bad, until)
        mask_findings(findings, events, viewer)
    findings.sort(key=lambda f: f["i"])  # stable: the record's order within an event
    for k, f in enumerate(findings):
        f["n"] = k
    first = events[0] if events else {}
    created = _current(first).get("payload", {}) if first.get("type") == "GameCreated" else {}
    counts = Counter(f["kind"] for f in findings)
    meta = {
        "game_id": record.game_id,
        "variant": record.variant,
        "table_id": created.get("table_id"),
        "seats": seats,
        "dealer": created.get("dealer"),
        "stake": created.get("stake"),
        "rules": _jsonable(created.get("rules", {})),
        "viewer": viewer,
        "clean": not findings,
        "halted": halted,
        "halt_index": halt_index,
        "chained": record.chained,
        # the store chained the game at ingest (its producer sent no hash fields): the
        # store's own links were verified (`IngestLinked`), the producer's chain is none
        "chained_at_ingest": any(type(e) is IngestLinked for e in events),
        "kinds": dict(sorted(counts.items())),
        "results": results,
        "count": len(out_events),
        **({} if until is None else {"until": until}),
    }
    return {"meta": meta, "events": out_events, "patches": patches, "findings": findings}


def _results_so_far(engine: GameEngine) -> dict[str, Any]:
    """``winners``, ``net`` and ``scores`` of the game as the engine holds it now, as
    :meth:`GameEngine.record` gives them (without closing the fold)."""
    if engine.ctx is None or engine.variant is None:
        return {"winners": [], "net": {}, "scores": {}}
    return {"winners": engine.variant.winners(), "net": engine.net(),
            "scores": engine.variant.scores()}


def _anchor(seq_index: dict[int, int], seq: int, count: int) -> int:
    """The row of a finding no row raised: the first row of its seq, else the last row
    before it (a line of the game that is not on the page, a gap), else the first."""
    if seq in seq_index:
        return seq_index[seq]
    before = [i for s, i in seq_index.items() if s < seq]
    return max(before) if before else min(seq_index.values(), default=count - 1)


# -- the page -----------------------------------------------------------------------------------
def _asset(name: str) -> str:
    return resources.files("rummyguard.replay").joinpath(name).read_text(encoding="utf-8")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _signed(n: Any) -> str:
    return f"{n:+d}" if isinstance(n, int) else _e(_fmt(n))


def _header_html(report: dict[str, Any], title: str) -> str:
    meta = report["meta"]
    res = meta["results"]
    winners = set(res.get("winners", []))
    scores = res.get("scores", {})
    if meta["clean"]:
        verdict = '<span class="badge badge-clean" data-testid="verdict">Clean — no findings</span>'
    else:
        n = len(report["findings"])
        parts = ", ".join(f"{v} {_e(k)}" for k, v in meta["kinds"].items())
        verdict = (f'<span class="badge badge-dirty" data-testid="verdict">{n} finding'
                   f'{"s" if n != 1 else ""} ({parts})</span>')
    halted = ""
    if meta["halted"]:
        hi = meta["halt_index"]
        at = report["events"][hi]["seq"] if hi is not None else "?"
        halted = f'<span class="badge badge-halted" data-testid="halted">Replay halted at seq {_e(at)}</span>'
    view = ("Omniscient view (all cards)" if meta["viewer"] is None
            else f"As seen by {_e(meta['viewer'])}")
    if meta.get("until") is not None:
        view += f" up to seq {_e(meta['until'])}"
    rows = []
    for seat, pid in enumerate(meta["seats"]):
        net = res.get("net", {}).get(pid)
        cls = "pos" if isinstance(net, int) and net > 0 else "neg" if isinstance(net, int) and net < 0 else ""
        star = '<span class="winner-mark" aria-label="winner">★ winner</span>' if pid in winners else ""
        score = f"<td>{_e(scores[pid])}</td>" if scores else ""
        rows.append(f'<tr><td>{seat}</td><th scope="row">{_e(pid)}</th><td>{star}</td>'
                    f'<td class="num {cls}">{_signed(net)}</td>{score}</tr>')
    score_head = "<th>Score</th>" if scores else ""
    rules = ", ".join(f"{_e(k)}={_e(json.dumps(v))}" for k, v in meta["rules"].items()) or "defaults"
    chained = {True: "yes (producer hashes verified)", False: "no (unchained)", None: "—"}[meta["chained"]]
    if meta.get("chained_at_ingest"):
        chained = ("no producer hashes; chained by the store at ingest (its links verified)"
                   if meta["chained"] is False else
                   "mixed: chained by the store at ingest, with producer hashes on kept-back lines")
    last_seq = report["events"][-1]["seq"]
    so_far = "" if meta.get("until") is None else f" so far (after seq {_e(last_seq)})"
    return f"""
<header class="rg-header">
  <div class="rg-headline">
    <div>
      <h1 data-testid="title">{_e(title)}</h1>
      <p class="rg-sub">Game <code>{_e(meta['game_id'])}</code> · table <code>{_e(meta['table_id'] or '—')}</code></p>
    </div>
    <div class="rg-badges">
      <span class="badge badge-variant" data-testid="variant">{_e(meta['variant'] or '?')}</span>
      {verdict}
      {halted}
      <span class="badge badge-view" data-testid="view">{view}</span>
    </div>
  </div>
  <div class="rg-summary">
    <table class="rg-players" data-testid="players">
      <caption>Players and recomputed result{so_far}</caption>
      <thead><tr><th>Seat</th><th>Player</th><th>Result</th><th>Net chips</th>{score_head}</tr></thead>
      <tbody>{''.join(rows)}</tbody>
    </table>
    <dl class="rg-facts">
      <dt>Winners</dt><dd data-testid="winners">{_e(_players(sorted(winners)))}</dd>
      <dt>Stake</dt><dd>{_e(meta['stake'] if meta['stake'] is not None else '—')}</dd>
      <dt>Events</dt><dd>{meta['count']} (seq {_e(report['events'][0]['seq'])}–{_e(last_seq)})</dd>
      <dt>Rules</dt><dd>{rules}</dd>
      <dt>Hash chain</dt><dd>{chained}</dd>
    </dl>
  </div>
</header>"""


def finding_html(f: dict[str, Any]) -> str:
    """One finding as a list item: rule, kind, message, rule text, claimed vs recomputed."""
    table = ""
    if f["details"]:
        body = "".join(
            f'<tr><th scope="row">{_e(label)}</th><td class="claimed">{_e(c)}</td>'
            f'<td class="recomputed">{_e(r)}</td></tr>'
            for label, c, r in f["details"]
        )
        table = ('<table class="cmp" data-testid="cmp"><thead><tr><th></th><th>Claimed by the platform</th>'
                 f"<th>Recomputed by the replay</th></tr></thead><tbody>{body}</tbody></table>")
    text = (f'<blockquote class="rule-text" data-testid="rule-text">{_e(f["rule_text"])}</blockquote>'
            if f["rule_text"] else "")
    return (
        f'<li class="finding kind-{_e(f["kind"])}" data-index="{f["i"]}" data-n="{f["n"]}" '
        f'id="finding-{f["n"]}">'
        f'<div class="finding-head"><button type="button" class="finding-jump" data-index="{f["i"]}" '
        f'title="Show the table at this event">seq {_e(f["seq"])}</button>'
        f'<span class="rule" data-testid="rule">{_e(f["rule"])}</span>'
        f'<span class="kind">{_e(f["kind"])}</span></div>'
        f'<p class="msg" data-testid="message">{_e(f["message"])}</p>{text}{table}</li>'
    )


def _findings_html(report: dict[str, Any]) -> str:
    if not report["findings"]:
        return ('<p class="rg-clean" data-testid="no-findings">No findings: every move follows the rules '
                "and every claim matches the replay.</p>")
    items = "".join(finding_html(f) for f in report["findings"])
    return f'<ol class="findings-list" data-testid="findings">{items}</ol>'


def render_html(
    events: list[dict[str, Any]],
    *,
    viewer: str | None = None,
    at: int | None = None,
    title: str | None = None,
    bad: Sequence[BadLine] = (),
    until: int | None = None,
    kept_back: Mapping[int, str] | None = None,
) -> str:
    """The replay page for one game's events (in seq order), as one HTML string.

    ``viewer``: a seated player id: show only what he could see (ValueError if he is
    not seated). ``at``: the page opens right after the last event with ``seq <= at``
    (default: the first finding, else the last event; ValueError if there is none). ``title``:
    the page heading (default ``Replay of game <id>``). ``bad``: the game's lines that
    are not valid events, as :func:`build_report` takes them. ``until``: the page holds
    the game only up to that seq, as :func:`build_report` cuts it (``replay --as P --at
    S`` cuts at S: the player is shown nothing that happened after it). ``kept_back``:
    events the store holds only in its quarantine, as :func:`build_report` marks them.
    """
    report = build_report(events, viewer, bad, until=until, kept_back=kept_back)
    meta = report["meta"]
    if at is None:
        initial = report["findings"][0]["i"] if report["findings"] else len(report["events"]) - 1
    else:
        matches = [e["i"] for e in report["events"] if isinstance(e["seq"], int) and e["seq"] <= at]
        if not matches:
            raise ValueError(f"no event at or before seq {at} in game {meta['game_id']!r}")
        initial = matches[-1]
    meta["initial"] = initial
    page_title = title if title is not None else f"Replay of game {meta['game_id']}"
    meta["title"] = page_title
    values = {
        "TITLE": _e(page_title),
        "CSS": _asset("replay_page.css"),
        "JS": _asset("replay_page.js"),
        "HEADER": _header_html(report, page_title),
        "FINDINGS": _findings_html(report),
        "FINDING_COUNT": str(len(report["findings"])),
        "DATA": _script_json(report),
    }
    template = _asset("html_template.html")
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: values[m.group(1)], template)


__all__ = ["HIDDEN", "apply_patch", "build_report", "claims_so_far", "describe", "diff",
           "mask_findings", "parse_claims", "redact", "render_html"]
