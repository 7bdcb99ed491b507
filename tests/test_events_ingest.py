"""Ingest: every line ends stored, duplicate or quarantined (with its reason); chains
are checked or built; re-ingest is a no-op; a SIGKILL mid-ingest loses nothing."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from rummyguard.events.hashing import chain, verify_chain
from rummyguard.events.ingest import REASONS, read_jsonl_events
from rummyguard.events.models import EventError
from rummyguard.events.store import EventStore

TESTS = Path(__file__).parent
EVENTS = TESTS / "data" / "events"
SAMPLE = TESTS / "data" / "sample" / "classic-3p.jsonl"
CHAINED = TESTS / "data" / "sample" / "classic-3p.chained.jsonl"
BAD_REASONS = orjson.loads((EVENTS / "bad.reasons.json").read_bytes())


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _snapshot(store: EventStore) -> dict[str, Any]:
    con = store.con
    return {
        "events": con.execute("SELECT event_id, game_id, seq, raw, prev_hash, hash FROM "
                              "store.events ORDER BY game_id, seq").fetchall(),
        "chain": con.execute("SELECT game_id, chained_by, next_seq, last_hash FROM "
                             "store.games_chain ORDER BY game_id").fetchall(),
        "quarantine": con.execute("SELECT source, line_no, reason, raw FROM store.quarantine "
                                  "ORDER BY source, line_no, reason").fetchall(),
    }


@pytest.fixture
def store(tmp_path: Path):
    with EventStore.open(tmp_path / "s.duckdb") as s:
        yield s


def test_golden_file_is_stored_whole_and_byte_exact(store: EventStore) -> None:
    summary = store.ingest_files([EVENTS / "golden.jsonl"])
    assert (summary.read, summary.stored, summary.quarantined) == (26, 26, 0)
    raws = {r[0]: r[1] for r in store.con.execute(
        "SELECT event_id, raw FROM store.events").fetchall()}
    for line in _lines(EVENTS / "golden.jsonl"):
        assert raws[orjson.loads(line)["event_id"]] == line.decode()
    drew = store.load_game("golden-Drew-v1")[0]
    assert drew["v"] == 2 and drew["payload"] == {"source": "stock", "cards": ["TH"]}
    row = store.con.execute("SELECT v, stored_v, payload->>'source', stored_payload->>'from' "
                            "FROM events WHERE event_id = 'golden-Drew-v1'").fetchall()
    assert row == [(2, 1, "stock", "deck")]
    assert store.verify().ok


def test_every_bad_input_class_is_quarantined_with_its_reason(store: EventStore) -> None:
    summary = store.ingest_files([EVENTS / "bad.jsonl"])
    assert summary.read == len(BAD_REASONS) == summary.quarantined
    assert summary.stored == summary.duplicates == 0 and summary.balanced
    rows = store.con.execute(
        "SELECT line_no, reason, detail, raw_bytes FROM store.quarantine ORDER BY line_no"
    ).fetchall()
    lines = (EVENTS / "bad.jsonl").read_bytes().split(b"\n")
    assert [(r[0], r[1]) for r in rows] == [(c["line"], c["reason"]) for c in BAD_REASONS]
    for line_no, reason, detail, raw in rows:
        assert raw == lines[line_no - 1] and detail and reason in REASONS


def test_mixed_good_and_bad_lines_balance(store: EventStore, tmp_path: Path) -> None:
    bad = (EVENTS / "bad.jsonl").read_bytes().split(b"\n")[:-1]
    good = _lines(SAMPLE)
    mixed = [x for pair in zip(good, bad, strict=False) for x in pair] + good[len(bad):]
    summary = store.ingest_files([_write(tmp_path / "mixed.jsonl", mixed)])
    assert summary.read == len(mixed)
    assert (summary.stored, summary.quarantined) == (len(good), len(bad))
    assert summary.read == summary.stored + summary.duplicates + summary.quarantined


def test_reingest_changes_nothing(store: EventStore) -> None:
    files = [SAMPLE, CHAINED, EVENTS / "golden.jsonl", EVENTS / "bad.jsonl"]
    first = store.ingest_files(files)
    before = _snapshot(store)
    second = store.ingest_files(files)
    assert second.stored == 0 and second.duplicates == first.stored
    assert second.quarantined == first.quarantined and second.balanced
    assert _snapshot(store) == before


def test_duplicates_conflicts_and_gaps(store: EventStore, tmp_path: Path) -> None:
    lines = _lines(SAMPLE)
    store.ingest_files([_write(tmp_path / "a.jsonl", lines[:10])])
    e5 = orjson.loads(lines[5])
    reformatted = orjson.dumps(e5, option=orjson.OPT_INDENT_2).replace(b"\n", b" ")
    other_content = orjson.dumps({**e5, "ts": "2026-11-29T22:56:15.875Z"})
    other_id_same_seq = orjson.dumps({**e5, "event_id": "intruder"})
    gap = lines[12]
    summary = store.ingest_files([_write(tmp_path / "b.jsonl", [
        lines[3], reformatted, other_content, other_id_same_seq, gap, lines[10], lines[10]])])
    assert (summary.stored, summary.duplicates) == (1, 3)
    assert summary.reasons == {"conflict_event_id": 1, "conflict_seq": 1, "sequence_gap": 1}
    details = dict(store.con.execute("SELECT reason, detail FROM store.quarantine").fetchall())
    assert "expected seq 10, got 12" in details["sequence_gap"]
    assert "already has an event at seq 5" in details["conflict_seq"]
    assert "other content" in details["conflict_event_id"]


def test_games_interleave_in_any_order(store: EventStore, tmp_path: Path) -> None:
    a = _lines(SAMPLE)
    b = _lines(CHAINED)
    interleaved = [x for pair in zip(b, a, strict=True) for x in pair]
    summary = store.ingest_files([_write(tmp_path / "i.jsonl", interleaved)], batch_lines=7)
    assert summary.stored == 54 and summary.batches == 8
    chained_by = dict(store.con.execute(
        "SELECT game_id, chained_by FROM store.games_chain").fetchall())
    assert chained_by == {"example-classic": "ingest", "example-classic-chained": "producer"}
    assert verify_chain(store.load_game("example-classic")) == []
    assert verify_chain(store.load_game("example-classic-chained")) == []
    producer = store.load_game("example-classic-chained")
    assert [e["hash"] for e in producer] == [orjson.loads(x)["hash"] for x in b]


def test_gzip_input(store: EventStore, tmp_path: Path) -> None:
    gz = tmp_path / "sample.jsonl.gz"
    gz.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    summary = store.ingest_files([gz])
    assert summary.stored == 27
    assert store.con.execute("SELECT raw FROM store.events WHERE seq = 4").fetchall()[0][0] \
        == _lines(SAMPLE)[4].decode()


def _chained_lines() -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in _lines(CHAINED)]


def _dump(events: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def _ingest_reasons(store: EventStore, tmp_path: Path, events: list[dict[str, Any]]
                    ) -> list[tuple[int, str]]:
    store.ingest_files([_write(tmp_path / "t.jsonl", _dump(events))])
    return store.con.execute(
        "SELECT seq, reason FROM store.quarantine ORDER BY line_no").fetchall()


def test_tamper_flip_a_payload_byte(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    raw = bytearray(orjson.dumps(events[9]))
    at = raw.index(b'"card":"') + 8
    raw[at] = ord("8") if raw[at] != ord("8") else ord("9")
    lines = _dump(events)
    lines[9] = bytes(raw)
    store.ingest_files([_write(tmp_path / "t.jsonl", lines)])
    reasons = store.con.execute("SELECT seq, reason FROM store.quarantine ORDER BY line_no"
                                ).fetchall()
    assert reasons[0] == (9, "bad_hash")
    assert {r for _, r in reasons[1:]} == {"sequence_gap"}
    assert store.con.execute("SELECT max(seq) FROM store.events").fetchall()[0][0] == 8


def test_tamper_swap_two_events(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    events[5], events[6] = events[6], events[5]
    assert _ingest_reasons(store, tmp_path, events)[0] == (6, "sequence_gap")


def test_tamper_swap_and_renumber(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    a, b = dict(events[5]), dict(events[6])
    a["seq"], b["seq"] = 6, 5
    events[5], events[6] = b, a
    assert _ingest_reasons(store, tmp_path, events)[0] == (5, "bad_hash")


def test_tamper_rechained_insertion_breaks_the_link(store: EventStore, tmp_path: Path) -> None:
    """An attacker who rewrites an event and recomputes its hash still breaks the link
    of the event after it."""
    events = _chained_lines()
    forged = {k: v for k, v in events[9].items() if k != "hash"}
    forged["payload"] = {"card": "AS"}
    forged = chain([{**forged}])[0]
    forged["prev_hash"] = events[9]["prev_hash"]
    from rummyguard.events.hashing import event_hash
    forged["hash"] = event_hash(forged)
    events[9] = forged
    assert _ingest_reasons(store, tmp_path, events)[0] == (10, "chain_break")


def test_tamper_drop_one(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    del events[11]
    reasons = _ingest_reasons(store, tmp_path, events)
    assert reasons[0] == (12, "sequence_gap")
    assert len(reasons) == 27 - 12


def test_tamper_edit_a_hash(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    events[20] = {**events[20], "hash": "ab" * 32}
    assert _ingest_reasons(store, tmp_path, events)[0] == (20, "bad_hash")


def test_truncated_file_stores_a_valid_prefix(store: EventStore, tmp_path: Path) -> None:
    """Truncation cannot be seen in the chain itself: the prefix is a valid chain. It is
    caught by Merkle checkpoints and by the replay noticing no GameEnded."""
    events = _chained_lines()[:20]
    assert _ingest_reasons(store, tmp_path, events) == []
    assert store.verify().ok
    assert store.con.execute("SELECT count(*) FROM games WHERE ended_at IS NULL"
                             ).fetchall()[0][0] == 1


def test_mixed_chain_modes_are_quarantined(store: EventStore, tmp_path: Path) -> None:
    events = _chained_lines()
    events[4] = {k: v for k, v in events[4].items() if k not in ("hash", "prev_hash")}
    assert _ingest_reasons(store, tmp_path, events)[0] == (4, "chain_mixed")


def test_half_chained_event_is_quarantined(store: EventStore, tmp_path: Path) -> None:
    events = [orjson.loads(x) for x in _lines(SAMPLE)]
    events[0] = {**events[0], "hash": "00" * 32}
    reasons = _ingest_reasons(store, tmp_path, events)
    assert reasons[0] == (0, "chain_mixed")


def test_read_jsonl_events_without_a_store(tmp_path: Path) -> None:
    items = list(read_jsonl_events(EVENTS / "bad.jsonl"))
    assert [(n, e.reason) for n, _, e in items if isinstance(e, EventError)] == \
        [(c["line"], c["reason"]) for c in BAD_REASONS]
    good = list(read_jsonl_events(SAMPLE))
    assert [n for n, _, _ in good] == list(range(1, 28))
    assert all(isinstance(e, dict) for _, _, e in good)
    assert good[0][1] == _lines(SAMPLE)[0].decode()


def test_worker_processes_give_the_same_store(tmp_path: Path) -> None:
    files = [SAMPLE, CHAINED, EVENTS / "golden.jsonl", EVENTS / "bad.jsonl"]
    snaps = []
    for workers in (0, 1):
        with EventStore.open(tmp_path / f"w{workers}.duckdb") as s:
            summary = s.ingest_files(files, workers=workers, batch_lines=16)
            assert summary.balanced
            snaps.append(_snapshot(s))
    assert snaps[0] == snaps[1]


# --- crash safety --------------------------------------------------------------------------
def _many_games(n_games: int) -> list[bytes]:
    """n copies of the sample game under new ids, interleaved in pairs."""
    base = [orjson.loads(x) for x in _lines(SAMPLE)]
    out: list[bytes] = []
    for g in range(0, n_games, 2):
        games = []
        for k in (g, g + 1):
            games.append([orjson.dumps({**e, "game_id": f"g{k:05d}",
                                        "event_id": f"g{k:05d}-{e['seq']:03d}"}) for e in base])
        for a, b in zip(*games, strict=True):
            out += [a, b]
    return out


_KILL_CHILD = textwrap.dedent("""
    import sys
    from rummyguard.events.store import EventStore
    def report(source, done, size, summary):
        print("batch", summary.batches, flush=True)
    with EventStore.open(sys.argv[1]) as store:
        store.ingest_files([sys.argv[2]], batch_lines=2000, workers=0, progress=report)
    print("finished", flush=True)
