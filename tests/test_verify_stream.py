"""``verify_files`` (one streaming pass, events replayed as read) gives exactly what the
two-step form (``read_games_from_files`` then ``verify_games``) gives: same records in
the same order, same findings, same JSON, bad lines included, games interleaved."""

from __future__ import annotations

from pathlib import Path

import orjson

from rummyguard.replay.verify import VerifyRun, read_games_from_files, verify_files, verify_games

DATA = Path(__file__).parent / "data"


def _logs() -> list[Path]:
    return sorted(p for p in DATA.rglob("*.jsonl") if p.stat().st_size < 2_000_000)


def _two_step(paths: list[Path]) -> bytes:
    run = VerifyRun()
    games = read_games_from_files(paths, run)
    return orjson.dumps(verify_games(games.values(), run).to_json())


def _stream(paths: list[Path]) -> bytes:
    return orjson.dumps(verify_files(paths).to_json())


def test_every_sample_log_alone_gives_the_same_json() -> None:
    logs = _logs()
    assert len(logs) > 50
    for path in logs:
        assert _stream([path]) == _two_step([path]), path


def test_all_sample_logs_together_give_the_same_json() -> None:
    # many files in one run: duplicate game ids across files, bad lines, CL-NEXT
    logs = _logs()
    assert _stream(logs) == _two_step(logs)


def test_interleaved_games_and_bad_lines(tmp_path: Path) -> None:
    """Two games' lines interleaved, a bad line of each, an unreadable line: the
    streaming pass keeps each game's file order, exactly as grouping does."""
    sample = sorted((DATA / "classic").glob("*.jsonl"))
    a = sample[0].read_bytes().splitlines()
    b = sample[1].read_bytes().splitlines()
    mixed: list[bytes] = []
    for i in range(max(len(a), len(b))):
        mixed += a[i : i + 1] + b[i : i + 1]
        if i == 5:
            mixed.append(a[3].replace(b'"seq":3', b'"seq":"3"'))  # a bad line of game a
            mixed.append(b"not json at all")
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(mixed) + b"\n")
    streamed = verify_files([path])
    assert orjson.dumps(streamed.to_json()) == _two_step([path])
    assert len(streamed.unattributed) == 1
    assert any(f.rule == "LOG-EVENT" for r in streamed.records for f in r.findings)


def test_progress_counts_every_event(tmp_path: Path) -> None:
    logs = _logs()
    total = sum(len(p.read_bytes().splitlines()) for p in logs if p.suffix == ".jsonl")
    seen: list[int] = []
    verify_files(logs, progress=seen.append)
    assert sum(seen) == total


def _sample_lines() -> list[bytes]:
    return sorted((DATA / "classic").glob("*.jsonl"))[0].read_bytes().splitlines()


def test_a_game_whose_first_lines_are_not_valid_events(tmp_path: Path) -> None:
    """A bad GameCreated (payload field missing) and a line without ``type`` before the
    valid events, and a game made only of bad lines: the same JSON both ways, no crash."""
    lines = _sample_lines()
    created = orjson.loads(lines[0])
    del created["payload"]["table_id"]
    no_type = orjson.loads(lines[1])
    del no_type["type"]
    only_bad = {**orjson.loads(lines[2]), "game_id": "nothing-valid", "seq": 0, "type": "Nope"}
    mixed = [orjson.dumps(created), orjson.dumps(no_type), *lines[2:], orjson.dumps(only_bad)]
    path = tmp_path / "bad-start.jsonl"
    path.write_bytes(b"\n".join(mixed) + b"\n")
    streamed = verify_files([path])
    assert orjson.dumps(streamed.to_json()) == _two_step([path])
    by_id = {r.game_id: r for r in streamed.records}
    assert {f.rule for f in by_id["nothing-valid"].findings} == {"LOG-EVENT"}
    assert [f.seq for f in by_id[created["game_id"]].findings][:2] == [0, 1]


def test_a_bad_line_with_a_negative_seq_is_still_reported(tmp_path: Path) -> None:
    """A line naming its game but a seq below 0 has no place in the game: it is still one
    LOG-EVENT finding of that game, both ways (nothing read is lost)."""
    lines = _sample_lines()
    bad = {**orjson.loads(lines[3]), "seq": -1}
    path = tmp_path / "negative.jsonl"
    path.write_bytes(b"\n".join([*lines, orjson.dumps(bad)]) + b"\n")
    streamed = verify_files([path])
    assert orjson.dumps(streamed.to_json()) == _two_step([path])
    found = [f for r in streamed.records for f in r.findings if f.rule == "LOG-EVENT"]
    assert len(found) == 1 and "negative.jsonl:" in found[0].message

