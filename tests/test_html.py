"""The HTML replay page without a browser: the embedded data (every state, every finding
with its rule text and claimed/recomputed values), per-player redaction, escaping of
untrusted text, self-containment and determinism. test_html_browser.py drives the page.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_html_kit import EVIL, SEATS, VARIANT_SEATS, clean_game, need_variant, planted_game, snapshots

from rummyguard.replay.html import (
    HIDDEN,
    apply_patch,
    build_report,
    describe,
    diff,
    parse_claims,
    redact,
    render_html,
)
from rummyguard.replay.rule_text import rule_text


def embedded(page: str) -> dict[str, Any]:
    """The JSON the page's script reads."""
    m = re.search(r'<script type="application/json" id="rg-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def decode(report: dict[str, Any]) -> list[Any]:
    states, state = [], None
    for patch in report["patches"]:
        state = apply_patch(state, patch)
        states.append(state)
    return states


# -- the patch encoding ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"a": [1, 2, 3], "b": 1}, {"a": [1, 2, 3, 4], "b": 1}),
        ({"a": [1, 2, 3]}, {"a": [2, 3]}),
        ({"a": [1, 2, 3]}, {"a": [1, 9, 3]}),
        ({"a": [1, 1, 1]}, {"a": [1, 1]}),
        ({"a": {"x": [1]}, "b": None}, {"a": {"x": [1], "y": 2}, "b": None}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"a": True}, {"a": 1}),
        ([], [1]),
        ([1, 2], []),
    ],
)
def test_patch_round_trips(old: Any, new: Any) -> None:
    patch = diff(old, new)
    out = apply_patch(old, patch)
    assert out == new and list(out) == list(new)
    assert type(out["a"] if isinstance(out, dict) else out) is type(new["a"] if isinstance(new, dict) else new)


def test_equal_values_need_no_patch() -> None:
    assert diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None


def test_a_draw_patches_only_what_changed() -> None:
    before = {"stock": ["2C", "3C", "4C"], "hands": {"a": ["5C"], "b": ["6C"]}, "n": 3}
    after = {"stock": ["3C", "4C"], "hands": {"a": ["2C", "5C"], "b": ["6C"]}, "n": 2}
    patch = diff(before, after)
    assert patch == ["{", {"stock": ["[", 0, 2, []], "hands": ["{", {"a": ["[", 0, 1, ["2C"]]}],
                           "n": ["=", 2]}]


# -- every state, every finding ------------------------------------------------------------
def test_every_state_is_the_snapshot_after_that_event() -> None:
    events, _ = planted_game()
    report = build_report(events)
    assert len(report["events"]) == len(events) == len(report["patches"])
    assert decode(report) == json.loads(json.dumps(snapshots(events)))


def test_findings_carry_event_rule_text_and_claimed_vs_recomputed() -> None:
    events, late_seq = planted_game()
    report = build_report(events)
    by_rule = [(f["rule"], f["kind"], f["seq"]) for f in report["findings"]]
    last = events[-1]["seq"]
    claims_seq = max(e["seq"] for e in events if e["type"] == "ChipsTransferred")
    assert by_rule == [
        ("CL-TIMER", "violation", late_seq),
        ("C-CLAIM", "discrepancy", claims_seq),
        ("C-CLAIM", "discrepancy", last),
        ("C-CLAIM", "discrepancy", last),
    ]
    timer, transfers, winners, net = report["findings"]
    assert report["events"][timer["i"]]["seq"] == late_seq
    assert timer["rule_text"] == rule_text("CL-TIMER") and "base clock of 60 s" in timer["rule_text"]
    assert timer["details"] is None
    assert report["events"][transfers["i"]]["type"] == "ChipsTransferred"
    assert transfers["details"] == [["pot → carol", "307", "300"]]
    assert winners["details"] == [["winners", "alice", "carol"]]
    assert net["details"] == [["net alice", "-50", "-100"]]
    assert [f["n"] for f in report["findings"]] == [0, 1, 2, 3]
    meta = report["meta"]
    assert (meta["clean"], meta["halted"], meta["kinds"]) == (False, False, {"discrepancy": 3, "violation": 1})
    assert meta["results"]["winners"] == ["carol"]