""")


@pytest.mark.slow
def test_sigkill_mid_ingest_leaves_a_consistent_store_and_reingest_completes_it(
    tmp_path: Path,
) -> None:
    lines = _many_games(1200)  # 32,400 events
    lines.insert(5000, b"not json")  # and a quarantined line, before the kill
    log = _write(tmp_path / "big.jsonl", lines)
    db = tmp_path / "killed.duckdb"
    proc = subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(db), str(log)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("batch 4"):
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    with EventStore.open(db) as store:
        stored = store.counts()["events"]
        assert 4 * 2000 - 1 <= stored < len(lines) - 1
        batches = store.con.execute(
            "SELECT count(*), sum(stored), sum(quarantined) FROM store.ingest_batches"
        ).fetchall()[0]
        assert batches[1] == stored  # every committed batch is whole
        assert store.counts()["quarantine"] == batches[2] == 1
        heads = store.con.execute(
            "SELECT count(*) FROM store.games_chain c JOIN (SELECT game_id, count(*) n, "
            "max(seq) m FROM store.events GROUP BY game_id) e USING (game_id) "
            "WHERE c.next_seq <> e.n OR e.m <> e.n - 1").fetchall()[0][0]
        assert heads == 0
        assert store.verify().ok
        again = store.ingest_files([log])
        assert again.duplicates == stored and again.stored == len(lines) - 1 - stored
        assert again.quarantined == 1
        assert store.verify().ok
        completed = _snapshot(store)
    with EventStore.open(tmp_path / "reference.duckdb") as ref:
        ref.ingest_files([log])
        reference = _snapshot(ref)
    assert completed == reference


def test_progress_callback_and_timing(store: EventStore, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    log = _write(tmp_path / "p.jsonl", _many_games(4))
    store.ingest_files([log], batch_lines=30,
                       progress=lambda src, done, size, s: seen.append((done, s.stored)))
    assert seen[-1] == (log.stat().st_size, 108)
    assert [s for _, s in seen] == sorted(s for _, s in seen)


# --- the command ------------------------------------------------------------------------
def test_ingest_command_exit_codes_and_summary(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rummyguard.cli.app import app

    runner = CliRunner()
    db = str(tmp_path / "cli.duckdb")
    ok = runner.invoke(app, ["ingest", str(SAMPLE), "--db", db])
    assert ok.exit_code == 0, ok.stderr
    assert "read 27 = stored 27 + duplicates 0 + quarantined 0" in ok.stdout
    bad = runner.invoke(app, ["ingest", str(SAMPLE), str(EVENTS / "bad.jsonl"), "--db", db,
                              "--json"])
    assert bad.exit_code == 1
    body = orjson.loads(bad.stdout)
    assert (body["read"], body["duplicates"], body["quarantined"]) == (54, 27, 27)
    assert body["balanced"] and body["reasons"]["not_json"] == 4
    missing = runner.invoke(app, ["ingest", str(tmp_path / "nope.jsonl"), "--db", db])
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    unreadable = tmp_path / "junk.duckdb"
    unreadable.write_bytes(b"junk" * 1000)
    broken = runner.invoke(app, ["ingest", str(SAMPLE), "--db", str(unreadable)])
    assert broken.exit_code == 2 and "cannot open store" in broken.stderr
    assert broken.stderr.count("\n") == 1


def test_library_ingest_of_a_cut_gzip_raises_a_typed_error(tmp_path: Path) -> None:
    """The CLI checks every gzip first; a library caller gets a SourceError naming the
    file (not a bare EOFError), and the store holds only whole committed batches."""
    from rummyguard.events.ingest import SourceError, ingest_files

    data = gzip.compress(b"".join((TESTS / "data" / "classic" / "clean.jsonl").read_bytes()
                                  for _ in range(40)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    with EventStore.open(tmp_path / "s.duckdb") as store:
        with pytest.raises(SourceError, match=r"cut\.jsonl\.gz: the gzip stream is cut or corrupt"):
            ingest_files(store, [cut], workers=0)
        assert store.verify().ok


def test_an_empty_file_is_listed_with_zero_counts(store: EventStore, tmp_path: Path) -> None:
    """Every file given is in the summary, in the order given: an empty one too, so the
    reader sees it was read and held nothing (not that it was skipped)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    summary = store.ingest_files([empty, SAMPLE])
    assert list(summary.files) == [str(empty.resolve()), str(SAMPLE.resolve())]
    assert summary.files[str(empty.resolve())] == {
        "read": 0, "stored": 0, "duplicates": 0, "quarantined": 0}
    assert summary.read == summary.stored == 27 and summary.balanced
