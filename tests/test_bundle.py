"""Dispute bundles end to end: a real store, real checkpoints, and a forger's toolbox.

Every adversarial bundle is re-signed the way a forger would (the manifest's hashes
recomputed), so the test shows the check that *really* catches the forgery, not just
the manifest.
"""

from __future__ import annotations

import io
import subprocess
import sys
import types
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events.checkpoint import TamperError, inclusion_proof, make_checkpoint
from rummyguard.events.hashing import chain
from rummyguard.events.store import EventStore
from rummyguard.replay.bundle import (
    CHECK_NAMES,
    BundleCheck,
    BundleError,
    TrustedCheckpoint,
    build_bundle,
    check_bundle,
)
from rummyguard.replay.engine import replay
from rummyguard.sim.driver import play

CLASSIC = Path(__file__).parent / "data" / "classic"
T1 = datetime(2026, 11, 30, 9, 30, 0, 250000, tzinfo=UTC)
T2 = datetime(2026, 12, 1, 9, 30, 0, tzinfo=UTC)
CLAIM_GAME = "sample-c-claim"  # a finished game whose replay has two C-CLAIM findings


def _lines(events: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def fake_page(events: list[dict[str, Any]], **_: Any) -> str:
    """A stand-in replay page: deterministic and derived from the events, like the real one."""
    return (f"<!doctype html><title>{events[0]['game_id']}</title>"
            f"<p>{len(events)} events ending in {events[-1]['hash']}")


def _fake_html_module(render: Callable[..., str]) -> types.ModuleType:
    module = types.ModuleType("rummyguard.replay.html")
    module.render_html = render  # type: ignore[attr-defined]
    return module


@pytest.fixture(scope="module", autouse=True)
def stand_in_renderer() -> Iterator[None]:
    """These tests are about the bundle, so the HTML page comes from a stand-in renderer:
    the real page (another module, with its own tests) may change between building a
    bundle and checking it. ``test_real_replay_page`` uses the real one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "rummyguard.replay.html", _fake_html_module(fake_page))
        yield


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A store: checkpoint 1 over four finished games, then checkpoint 2 with a fifth;
    then one finished game not yet checkpointed and one unfinished game.

    ``g-prod`` is chained by the producer, ``g-ingest`` and ``g-three`` by the store.
    """
    path = tmp_path_factory.mktemp("bundle") / "log.duckdb"
    store = EventStore.open(path)
    prod = chain(play("classic", ["p1", "p2"], seed=25, game_id="g-prod"))
    ingest = play("classic", ["p1", "p2"], seed=21, game_id="g-ingest")
    three = play("classic", ["p1", "p2", "p3"], seed=11, game_id="g-three")
    assert store.ingest_lines(_lines(prod) + _lines(ingest) + _lines(three)).quarantined == 0
    assert store.ingest_files([CLASSIC / "C-CLAIM.jsonl"]).stored == 10
    cp1 = make_checkpoint(store.con, now=T1)
    late = chain(play("classic", ["p1", "p2"], seed=30, game_id="g-late"))
    assert store.ingest_lines(_lines(late)).stored == len(late)
    cp2 = make_checkpoint(store.con, now=T2)
    after = chain(play("classic", ["p1", "p2"], seed=31, game_id="g-after"))
    running = chain(play("classic", ["p1", "p2"], seed=22, game_id="g-running"))[:12]
    assert store.ingest_lines(_lines(after) + _lines(running)).quarantined == 0
    bundles = {g: build_bundle(store, g) for g in ("g-prod", "g-ingest", CLAIM_GAME)}
    bundles["g-prod@1"] = build_bundle(store, "g-prod", 1)
    store.close()
    yield {"path": path, "cp1": cp1, "cp2": cp2, "bundles": bundles}


def members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def forge(data: bytes, edit: Callable[[dict[str, bytes]], None], *, resign: bool = True) -> bytes:
    """Apply ``edit`` to the members; with ``resign`` recompute the manifest's hashes."""
    import hashlib

    members = members_of(data)
    edit(members)
    if resign:
        manifest = orjson.loads(members["manifest.json"])
        manifest["members"] = {
            name: {"sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
            for name, body in members.items()
            if name != "manifest.json"
        }
        members["manifest.json"] = orjson.dumps(manifest)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return out.getvalue()


def edit_json(name: str, change: Callable[[Any], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(members: dict[str, bytes]) -> None:
        doc = orjson.loads(members[name])
        change(doc)
        members[name] = orjson.dumps(doc)

    return edit


def edit_events(change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
                ) -> Callable[[dict[str, bytes]], None]:
    def edit(members: dict[str, bytes]) -> None:
        events = [orjson.loads(line) for line in members["events.jsonl"].splitlines()]
        members["events.jsonl"] = b"".join(orjson.dumps(e) + b"\n" for e in change(events))

    return edit


def statuses(result: BundleCheck) -> dict[str, str]:
    return {c.name: c.status for c in result.checks}


def trusted(cp: Any) -> TrustedCheckpoint:
    return TrustedCheckpoint(cp.tree_size, cp.root_hash)


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


# --- what a bundle holds ----------------------------------------------------------------
@pytest.mark.parametrize("game_id", ["g-prod", "g-ingest", CLAIM_GAME])
def test_bundle_holds_the_raw_lines_the_report_and_the_proof(world: dict[str, Any],
                                                              game_id: str) -> None:
    members = members_of(world["bundles"][game_id])
    assert sorted(members) == list(members)  # stored in sorted order
    assert {"events.jsonl", "report.json", "checkpoint.json", "proof.json", "README.txt",
            "manifest.json"} <= set(members)
    with EventStore.open(world["path"], read_only=True) as store:
        raws = store.con.execute(
            "SELECT raw FROM store.events WHERE game_id = ? ORDER BY seq", [game_id]
        ).fetchall()
        events = store.load_game(game_id)
        proof = inclusion_proof(store.con, game_id)
    assert members["events.jsonl"] == b"".join(r[0].encode() + b"\n" for r in raws)
    report = orjson.loads(members["report.json"])
    assert report["record"] == orjson.loads(orjson.dumps(replay(events).to_dict()))
    assert [row["seq"] for row in report["timeline"]] == [e["seq"] for e in events]
    assert orjson.loads(members["proof.json"]) == proof.to_document()
    assert orjson.loads(members["checkpoint.json"]) == world["cp2"].to_document()
    manifest = orjson.loads(members["manifest.json"])
    from rummyguard import __version__

    assert manifest["tool"] == {"name": "rummyguard", "version": __version__}
    assert manifest["game_id"] == game_id
    assert set(manifest["members"]) == set(members) - {"manifest.json"}
    assert manifest["html"]["included"] == ("report.html" in members)
    if not manifest["html"]["included"]:
        assert manifest["html"]["reason"]


def test_claim_game_bundle_carries_its_findings(world: dict[str, Any]) -> None:
    report = orjson.loads(members_of(world["bundles"][CLAIM_GAME])["report.json"])
    assert [(f["seq"], f["rule"]) for f in report["record"]["findings"]] == [
        (7, "C-CLAIM"), (9, "C-CLAIM")]
    assert {f["rule"] for row in report["timeline"] for f in row["findings"]} == {"C-CLAIM"}


@pytest.mark.parametrize("game_id", ["g-prod", "g-ingest", CLAIM_GAME])
def test_a_genuine_bundle_passes_every_check(world: dict[str, Any], game_id: str) -> None:
    result = check_bundle(world["bundles"][game_id], trusted(world["cp2"]))
    assert [c.name for c in result.checks] == list(CHECK_NAMES)
    assert result.failed == [] and result.exit_code == 0, result.to_dict()
    assert statuses(result)["trusted-checkpoint"] == "pass"
    assert statuses(result)["html"] in ("pass", "skip")
    untrusted = check_bundle(world["bundles"][game_id])
    assert untrusted.exit_code == 0
    warning = untrusted.get("trusted-checkpoint")
    assert warning is not None and warning.status == "warn"
    assert "proves nothing by itself" in warning.detail


def test_bundles_are_byte_identical_for_the_same_store_state(world: dict[str, Any],
                                                             tmp_path: Path) -> None:
    with EventStore.open(world["path"], read_only=True) as store:
        again = build_bundle(store, "g-ingest")
    assert again == world["bundles"]["g-ingest"]
    for name in ("a.zip", "b.zip"):
        result = cli("dispute", "g-prod", "--bundle", str(tmp_path / name), "--db",
                     str(world["path"]))
        assert result.exit_code == 0, result.output
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    assert (tmp_path / "a.zip").read_bytes() == world["bundles"]["g-prod"]
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        assert {i.date_time for i in archive.infolist()} == {(2026, 12, 1, 9, 30, 0)}


def test_bundle_against_an_older_checkpoint(world: dict[str, Any]) -> None:
    old = world["bundles"]["g-prod@1"]
    assert orjson.loads(members_of(old)["checkpoint.json"])["n"] == 1
    assert check_bundle(old, trusted(world["cp1"])).exit_code == 0
    # The regulator holds checkpoint 2: the bundle's checkpoint 1 is not it.
    result = check_bundle(old, trusted(world["cp2"]))
    assert result.failed == ["trusted-checkpoint"]
    assert "--checkpoint" in (result.get("trusted-checkpoint") or result.checks[0]).detail


# --- the dispute command ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("game_id", "extra", "expected"),
    [
        ("g-after", [], "is in no checkpoint yet: run `rummyguard checkpoint` first"),
        ("g-running", [], "has not finished"),
        ("nope", [], "not found"),
        ("g-late", ["--checkpoint", "1"], "use a later checkpoint"),
        ("g-prod", ["--checkpoint", "9"], "there is no checkpoint 9"),
    ],
)
def test_dispute_refuses_with_one_line(world: dict[str, Any], tmp_path: Path, game_id: str,
                                       extra: list[str], expected: str) -> None:
    out = tmp_path / "x.zip"
    result = cli("dispute", game_id, "--bundle", str(out), "--db", str(world["path"]), *extra)
    assert result.exit_code == 2
    assert expected in " ".join(result.output.split())
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not out.exists()


def test_dispute_without_any_checkpoint_suggests_one(tmp_path: Path) -> None:
    with EventStore.open(tmp_path / "s.duckdb") as store:
        store.ingest_files([CLASSIC / "clean.jsonl"])
    result = cli("dispute", "sample-clean", "--bundle", str(tmp_path / "b.zip"), "--db",
                 str(tmp_path / "s.duckdb"))
    assert result.exit_code == 2
    assert "run `rummyguard checkpoint` first" in result.output


def test_dispute_refuses_a_store_whose_raw_line_was_edited(world: dict[str, Any],
                                                           tmp_path: Path) -> None:
    """An operator edits a stored line of a store-chained game but leaves the hashes."""
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(world["path"].read_bytes())
    with EventStore.open(copy) as store:
        raw = store.con.execute(
            "SELECT raw FROM store.events WHERE game_id = 'g-ingest' AND seq = 5").fetchone()
        assert raw is not None
        event = orjson.loads(raw[0])
        event["ts"] = event["ts"][:-4] + "999Z"
        store.con.execute(
            "UPDATE store.events SET raw = ? WHERE game_id = 'g-ingest' AND seq = 5",
            [orjson.dumps(event).decode()])
        with pytest.raises(TamperError, match="stored hashes differ from the raw lines"):
            build_bundle(store, "g-ingest")
    result = cli("dispute", "g-ingest", "--bundle", str(tmp_path / "b.zip"), "--db", str(copy))
    assert result.exit_code == 1
    assert "refused" in result.output
    assert not (tmp_path / "b.zip").exists()


def test_build_bundle_error_types(world: dict[str, Any]) -> None:
    with EventStore.open(world["path"], read_only=True) as store, \
            pytest.raises(BundleError, match="not found"):
        build_bundle(store, "missing")


# --- check-bundle from the command line ------------------------------------------------
def test_check_bundle_cli_passes_and_reports_json(world: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    path.write_bytes(world["bundles"][CLAIM_GAME])
    cp = world["cp2"]
    ok = cli("check-bundle", str(path), "--root", cp.root_hash.upper(), "--size",
             str(cp.tree_size))
    assert ok.exit_code == 0, ok.output
    for name in ("archive", "manifest", "chain", "inclusion", "trusted-checkpoint", "replay"):
        assert any(line.split()[:2] == ["PASS", name] for line in ok.output.splitlines()), name
    plain = cli("check-bundle", str(path))
    assert plain.exit_code == 0
    assert "WARN  trusted-checkpoint" in plain.output
    assert "proves nothing by itself" in " ".join(plain.output.split())
    doc = orjson.loads(cli("check-bundle", str(path), "--json").stdout)
    assert doc["ok"] is True and doc["game_id"] == CLAIM_GAME
    assert [c["name"] for c in doc["checks"]] == list(CHECK_NAMES)


@pytest.mark.parametrize(
    "args",
    [["--root", "ab" * 32], ["--size", "3"], ["--root", "xyz", "--size", "3"]],
)
def test_check_bundle_cli_rejects_bad_trust_arguments(world: dict[str, Any], tmp_path: Path,
                                                      args: list[str]) -> None:
    path = tmp_path / "b.zip"
    path.write_bytes(world["bundles"]["g-prod"])
    assert cli("check-bundle", str(path), *args).exit_code == 2


def test_check_bundle_cli_on_a_non_zip_and_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "not.zip"
    path.write_bytes(b'{"this": "is json, not a zip"}\n')
    result = cli("check-bundle", str(path))
    assert result.exit_code == 2
    assert "is not a usable dispute bundle: not a readable zip file" in result.output
    assert "Traceback" not in result.output
    assert cli("check-bundle", str(tmp_path / "missing.zip")).exit_code == 2


def test_check_bundle_cli_names_the_failed_check(world: dict[str, Any], tmp_path: Path) -> None:
    forged = forge(world["bundles"]["g-prod"], edit_json(
        "proof.json", lambda d: d["inclusion_path"].pop()))
    path = tmp_path / "forged.zip"
    path.write_bytes(forged)
    result = cli("check-bundle", str(path))
    assert result.exit_code == 1
    assert "FAIL  inclusion" in result.output
    assert "1 check(s) failed: inclusion" in result.output


# --- forgeries ---------------------------------------------------------------------------
def _swap_card(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Edit a discard in place, leaving its hash as it was."""
    for event in events:
        if event["type"] == "Discarded" and event["seq"] > 5:
            event["payload"]["card"] = "AS" if event["payload"]["card"] != "AS" else "KS"
            return events
    raise AssertionError("no discard to edit")


def _rechained(edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
               ) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """The smarter forger: edit, then recompute the whole chain so it holds again."""
    return lambda events: chain(edit(events))


def _drop_middle(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return events[:10] + events[11:]


def _both_checkpoints(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(members: dict[str, bytes]) -> None:
        proof = orjson.loads(members["proof.json"])
        change(proof["checkpoint"])
        members["proof.json"] = orjson.dumps(proof)
        members["checkpoint.json"] = orjson.dumps(proof["checkpoint"])

    return edit


def _add_fake_finding(report: dict[str, Any]) -> None:
    report["record"]["findings"].append(
        {"seq": 3, "rule": "CL-DRAW", "kind": "violation", "message": "invented"})
    report["record"]["clean"] = False


def _hide_findings(report: dict[str, Any]) -> None:
    report["record"]["findings"] = []
    report["record"]["clean"] = True


def _redirect_winnings(report: dict[str, Any]) -> None:
    net = report["record"]["results"]["net"]
    a, b = sorted(net)
    net[a], net[b] = net[b], net[a]


def _fake_timeline(report: dict[str, Any]) -> None:
    report["timeline"][4]["text"] = "p1 drew A♠ from the stock"


FORGERIES: list[tuple[str, str, Any, str, str]] = [
    # (id, game, edit or edit factory, failing check, words in its detail)
    ("edited-event", "g-prod", edit_events(_swap_card), "chain",
     "hash does not match the event's content"),
    ("edited-event-rechained", "g-prod", edit_events(_rechained(_swap_card)), "inclusion",
     "the proof is for last event hash"),
    ("edited-event-ingest-chained", "g-ingest", edit_events(_swap_card), "inclusion",
     "the proof is for last event hash"),
    ("dropped-event", "g-prod", edit_events(_drop_middle), "chain", "sequence gap"),
    ("dropped-event-rechained", "g-prod",
     edit_events(lambda es: chain([{**e, "seq": i} for i, e in enumerate(_drop_middle(es))])),
     "inclusion", "the proof is for last event hash"),
    ("dropped-last-event", "g-ingest", edit_events(lambda es: es[:-1]), "inclusion",
     "the proof is for last event hash"),
    ("report-fake-finding", CLAIM_GAME, edit_json("report.json", _add_fake_finding), "replay",
     "record.findings"),
    ("report-hidden-findings", CLAIM_GAME, edit_json("report.json", _hide_findings), "replay",
     "record"),
    ("report-results", "g-prod", edit_json("report.json", _redirect_winnings), "replay",
     "record.results.net"),
    ("report-timeline", "g-prod", edit_json("report.json", _fake_timeline), "replay",
     "timeline[4].text"),
    # Leaf 1 has a path of the same shape in trees of 5 and 6 leaves: only the trusted
    # size catches the larger one (the reason a root means nothing without its size).
    ("wrong-tree-size-same-path", "g-prod",
     _both_checkpoints(lambda cp: cp.update(tree_size=cp["tree_size"] + 1)),
     "trusted-checkpoint", "is not the trusted one"),
    ("wrong-tree-size", "g-prod",
     _both_checkpoints(lambda cp: cp.update(tree_size=cp["tree_size"] - 1)), "inclusion",
     "inclusion path has"),
    ("truncated-path", "g-prod", edit_json("proof.json", lambda d: d["inclusion_path"].pop()),
     "inclusion", ""),
    ("extended-path", "g-prod",
     edit_json("proof.json", lambda d: d["inclusion_path"].append("00" * 32)), "inclusion", ""),
    ("other-leaf-index", "g-prod", edit_json("proof.json", lambda d: d.update(leaf_index=d["leaf_index"] ^ 1)),
     "inclusion", "does not lead to the root"),
    ("checkpoint-json-disagrees", "g-prod",
     edit_json("checkpoint.json", lambda d: d.update(created_at="2027-01-01T00:00:00.000Z")),
     "inclusion", "checkpoint.json is not the checkpoint the proof is against"),
    ("manifest-game-id", "g-prod", edit_json("manifest.json", lambda d: d.update(game_id="g-ingest")),
     "chain", "belongs to game 'g-prod', not 'g-ingest'"),
    ("missing-report", "g-prod", lambda m: m.pop("report.json"), "manifest",
     "report.json is missing"),
]


@pytest.mark.parametrize(
    ("game", "edit", "check", "words"),
    [pytest.param(*f[1:], id=f[0]) for f in FORGERIES],
)
def test_forged_bundles_fail_the_right_check(world: dict[str, Any], game: str, edit: Any,
                                             check: str, words: str) -> None:
    result = check_bundle(forge(world["bundles"][game], edit), trusted(world["cp2"]))
    failed = {c.name: c.detail for c in result.checks if c.status == "fail"}
    assert check in failed, result.to_dict()
    assert words in failed[check]
    assert result.exit_code == 1
    if check != "manifest":
        assert "manifest" not in failed  # re-signed: the manifest alone would not catch it


def test_a_proof_for_another_game(world: dict[str, Any]) -> None:
    theirs = members_of(world["bundles"]["g-ingest"])

    def swap(members: dict[str, bytes]) -> None:
        members["proof.json"] = theirs["proof.json"]
        members["checkpoint.json"] = theirs["checkpoint.json"]

    result = check_bundle(forge(world["bundles"]["g-prod"], swap), trusted(world["cp2"]))
    assert result.failed == ["inclusion"]
    assert "the proof is for game 'g-ingest', not 'g-prod'" in (
        result.get("inclusion") or result.checks[0]).detail


def test_a_checkpoint_root_that_is_not_the_trusted_one(world: dict[str, Any]) -> None:
    """A forger rebuilds a whole tree around a rewritten game: internally consistent,
    but its root is not the one that was published."""
    from rummyguard.events.merkle import MerkleTree

    def rebuild(members: dict[str, bytes]) -> None:
        events = chain([orjson.loads(x) for x in members["events.jsonl"].splitlines()])
        _swap_card(events)
        events = chain(events)
        members["events.jsonl"] = b"".join(orjson.dumps(e) + b"\n" for e in events)
        proof = orjson.loads(members["proof.json"])
        leaves = [bytes.fromhex(events[-1]["hash"])] + [bytes([i]) * 32 for i in range(4)]
        tree = MerkleTree.from_leaves(leaves)
        proof.update(last_event_hash=events[-1]["hash"], leaf_index=0,
                     inclusion_path=[h.hex() for h in tree.inclusion_path(0)])
        proof["checkpoint"].update(tree_size=5, root_hash=tree.root().hex())
        members["proof.json"] = orjson.dumps(proof)
        members["checkpoint.json"] = orjson.dumps(proof["checkpoint"])
        manifest = orjson.loads(members["manifest.json"])  # what a person reads: the same
        manifest.update(checkpoint=proof["checkpoint"], leaf_index=0)
        manifest["events"]["last_event_hash"] = events[-1]["hash"]
        members["manifest.json"] = orjson.dumps(manifest)

    forged = forge(world["bundles"]["g-prod"], rebuild)
    alone = check_bundle(forged)
    assert statuses(alone)["inclusion"] == "pass"  # consistent with its own checkpoint
    assert statuses(alone)["trusted-checkpoint"] == "warn"
    result = check_bundle(forged, trusted(world["cp2"]))
    assert "trusted-checkpoint" in result.failed
    assert "is not the trusted one" in (result.get("trusted-checkpoint") or result.checks[0]).detail


def test_an_unexpected_member(world: dict[str, Any]) -> None:
    forged = forge(world["bundles"]["g-prod"], lambda m: m.update({"run-me.sh": b"rm -rf /"}),
                   resign=False)
    result = check_bundle(forged, trusted(world["cp2"]))
    assert result.failed == ["archive"]
    assert "unexpected members ['run-me.sh']" in result.checks[0].detail
    listed = forge(world["bundles"]["g-prod"], lambda m: m.update({"run-me.sh": b"rm -rf /"}))
    assert check_bundle(listed).failed == ["archive", "manifest"]


def test_a_manifest_hash_mismatch(world: dict[str, Any]) -> None:
    forged = forge(world["bundles"]["g-prod"], lambda m: m.update(
        {"README.txt": m["README.txt"] + b"\nall is fine, no need to check.\n"}), resign=False)
    result = check_bundle(forged, trusted(world["cp2"]))
    assert result.failed == ["manifest"]
    assert "README.txt: SHA-256 or size does not match" in (
        result.get("manifest") or result.checks[0]).detail


@pytest.mark.parametrize(
    "data",
    [b"", b"PK\x03\x04 truncated", b'{"events": []}'],
    ids=["empty", "truncated-zip", "json"],
)
def test_non_zip_input_is_unusable(data: bytes) -> None:
    result = check_bundle(data)
    assert result.exit_code == 2 and not result.usable
    assert result.failed == ["archive"]


def test_zip_without_a_manifest_is_unusable(world: dict[str, Any]) -> None:
    forged = forge(world["bundles"]["g-prod"], lambda m: m.pop("manifest.json"), resign=False)
    result = check_bundle(forged)
    assert result.exit_code == 2
    assert "no manifest.json" in result.checks[0].detail


def test_unreadable_events_are_reported_not_crashed_on(world: dict[str, Any]) -> None:
    forged = forge(world["bundles"]["g-prod"], lambda m: m.update(
        {"events.jsonl": m["events.jsonl"].replace(b'"Drew"', b'"Teleported"', 1)}))
    result = check_bundle(forged)
    assert {"chain", "inclusion", "replay"} <= set(result.failed)
    assert "unknown_type" in (result.get("chain") or result.checks[0]).detail


# --- the HTML page ------------------------------------------------------------------------
def test_html_is_left_out_with_the_reason_when_the_renderer_fails(
        world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(events: list[dict[str, Any]], **_: Any) -> str:
        raise FileNotFoundError("replay_page.js")

    monkeypatch.setitem(sys.modules, "rummyguard.replay.html", _fake_html_module(broken))
    with EventStore.open(world["path"], read_only=True) as store:
        data = build_bundle(store, "g-prod")
    members = members_of(data)
    assert "report.html" not in members
    manifest = orjson.loads(members["manifest.json"])
    assert manifest["html"]["included"] is False
    assert "FileNotFoundError: replay_page.js" in manifest["html"]["reason"]
    assert b"not included: manifest.json field html.reason says why" in members["README.txt"]
    result = check_bundle(data, trusted(world["cp2"]))
    assert result.exit_code == 0
    assert statuses(result)["html"] == "skip"


def test_html_is_included_and_rechecked(world: dict[str, Any]) -> None:
    members = members_of(world["bundles"]["g-prod"])
    assert members["report.html"].startswith(b"<!doctype html><title>g-prod</title>")
    manifest = orjson.loads(members["manifest.json"])
    assert manifest["html"] == {"included": True, "reason": None}
    assert statuses(check_bundle(world["bundles"]["g-prod"]))["html"] == "pass"
    forged = forge(world["bundles"]["g-prod"],
                   lambda m: m.update({"report.html": m["report.html"] + b"<p>forged"}))
    assert check_bundle(forged).failed == ["html"]


def test_real_replay_page(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real renderer (whatever state it is in), the bundle still verifies: the
    page is included when it renders, and left out with the reason when it does not."""
    monkeypatch.delitem(sys.modules, "rummyguard.replay.html")
    with EventStore.open(world["path"], read_only=True) as store:
        data = build_bundle(store, "g-three")
    manifest = orjson.loads(members_of(data)["manifest.json"])
    assert manifest["html"]["included"] == ("report.html" in members_of(data))
    assert manifest["html"]["included"] or manifest["html"]["reason"]
    result = check_bundle(data, trusted(world["cp2"]))
    assert result.exit_code == 0, result.to_dict()
    assert statuses(result)["html"] == ("pass" if manifest["html"]["included"] else "skip")


# --- the README's by-hand check -----------------------------------------------------------
def _hand_script(data: bytes, tmp_path: Path) -> Path:
    readme = members_of(data)["README.txt"].decode()
    script = readme.split("check.py\n--------\n", 1)[1]
    path = tmp_path / "check.py"
    path.write_text(script, encoding="utf-8")
    return path


@pytest.mark.parametrize("game_id", ["g-prod", "g-ingest"])
def test_readme_script_checks_a_bundle_with_the_standard_library_only(
        world: dict[str, Any], tmp_path: Path, game_id: str) -> None:
    data = world["bundles"][game_id]
    script = _hand_script(data, tmp_path)
    good = tmp_path / "good.zip"
    good.write_bytes(data)
    # -I: isolated mode, no site-packages: nothing of ours (or orjson) is importable.
    ok = subprocess.run([sys.executable, "-I", str(script), str(good)], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert world["cp2"].root_hash in ok.stdout
    bad = tmp_path / "bad.zip"
    bad.write_bytes(forge(data, edit_events(_rechained(_swap_card))))
    refused = subprocess.run([sys.executable, "-I", str(script), str(bad)], capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode != 0
    assert "the proof is about other events" in refused.stderr