def test_the_page_lists_findings_with_rule_text_and_both_values() -> None:
    events, late_seq = planted_game()
    page = render_html(events)
    assert "4 findings (3 discrepancy, 1 violation)" in page
    assert f'<button type="button" class="finding-jump" data-index="{late_seq}"' in page
    assert "carol moved 120." in page
    assert "CL-TIMER (seed): a turn has a base clock of 60 s" in page
    assert '<td class="claimed">-50</td><td class="recomputed">-100</td>' in page
    assert '<td class="claimed">307</td><td class="recomputed">300</td>' in page


def test_the_page_opens_at_the_first_finding_or_at_a_given_seq() -> None:
    events, late_seq = planted_game()
    assert embedded(render_html(events))["meta"]["initial"] == late_seq
    assert embedded(render_html(events, at=5))["meta"]["initial"] == 5
    clean = clean_game("classic", SEATS, 1)
    assert embedded(render_html(clean))["meta"]["initial"] == len(clean) - 1
    gap = events[:20] + events[21:]  # seq 20 missing: --at 20 shows the state after seq 19
    assert embedded(render_html(gap, at=20))["meta"]["initial"] == 19
    with pytest.raises(ValueError, match="no event at or before seq -1"):
        render_html(events, at=-1)


def test_a_clean_game_says_so() -> None:
    events = clean_game("classic", ["p1", "p2"], 0)
    page = render_html(events, title="Dispute #42")
    assert "Clean — no findings" in page and 'data-testid="no-findings"' in page
    assert "<title>Dispute #42</title>" in page
    assert 'data-testid="halted"' not in page


def test_parse_claims_reads_the_engine_and_variant_messages() -> None:
    assert parse_claims("net differs: a: claimed 5, recomputed 3, b: claimed -5, recomputed -3") == [
        ["a", "5", "3"], ["b", "-5", "-3"]]
    assert parse_claims("round 2 winners: claimed ['a'], recomputed ['b', 'c']") == [
        ["round 2 winners", "['a']", "['b', 'c']"]]
    assert parse_claims("RoundEnded claims round 3 ended; by the rules it has not") == [
        ["RoundEnded", "round 3 ended", "it has not"]]
    assert parse_claims("a move out of turn") == []


def test_a_halt_is_shown_and_the_state_stops_there() -> None:
    events = clean_game("classic", SEATS, 7)
    k = next(i for i, e in enumerate(events) if i > 30 and e["type"] == "Drew"
             and e["payload"]["source"] == "stock")
    events[k]["payload"]["cards"] = ["JK" if events[k]["payload"]["cards"] != ["JK"] else "2C"]
    report = build_report(events)
    assert report["meta"]["halted"] and report["meta"]["halt_index"] == k
    assert report["findings"][-1]["rule"] == "C-HOLD" and report["findings"][-1]["i"] == k
    assert all(p is None for p in report["patches"][k + 1 :])
    page = render_html(events)
    assert f"Replay halted at seq {events[k]['seq']}" in page


# -- the per-player view ----------------------------------------------------------------------
def test_the_player_view_embeds_only_what_he_could_see() -> None:
    events, _ = planted_game()
    viewer = "bob"
    report = embedded(render_html(events, viewer=viewer))
    assert report["meta"]["viewer"] == viewer
    states = decode(report)
    assert states == json.loads(json.dumps(snapshots(events, viewer)))
    for state in states[1:]:
        assert list(state["hands"]) == [viewer] and "stock" not in state
    own = other = 0
    for shown, original in zip(report["events"], events, strict=True):
        e, p = shown["event"], original["payload"]
        if original["type"] == "RoundStarted":
            assert e["payload"]["deck"] == [HIDDEN] * len(p["deck"])
        elif original["type"] == "StockReplenished":
            assert e["payload"]["stock"] == [HIDDEN] * len(p["stock"])
        elif original["type"] == "Drew" and p["source"] == "stock":
            if original["actor"] == viewer:
                own += 1
                assert e["payload"]["cards"] == p["cards"] and "redacted" not in e
            else:
                other += 1
                assert e["payload"]["cards"] == [HIDDEN] and e["redacted"] == ["cards"]
                assert {"c": HIDDEN} in shown["desc"]
        else:
            assert e == original
    assert own and other


def test_a_viewer_must_be_seated() -> None:
    events, _ = planted_game()
    with pytest.raises(ValueError, match="'mallory' is not seated"):
        render_html(events, viewer="mallory")


