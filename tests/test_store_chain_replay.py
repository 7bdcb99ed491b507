"""The replay of a game the store chained at ingest (EVENTS.md: "A producer may leave both
hash fields out; the store then chains the events itself at ingest, and says so for each
game (chained by producer vs chained at ingest)").

The store's links are its own, not the producer's: a replay from the store checks them
(an edit of the store is a LOG-CHAIN finding at the edited seq) and judges the
producer's chain as the replay of his file does, and the HTML page says who chained the
game instead of calling the store's links "producer hashes".
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import orjson
import pytest
from log_oracle import rechain
from test_audit33_events_contract import EVENTS, GAME, LINES, _cli, _write

from rummyguard.events.models import IngestLinked
from rummyguard.events.store import EventStore


def _findings(*args: str) -> list[tuple[int, str, str]]:
    out = _cli("replay", GAME, *args, "--json")
    assert out.exit_code == 0, out.output
    return [(f["seq"], f["rule"], f["kind"])
            for f in orjson.loads(out.stdout)["record"]["findings"]]


def _ingested(tmp_path: Path, lines: list) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = _write(tmp_path / "log.jsonl", lines)
    db = tmp_path / "s.duckdb"
    out = _cli("ingest", str(src), "--db", str(db), "--no-progress", "--json")
    assert out.exit_code == 0, out.output
    return src, db


def _chain_label(*args: str, out: Path) -> str:
    result = _cli("replay", GAME, *args, "--html", str(out))
    assert result.exit_code == 0, result.output
    found = re.search(r"Hash chain</dt><dd>([^<]*)</dd>", out.read_text(encoding="utf-8"))
    assert found, "the page has no hash chain line"
    return found.group(1)


@pytest.mark.parametrize("chained", [False, True], ids=["unchained log", "producer-chained log"])
def test_the_page_says_who_chained_the_game(tmp_path: Path, chained: bool) -> None:
    lines = rechain(EVENTS) if chained else LINES
    src, db = _ingested(tmp_path, lines)
    from_file = _chain_label(str(src), out=tmp_path / "f.html")
    from_store = _chain_label("--db", str(db), out=tmp_path / "s.html")
    if chained:
        assert from_file == from_store == "yes (producer hashes verified)"
    else:
        assert from_file == "no (unchained)"
        assert from_store == ("no producer hashes; chained by the store at ingest "
                              "(its links verified)")
    # the findings are the same either way (RULES.md §5: the same log, the same result)
    assert _findings(str(src)) == _findings("--db", str(db)) == []


def test_only_a_game_the_store_chained_is_read_with_the_stores_links(tmp_path: Path) -> None:
    _, plain_db = _ingested(tmp_path / "plain", LINES)
    _, chained_db = _ingested(tmp_path / "chained", rechain(EVENTS))
    with EventStore.open(plain_db, read_only=True) as store:
        assert store.chained_by(GAME) == "ingest"
        assert store.chained_by("no-such-game") is None
        events = store.load_game_for_replay(GAME)
        assert events and all(type(e) is IngestLinked for e in events)
        # the same events as load_game gives, hash fields included
        assert events == store.load_game(GAME)
    with EventStore.open(chained_db, read_only=True) as store:
        assert store.chained_by(GAME) == "producer"
        assert all(type(e) is dict for e in store.load_game_for_replay(GAME))


@pytest.mark.parametrize("seq", [0, 7, len(EVENTS) - 1])
def test_an_edit_of_the_stores_own_chain_is_LOG_CHAIN_at_its_seq(tmp_path: Path,
                                                                 seq: int) -> None:
    # "stores that log append-only and tamper-evident": a stored line of an unchained log
    # edited in the store afterwards no longer matches the hash the store gave it.
    _, db = _ingested(tmp_path, LINES)
    assert _findings("--db", str(db)) == []
    con = duckdb.connect(str(db))
    (raw,) = con.execute("SELECT raw FROM store.events WHERE game_id = ? AND seq = ?",
                         [GAME, seq]).fetchone()
    edited = orjson.dumps({**orjson.loads(raw), "event_id": "edited-in-the-store"}).decode()
    con.execute("UPDATE store.events SET raw = ? WHERE game_id = ? AND seq = ?",
                [edited, GAME, seq])
    con.close()
    assert (seq, "LOG-CHAIN", "integrity") in _findings("--db", str(db))
