"""Audit 37: a dispute bundle of a game with quarantined lines says what ``replay --db`` says.

What was found: since audit 35, ``replay GAME --db`` and ``verify --db`` fold a game's
quarantined lines back in where ingest read them, but ``dispute`` still built report.json
(and report.html) from the stored events alone. For a finished, checkpointed game with a
quarantined line (a second event at a taken seq, the same event_id with other content, a
schema-invalid line beside a valid one) the bundle said "clean" (no finding) while
``replay --db`` said LOG-SEQ / LOG-EVENT at seq 13, and for a halting invalid line the
bundle named a winner where the replay halted with none. For a game ingest cut short (a
tampered line, a seq gap, an invalid line in place of an event) the store never holds its
GameEnded, so it is in no checkpoint and no bundle can prove it; ``dispute`` refused it as
"has not finished" while ``replay --db`` shows it finished, with a winner.

Now the bundle carries the game's quarantined lines as unproven material
(``quarantine.json``: raw bytes, SHA-256, reason, where ingest read them; in neither the
hash chain nor the Merkle tree), report.json and report.html replay them as ``replay
--db`` does, ``check-bundle`` re-derives the report from them and reports a ``quarantine``
check (WARN: unproven), and ``dispute`` refuses a cut-short game by saying why.

Every test runs the real CLI (typer's CliRunner) on real DuckDB files in ``tmp_path``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.checkpoint import latest_checkpoint
from rummyguard.events.hashing import chain
from rummyguard.events.store import EventStore
from rummyguard.replay.bundle import CHECK_NAMES, parse_events_jsonl, replay_report

TESTS = Path(__file__).parent
EXAMPLE = TESTS / "data" / "spec" / "classic-3p.jsonl"
DOCS = TESTS.parent / "docs"
EVENTS: list[dict[str, Any]] = [orjson.loads(line) for line in EXAMPLE.read_bytes().splitlines()]
GAME = EVENTS[0]["game_id"]
Members = dict[str, bytes]


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _plain() -> list[bytes]:
    return [orjson.dumps(e) for e in EVENTS]


def _with(at: int, line: bytes) -> list[bytes]:
    lines = _plain()
    return [*lines[:at], line, *lines[at:]]


#: finished games whose stored events reach GameEnded, with one line ingest quarantined
#: (the line's index in the log)
KEPT: dict[str, tuple[Callable[[], list[bytes]], int]] = {
    "second event at a taken seq": (lambda: _with(14, orjson.dumps(
        {**EVENTS[13], "event_id": "other", "payload": {"card": "KS"}})), 14),
    "same event_id, other content": (lambda: _with(14, orjson.dumps(
        {**EVENTS[13], "ts": "2026-11-29T22:57:09.999Z"})), 14),
    "schema-invalid event before the valid seq 13": (lambda: _with(13, orjson.dumps(
        {**EVENTS[13], "payload": {"card": "10C"}})), 13),
    "schema-invalid event after the valid seq 13": (lambda: _with(14, orjson.dumps(
        {**EVENTS[13], "payload": {"card": "10C"}})), 14),
}


def _tampered() -> list[bytes]:
    events = chain(copy.deepcopy(EVENTS))
    events[13]["payload"]["card"] = "KS"
    return [orjson.dumps(e) for e in events]


#: games ingest cut short: the store holds them only up to seq 12, never their GameEnded
CUT: dict[str, Callable[[], list[bytes]]] = {
    "tampered line": _tampered,
    "gap in seq": lambda: [*_plain()[:13], *_plain()[14:]],
    "schema-invalid event in place of seq 13": lambda: [
        *_plain()[:13], orjson.dumps({**EVENTS[13], "payload": {"card": "10C"}}), *_plain()[14:]],
}


def _store(tmp: Path, lines: list[bytes], *, checkpoint: bool = True) -> Path:
    log = (tmp / "log.jsonl").resolve()
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    db = tmp / "s.duckdb"
    out = _cli("ingest", log, "--db", db, "--json", "--no-progress")
    assert out.exit_code in (0, 1), out.output
    if checkpoint:
        assert _cli("checkpoint", "--db", db).exit_code == 0
    return db


def _trusted(db: Path) -> list[Any]:
    with EventStore.open(db, read_only=True) as store:
        cp = latest_checkpoint(store.con)
    assert cp is not None
    return ["--root", cp.root_hash, "--size", cp.tree_size]


def _dispute(db: Path, out: Path) -> Members:
    done = _cli("dispute", GAME, "--db", db, "--bundle", out)
    assert done.exit_code == 0, done.output
    with zipfile.ZipFile(out) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _replay_json(db: Path) -> dict[str, Any]:
    out = _cli("replay", GAME, "--db", db, "--json")
    assert out.exit_code == 0, out.output
    return orjson.loads(out.stdout)


def _check(path: Path, *extra: Any) -> tuple[int, dict[str, Any]]:
    out = _cli("check-bundle", path, "--json", *extra)
    doc = orjson.loads(out.stdout)
    return out.exit_code, {c["name"]: (c["status"], c["detail"]) for c in doc["checks"]}


def _zip(members: Members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(members):
            archive.writestr(name, members[name])
    return buffer.getvalue()


def _resign(members: Members) -> Members:
    """What a forger does after an edit: every member's hash recomputed in the manifest."""
    manifest = orjson.loads(members["manifest.json"])
    manifest["members"] = {n: {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)}
                           for n, b in sorted(members.items()) if n != "manifest.json"}
    return {**members, "manifest.json": orjson.dumps(manifest)}


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One store, checkpoint and bundle per KEPT case (built once: the CLI is the cost)."""
    out: dict[str, dict[str, Any]] = {}
    for i, (case, (make, index)) in enumerate(KEPT.items()):
        tmp = tmp_path_factory.mktemp(f"kept{i}")
        lines = make()
        db = _store(tmp, lines)
        path = tmp / "b.zip"
        out[case] = {"db": db, "lines": lines, "index": index, "path": path,
                     "members": _dispute(db, path)}
    return out


# --- the bundle says what replay --db and verify --db say ----------------------------------
@pytest.mark.parametrize("case", list(KEPT))
def test_report_is_the_store_replay(kept: dict[str, dict[str, Any]], case: str) -> None:
    world = kept[case]
    members, db = world["members"], world["db"]
    report = orjson.loads(members["report.json"])
    shown = _replay_json(db)
    # the whole record (findings with rule, seq, kind, message; halted; results; clean)
    assert report["record"] == shown["record"]
    assert report["record"]["findings"], "each case is a finding of the store's replay"
    # the timeline too, the rows of lines the store did not store marked as replay marks them
    assert report["timeline"] == shown["timeline"]
    # and verify --db (the nightly verdict) agrees on the findings and results
    out = _cli("verify", "--db", db, "--json", "--no-progress")
    game = next(g for g in orjson.loads(out.stdout)["games"] if g["game_id"] == GAME)
    assert [(f["seq"], f["rule"]) for f in game["findings"]] == \
        [(f["seq"], f["rule"]) for f in report["record"]["findings"]]
    assert game["results"] == report["record"]["results"]
    assert game["halted"] == report["record"]["halted"]


def test_report_names_the_rules_the_store_replay_names(kept: dict[str, dict[str, Any]]) -> None:
    """The verdicts in plain terms (what a recipient reads), not only "equal to replay"."""
    def said(case: str) -> tuple[list[tuple[int, str]], list[str], bool]:
        record = orjson.loads(kept[case]["members"]["report.json"])["record"]
        return ([(f["seq"], f["rule"]) for f in record["findings"]],
                record["results"]["winners"], record["halted"])

    p1 = EVENTS[0]["payload"]["seats"][0]
    assert said("second event at a taken seq") == ([(13, "LOG-SEQ")], [p1], False)
    assert said("same event_id, other content") == ([(13, "LOG-SEQ")], [p1], False)
    # an invalid line the replay cannot read past halts it: no winner, as in the file
    assert said("schema-invalid event before the valid seq 13") == ([(13, "LOG-EVENT")], [], True)


@pytest.mark.parametrize("case", ["second event at a taken seq",
                                  "schema-invalid event before the valid seq 13"])
def test_page_is_the_store_replay_page(kept: dict[str, dict[str, Any]], case: str,
                                       tmp_path: Path) -> None:
    world = kept[case]
    page = tmp_path / "p.html"
    assert _cli("replay", GAME, "--db", world["db"], "--html", page).exit_code == 0
    assert world["members"]["report.html"] == page.read_bytes()


@pytest.mark.parametrize("case", list(KEPT))
def test_quarantined_lines_are_labelled_unproven_raw_material(
        kept: dict[str, dict[str, Any]], case: str) -> None:
    world = kept[case]
    members = world["members"]
    doc = orjson.loads(members["quarantine.json"])
    assert doc["proven"] is False and "NOT EVIDENCE" in doc["note"]
    [line] = doc["lines"]
    raw = world["lines"][world["index"]]
    assert base64.b64decode(line["raw_base64"]) == raw  # the bytes ingest read, whole
    assert line["raw_sha256"] == hashlib.sha256(raw).hexdigest()
    assert line["seq"] == 13 and line["line_no"] == world["index"] + 1 and line["reason"]
    # the stored events stay the proven part: the quarantined line is not among them
    assert raw not in members["events.jsonl"].splitlines()
    manifest = orjson.loads(members["manifest.json"])
    assert manifest["quarantine"] == {"count": 1, "proven": False, "member": "quarantine.json"}
    assert "quarantine.json" in manifest["members"]
    assert "NOT proven" in members["README.txt"].decode()


@pytest.mark.parametrize("case", list(KEPT))
def test_check_bundle_verifies_and_warns(kept: dict[str, dict[str, Any]], case: str) -> None:
    world = kept[case]
    code, checks = _check(world["path"], *_trusted(world["db"]))
    assert code == 0, checks
    assert list(checks) == list(CHECK_NAMES)
    assert {n: s for n, (s, _) in checks.items()} == {
        **dict.fromkeys(CHECK_NAMES, "pass"), "quarantine": "warn"}
    assert "UNPROVEN" in checks["quarantine"][1]
    assert "quarantined line" in checks["replay"][1]


def test_same_store_same_bytes(kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    world = kept["second event at a taken seq"]
    again = tmp_path / "again.zip"
    _dispute(world["db"], again)
    assert again.read_bytes() == world["path"].read_bytes()


def test_clean_game_bundle_has_no_quarantine(tmp_path: Path) -> None:
    db = _store(tmp_path, _plain())
    members = _dispute(db, tmp_path / "b.zip")
    assert "quarantine.json" not in members
    assert "quarantine" not in orjson.loads(members["manifest.json"])
    code, checks = _check(tmp_path / "b.zip", *_trusted(db))
    assert code == 0 and checks["quarantine"][0] == "pass", checks
    # its report is the plain replay of the stored events, as before
    events = parse_events_jsonl(members["events.jsonl"]).events
    assert orjson.loads(members["report.json"])["record"] == replay_report(events)["record"]


# --- tampering with the added material -------------------------------------------------------
def _forged(kept: dict[str, dict[str, Any]], tmp: Path, edit: Callable[[Members], None],
            *, sign: bool = True) -> tuple[int, dict[str, Any]]:
    world = kept["second event at a taken seq"]
    members = dict(world["members"])
    edit(members)
    path = tmp / "forged.zip"
    path.write_bytes(_zip(_resign(members) if sign else members))
    return _check(path, *_trusted(world["db"]))


def _edit_line(change: Callable[[dict[str, Any]], None]) -> Callable[[Members], None]:
    def edit(members: Members) -> None:
        doc = orjson.loads(members["quarantine.json"])
        change(doc["lines"][0])
        members["quarantine.json"] = orjson.dumps(doc)
    return edit


def _rewrite_raw(line: dict[str, Any], *, consistent: bool) -> None:
    """The quarantined move says another card (AS, not KS)."""
    raw = line["raw"].replace('"KS"', '"AS"')
    assert raw != line["raw"]
    line["raw"] = raw
    if consistent:
        data = raw.encode()
        line["raw_base64"] = base64.b64encode(data).decode()
        line["raw_sha256"] = hashlib.sha256(data).hexdigest()


def test_edited_raw_text_alone_fails(kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    code, checks = _forged(kept, tmp_path, _edit_line(
        lambda line: _rewrite_raw(line, consistent=False)))
    assert code == 1
    assert checks["quarantine"][0] == "fail" and "raw is not the text" in checks["quarantine"][1]
    assert checks["replay"][0] == "fail"


def test_unsigned_edit_fails_the_manifest(kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    code, checks = _forged(kept, tmp_path, _edit_line(
        lambda line: _rewrite_raw(line, consistent=True)), sign=False)
    assert code == 1 and checks["manifest"][0] == "fail", checks


def test_consistent_line_forgery_fails_the_replay(kept: dict[str, dict[str, Any]],
                                                  tmp_path: Path) -> None:
    """A forger rewrites a line, its bytes and hash, and the manifest, but not the report:
    the report no longer is the replay of the material."""
    code, checks = _forged(kept, tmp_path, _edit_line(
        lambda line: _rewrite_raw(line, consistent=True)))
    assert code == 1
    assert checks["quarantine"][0] == "warn"
    assert checks["replay"][0] == "fail" and "report.json differs" in checks["replay"][1]
    assert checks["chain"][0] == checks["inclusion"][0] == "pass"


def test_dropping_the_quarantine_fails(kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    def drop(members: Members) -> None:
        del members["quarantine.json"]
        manifest = orjson.loads(members["manifest.json"])
        del manifest["quarantine"]
        members["manifest.json"] = orjson.dumps(manifest)

    code, checks = _forged(kept, tmp_path, drop)
    assert code == 1
    assert checks["quarantine"][0] == "pass"  # none left, so the report alone must say it
    assert checks["replay"][0] == "fail" and "record." in checks["replay"][1]


def test_labelled_proven_or_undeclared_fails(kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    def proven(members: Members) -> None:
        doc = orjson.loads(members["quarantine.json"])
        doc["proven"] = True
        members["quarantine.json"] = orjson.dumps(doc)

    code, checks = _forged(kept, tmp_path, proven)
    assert code == 1 and checks["quarantine"][0] == "fail", checks

    def undeclared(members: Members) -> None:
        manifest = orjson.loads(members["manifest.json"])
        del manifest["quarantine"]
        members["manifest.json"] = orjson.dumps(manifest)

    code, checks = _forged(kept, tmp_path, undeclared)
    assert code == 1 and checks["manifest"][0] == "fail", checks


def test_junk_quarantine_is_a_failure_not_a_crash(kept: dict[str, dict[str, Any]],
                                                  tmp_path: Path) -> None:
    for junk in (b"[]", b"not json", orjson.dumps({"format": "rummyguard.quarantined-lines",
                                                   "version": 1, "lines": [{"seq": "x"}]})):
        code, checks = _forged(kept, tmp_path, lambda m, j=junk: m.__setitem__("quarantine.json", j))
        assert code == 1 and checks["quarantine"][0] == "fail", (junk, checks)
        assert checks["replay"][0] == "fail"


def test_whole_forgery_of_unproven_material_is_not_detectable(
        kept: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    """The limit, as docs/disputes.md states it: a forger who rewrites the quarantined line
    and re-derives report.json and report.html from it passes every check, because
    nothing binds those lines to the published root. The proven part still holds."""
    def rewrite_all(members: Members) -> None:
        doc = orjson.loads(members["quarantine.json"])
        _rewrite_raw(doc["lines"][0], consistent=True)
        members["quarantine.json"] = orjson.dumps(doc)
        events = parse_events_jsonl(members["events.jsonl"]).events
        members["report.json"] = orjson.dumps(replay_report(events, doc["lines"]),
                                              option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
        from rummyguard.replay.bundle import _render_html

        page, _ = _render_html(events, doc["lines"])
        assert page is not None
        members["report.html"] = page

    code, checks = _forged(kept, tmp_path, rewrite_all)
    assert code == 0, checks
    assert checks["quarantine"][0] == "warn"
    assert {checks[n][0] for n in ("chain", "inclusion", "trusted-checkpoint")} == {"pass"}


def test_adding_quarantine_to_a_clean_bundle_fails(kept: dict[str, dict[str, Any]],
                                                   tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    db = _store(clean, _plain())
    members = _dispute(db, clean / "b.zip")
    donor = kept["second event at a taken seq"]["members"]
    members["quarantine.json"] = donor["quarantine.json"]
    manifest = orjson.loads(members["manifest.json"])
    manifest["quarantine"] = orjson.loads(donor["manifest.json"])["quarantine"]
    members["manifest.json"] = orjson.dumps(manifest)
    path = tmp_path / "added.zip"
    path.write_bytes(_zip(_resign(members)))
    code, checks = _check(path, *_trusted(db))
    assert code == 1 and checks["replay"][0] == "fail", checks


# --- games ingest cut short: no bundle, and the refusal says why -------------------------------
@pytest.mark.parametrize("case", list(CUT))
def test_cut_short_game_is_refused_for_what_it_is(tmp_path: Path, case: str) -> None:
    db = _store(tmp_path, CUT[case](), checkpoint=False)  # nothing finished to checkpoint
    shown = _replay_json(db)
    assert shown["record"]["findings"]  # the store's replay goes past seq 12 and judges it
    # a tampered line and a gap do not stop the store's replay: it reaches the end
    assert shown["finished"] is (case != "schema-invalid event in place of seq 13")
    out = _cli("dispute", GAME, "--db", db, "--bundle", tmp_path / "b.zip")
    assert out.exit_code == 2
    text = " ".join(out.output.split())
    assert "has not finished" not in text
    assert "stored events end at seq 12" in text and "quarantined" in text, text
    assert f"replay {GAME} --db" in text
    assert not (tmp_path / "b.zip").exists()


def test_unfinished_game_keeps_its_message(tmp_path: Path) -> None:
    db = _store(tmp_path, _plain()[:20], checkpoint=False)
    out = _cli("dispute", GAME, "--db", db, "--bundle", tmp_path / "b.zip")
    assert out.exit_code == 2 and "has not finished" in " ".join(out.output.split())


# --- the decision is documented -------------------------------------------------------------
def test_docs_say_what_the_bundle_holds() -> None:
    text = " ".join((DOCS / "disputes.md").read_text(encoding="utf-8").split())
    for needed in ("`quarantine.json`", "unproven", "`quarantine`",
                   "stored events end at seq", "cannot be bundled"):
        assert needed in text, needed
    assert "the SQL views and a dispute bundle do not hold it" not in text