def test_redact_hides_other_players_hidden_cards_only() -> None:
    base = {"event_id": "e", "game_id": "g", "seq": 3, "v": 1, "ts": "2026-01-01T00:00:00.000Z"}
    bought = {**base, "type": "Bought", "actor": "a", "payload": {"card": "7H", "penalty": "KS"}}
    assert redact(bought, "a") is bought
    assert redact(bought, "b")["payload"] == {"card": "7H", "penalty": HIDDEN}
    auto = {**base, "type": "AutoPlayed", "actor": "system",
            "payload": {"player": "a", "drew": "4C", "discarded": "4C", "strike": 1}}
    assert redact(auto, "b")["payload"]["drew"] == HIDDEN
    assert redact(auto, "b")["payload"]["discarded"] == "4C"
    pile = {**base, "type": "Drew", "v": 2, "actor": "a", "payload": {"source": "discard", "cards": ["9D"]}}
    assert redact(pile, "b") is pile


def test_old_event_versions_are_described_in_the_current_notation() -> None:
    drew_v1 = {"type": "Drew", "v": 1, "actor": "p1", "seq": 4,
               "payload": {"from": "pile", "card": {"rank": "10", "suit": "hearts"}}}
    assert describe(drew_v1) == ["p1 drew ", {"c": "TH"}, " from the discard pile"]
    odd = {"type": "Discarded", "v": 2, "actor": "p1", "payload": {"nope": 1}}
    assert describe(odd) == ["p1: Discarded", " nope=", "1"]


# -- untrusted text, no network, determinism ---------------------------------------------------
def test_log_text_is_escaped_everywhere() -> None:
    seats = ["alice", EVIL, "carol"]
    events, _ = planted_game(seats)
    for e in events:
        e["event_id"] = e["event_id"] + "</script><script>alert(1)</script>"
    events[0]["payload"]["table_id"] = "<img src=x onerror=alert(2)>"
    page = render_html(events, title="<b>x</b> & </title>")
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<img" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "<title>&lt;b&gt;x&lt;/b&gt; &amp; &lt;/title&gt;</title>" in page
    data = embedded(page)
    assert data["meta"]["seats"] == seats
    assert data["events"][0]["event"]["event_id"].endswith("</script><script>alert(1)</script>")


def test_the_page_is_self_contained() -> None:
    events, _ = planted_game()
    page = render_html(events)
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|<link\b|\bsrc\s*=", page, re.I)
    assert "default-src 'none'" in page
    assert "<style>" in page and "function applyPatch" in page


def test_the_same_log_gives_the_same_bytes() -> None:
    events, _ = planted_game()
    assert render_html(events) == render_html(events)
    assert render_html(events, viewer="carol") == render_html(events, viewer="carol")


def test_a_log_without_game_created_still_renders() -> None:
    events = clean_game("classic", ["p1", "p2"], 0)[1:]
    report = embedded(render_html(events))
    assert [f["rule"] for f in report["findings"]] == ["LOG-SEQ", "LOG-GAME"]
    assert report["meta"]["halted"] and report["patches"][0] == ["=", {}]
    with pytest.raises(ValueError, match="no GameCreated"):
        render_html(events, viewer="p1")


def test_no_events_is_an_error() -> None:
    with pytest.raises(ValueError, match="no events"):
        render_html([])


# -- every variant renders ------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["classic", "r500", "liverpool", "michigan"])
def test_each_variant_renders_every_state(variant: str) -> None:
    need_variant(variant)
    seats = VARIANT_SEATS.get(variant, SEATS)
    events = clean_game(variant, seats, 1)
    page = render_html(events)
    report = embedded(page)
    assert report["meta"]["variant"] == variant and report["meta"]["clean"]
    assert decode(report) == json.loads(json.dumps(snapshots(events)))
    assert f'data-testid="variant">{variant}<' in page
    viewer_report = embedded(render_html(events, viewer=seats[1]))
    for state in decode(viewer_report)[1:]:
        assert set(state.get("hands", {})) <= {seats[1]}
    if variant == "michigan":
        pots = decode(report)[-1]["pots"]
        assert {"kitty", "pay:JS", "pay:QD", "pay:KC", "pay:AH"} <= set(pots)
