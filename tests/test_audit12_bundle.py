"""Audit 12: the dispute bundle and the Merkle checkpoints, attacked.

Three adversaries (docs/disputes.md, README "Settling a dispute"):

- a dishonest operator, who edits, drops, reorders or re-chains events, rewrites the
  manifest, rebuilds the tree, or rewrites the store's history;
- a dishonest player, who edits report.json to hide or invent a finding, or swaps
  proofs between games;
- a careless recipient, who opens whatever zip he is sent, or checks by hand with the
  README's standard-library script instead of ``check-bundle``.

The tests pin what holds and the nine defects audit 12 found and fixed (a member the
checker cannot read, inclusion about a declared hash, report.json compared by value, the
manifest's claims, README's check script: replaced, another game, not JCS, asserts). Every forged bundle is re-signed the way a forger
would (the manifest's hashes recomputed) unless the test says otherwise, so the check
that fails is the one that really catches the forgery.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import types
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from typer.testing import CliRunner

from rummyguard.cli.app import app
from rummyguard.events import merkle
from rummyguard.events.checkpoint import (
    ProofError,
    TamperError,
    make_checkpoint,
    verify_proof_document,
)
from rummyguard.events.hashing import chain
from rummyguard.events.store import EventStore
from rummyguard.replay.bundle import (
    CHECK_NAMES,
    BundleCheck,
    TrustedCheckpoint,
    build_bundle,
    check_bundle,
    parse_events_jsonl,
    replay_report,
)
from rummyguard.sim.driver import play

Event = dict[str, Any]
Members = dict[str, bytes]

CLASSIC = Path(__file__).parent / "data" / "classic"
T1 = datetime(2026, 11, 30, 9, 30, 1, 250000, tzinfo=UTC)
T2 = datetime(2026, 12, 1, 10, 0, 3, tzinfo=UTC)
CLAIM = "sample-c-claim"  # finished, replay gives C-CLAIM findings
VARIANT_GAMES = {"g-r500": "r500", "g-liverpool": "liverpool", "g-michigan": "michigan"}
LINE_SEPARATOR_ID = "ann\u2028bob"  # a player id with a raw U+2028 (valid in JSON strings)
FULLWIDTH, EMOJI = "\uff41", "\U0001f600"  # BMP above the surrogates / outside the BMP


# --- a stand-in page renderer (as tests/test_bundle.py: the page has its own tests) -------
def fake_page(events: list[Event], **_: Any) -> str:
    """Deterministic and derived from the events, like the real page."""
    return (f"<!doctype html><title>{events[0]['game_id']}</title>"
            f"<p>{len(events)} events ending in {events[-1]['hash']}")


@pytest.fixture(scope="module", autouse=True)
def stand_in_renderer() -> Iterator[None]:
    module = types.ModuleType("rummyguard.replay.html")
    module.render_html = fake_page  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "rummyguard.replay.html", module)
        yield


# --- the world ------------------------------------------------------------------------------
def _lines(events: list[Event]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def _halted(events: list[Event]) -> list[Event]:
    """A finished game whose replay halts: a discard of a card the player cannot hold."""
    for event in events:
        if event["type"] == "Discarded" and event["seq"] > 5:
            event["payload"]["card"] = "JK"
            return chain([{k: v for k, v in e.items() if k not in ("hash", "prev_hash")}
                          for e in events])
    raise AssertionError("no discard to edit")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Checkpoint 1 over nine finished games (every variant, a halted game, a game with
    findings, both chain modes, awkward player ids), checkpoint 2 with one more; then an
    unrelated finished game and an unfinished one, never checkpointed."""
    path = tmp_path_factory.mktemp("audit12") / "log.duckdb"
    store = EventStore.open(path)
    games = [
        chain(play("classic", ["p1", "p2"], seed=25, game_id="g-prod")),
        play("classic", ["p1", "p2"], seed=21, game_id="g-ingest"),
        _halted(chain(play("classic", ["p1", "p2"], seed=26, game_id="g-halt"))),
        chain(play("classic", [LINE_SEPARATOR_ID, "cid"], seed=3, game_id="g-ls")),
        play("classic", [FULLWIDTH, EMOJI], seed=3, game_id="g-emoji"),
        *(chain(play(v, ["p1", "p2", "p3"], seed=5, game_id=g)) for g, v in VARIANT_GAMES.items()),
    ]
    for events in games:
        assert store.ingest_lines(_lines(events)).quarantined == 0
    assert store.ingest_files([CLASSIC / "C-CLAIM.jsonl"]).stored == 10
    cp1 = make_checkpoint(store.con, now=T1)
    before_cp2 = build_bundle(store, "g-prod")  # the latest is checkpoint 1
    late = chain(play("classic", ["p1", "p2"], seed=30, game_id="g-late"))
    assert store.ingest_lines(_lines(late)).stored == len(late)
    cp2 = make_checkpoint(store.con, now=T2)
    ids = ["g-prod", "g-ingest", "g-halt", "g-ls", "g-emoji", CLAIM, "g-late", *VARIANT_GAMES]
    bundles = {g: build_bundle(store, g) for g in ids}
    # Unrelated traffic after checkpoint 2: a finished game (not checkpointed), an
    # unfinished one, and a late PlayerLeft of g-prod (after its GameEnded).
    after = chain(play("classic", ["p1", "p2"], seed=31, game_id="g-after"))
    running = chain(play("classic", ["p1", "p2"], seed=22, game_id="g-running"))[:12]
    prod = games[0]
    left = chain([*prod, {"event_id": "g-prod-left", "game_id": "g-prod", "seq": len(prod),
                          "type": "PlayerLeft", "v": 1, "ts": prod[-1]["ts"], "actor": "p2",
                          "payload": {}}])[-1]
    assert store.ingest_lines(_lines([*after, *running, left])).quarantined == 0
    rebuilt = {"g-prod": build_bundle(store, "g-prod"), "g-prod@1": build_bundle(store, "g-prod", 1)}
    store.close()
    yield {"path": path, "cp1": cp1, "cp2": cp2, "bundles": bundles, "before_cp2": before_cp2,
           "rebuilt": rebuilt}


# --- helpers ------------------------------------------------------------------------------
def members_of(data: bytes) -> Members:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def resign(members: Members) -> Members:
    """What a forger does after any edit: recompute every member's hash in the manifest."""
    manifest = orjson.loads(members["manifest.json"])
    manifest["members"] = {
        name: {"sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
        for name, body in sorted(members.items()) if name != "manifest.json"
    }
    return {**members, "manifest.json": orjson.dumps(manifest)}


def zip_of(members: Members | list[tuple[str, bytes]]) -> bytes:
    items = members.items() if isinstance(members, dict) else members
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in items:
            archive.writestr(name, body)
    return out.getvalue()


def forge(data: bytes, edit: Callable[[Members], None], *, sign: bool = True) -> bytes:
    members = members_of(data)
    edit(members)
    return zip_of(resign(members) if sign else members)


def events_of(members: Members) -> list[Event]:
    return [orjson.loads(line) for line in members["events.jsonl"].splitlines()]


def set_events(members: Members, events: list[Event]) -> None:
    members["events.jsonl"] = b"".join(orjson.dumps(e) + b"\n" for e in events)


def edit_events(change: Callable[[list[Event]], list[Event]]) -> Callable[[Members], None]:
    return lambda members: set_events(members, change(events_of(members)))


def edit_json(name: str, change: Callable[[Any], None]) -> Callable[[Members], None]:
    def edit(members: Members) -> None:
        doc = orjson.loads(members[name])
        change(doc)
        members[name] = orjson.dumps(doc)

    return edit


def trusted(cp: Any) -> TrustedCheckpoint:
    return TrustedCheckpoint(cp.tree_size, cp.root_hash)


def failed(result: BundleCheck) -> dict[str, str]:
    return {c.name: c.detail for c in result.checks if c.status == "fail"}


def statuses(result: BundleCheck) -> dict[str, str]:
    return {c.name: c.status for c in result.checks}


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def strip_hashes(events: list[Event]) -> list[Event]:
    return [{k: v for k, v in e.items() if k not in ("hash", "prev_hash")} for e in events]


def rechain(events: list[Event]) -> list[Event]:
    """The smarter forger: renumber seq and recompute the whole producer chain."""
    return chain([{**e, "seq": i} for i, e in enumerate(strip_hashes(events))])


def _swap_discard(events: list[Event]) -> list[Event]:
    for event in events:
        if event["type"] == "Discarded" and event["seq"] > 5:
            event["payload"]["card"] = "AS" if event["payload"]["card"] != "AS" else "KS"
            return events
    raise AssertionError("no discard")


# --- every genuine bundle passes, in every variant and state -------------------------------
GENUINE = ["g-prod", "g-ingest", "g-halt", "g-ls", "g-emoji", CLAIM, "g-late", *VARIANT_GAMES]


@pytest.mark.parametrize("game_id", GENUINE)
def test_every_genuine_bundle_passes_every_check(world: dict[str, Any], game_id: str) -> None:
    result = check_bundle(world["bundles"][game_id], trusted(world["cp2"]))
    assert [c.name for c in result.checks] == list(CHECK_NAMES)
    assert statuses(result) == dict.fromkeys(CHECK_NAMES, "pass"), result.to_dict()
    assert result.exit_code == 0


def test_halted_and_findings_games_carry_their_verdict(world: dict[str, Any]) -> None:
    halted = orjson.loads(members_of(world["bundles"]["g-halt"])["report.json"])["record"]
    assert halted["halted"] is True and halted["findings"]
    claim = orjson.loads(members_of(world["bundles"][CLAIM])["report.json"])["record"]
    assert {f["rule"] for f in claim["findings"]} == {"C-CLAIM"}


# --- determinism ---------------------------------------------------------------------------
def test_same_state_same_bytes_and_unrelated_traffic_changes_nothing(world: dict[str, Any]) -> None:
    """After checkpoint 2: an unrelated finished game, an unfinished one and a late
    PlayerLeft of the game itself (outside its leaf) leave its bundle byte-identical;
    and a bundle against checkpoint 1 made after checkpoint 2 is the one made before."""
    assert world["rebuilt"]["g-prod"] == world["bundles"]["g-prod"]
    assert world["rebuilt"]["g-prod@1"] == world["before_cp2"]


_OTHER_PROCESS = """
import hashlib, sys, types
page = types.ModuleType("rummyguard.replay.html")
def render_html(events, **_):
    return (f"<!doctype html><title>{events[0]['game_id']}</title>"
            f"<p>{len(events)} events ending in {events[-1]['hash']}")
page.render_html = render_html
sys.modules["rummyguard.replay.html"] = page
from rummyguard.events.store import EventStore
from rummyguard.replay.bundle import build_bundle
with EventStore.open(sys.argv[1], read_only=True) as store:
    print(hashlib.sha256(build_bundle(store, sys.argv[2], 2)).hexdigest())
"""


def test_another_process_with_another_hash_seed_builds_the_same_bytes(world: dict[str, Any]
                                                                       ) -> None:
    done = subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(world["path"]), "g-liverpool"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONHASHSEED": "4242"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == hashlib.sha256(world["bundles"]["g-liverpool"]).hexdigest()


# --- a dishonest operator: the events ------------------------------------------------------
def _reorder(events: list[Event]) -> list[Event]:
    events[10], events[11] = events[11], events[10]
    return events


def _duplicate(events: list[Event]) -> list[Event]:
    return [*events[:10], events[10], *events[10:]]


def _unhalt(events: list[Event]) -> list[Event]:
    """The operator's fix-up of a halted game: put back a card the player could hold."""
    for event in events:
        if event["type"] == "Discarded" and event["payload"]["card"] == "JK":
            event["payload"]["card"] = "2C"
            return rechain(events)
    raise AssertionError("no JK discard")


EVENT_FORGERIES = [
    # (id, game, edit, the check that must fail)
    ("edit", "g-prod", _swap_discard, "chain"),
    ("edit-rechained", "g-prod", lambda es: rechain(_swap_discard(es)), "inclusion"),
    ("drop", "g-prod", lambda es: es[:10] + es[11:], "chain"),
    ("drop-rechained", "g-prod", lambda es: rechain(es[:10] + es[11:]), "inclusion"),
    ("reorder", "g-prod", _reorder, "chain"),
    ("reorder-rechained", "g-prod", lambda es: rechain(_reorder(es)), "inclusion"),
    ("duplicate", "g-prod", _duplicate, "chain"),
    ("duplicate-rechained", "g-prod", lambda es: rechain(_duplicate(es)), "inclusion"),
    ("append-after-end", "g-prod", lambda es: rechain([*es, {**es[-1], "event_id": "x"}]),
     "inclusion"),
    ("ingest-edit", "g-ingest", _swap_discard, "inclusion"),
    ("ingest-drop", "g-ingest", lambda es: [{**e, "seq": i} for i, e in
                                            enumerate(es[:10] + es[11:])], "inclusion"),
    ("ingest-reorder", "g-ingest", _reorder, "chain"),
    ("ingest-duplicate", "g-ingest", _duplicate, "chain"),
    ("ingest-as-producer", "g-ingest", rechain, "chain"),  # manifest says ingest
    ("other-game-events", "g-prod", lambda es: [{**e, "game_id": "g-late"} for e in es],
     "chain"),
    ("halt-hidden", "g-halt", _unhalt, "inclusion"),
]


@pytest.mark.parametrize(("game", "change", "check"),
                         [pytest.param(*f[1:], id=f[0]) for f in EVENT_FORGERIES])
def test_tampered_events_fail_the_right_check(world: dict[str, Any], game: str,
                                              change: Callable[[list[Event]], list[Event]],
                                              check: str) -> None:
    result = check_bundle(forge(world["bundles"][game], edit_events(change)), trusted(world["cp2"]))
    assert check in failed(result), result.to_dict()
    assert "manifest" not in failed(result)  # re-signed: the manifest is not what caught it
    assert result.exit_code == 1


def _full_forgery(members: Members) -> None:
    """Edit, re-chain, re-sign, and rebuild the tree: a one-leaf log of the forged game,
    with a checkpoint, a proof and a manifest that all agree. Only a trusted root can
    catch this one."""
    events = rechain(_swap_discard(events_of(members)))
    set_events(members, events)
    last = events[-1]["hash"]
    root = merkle.leaf_hash(bytes.fromhex(last)).hex()
    cp = {"n": 1, "tree_size": 1, "root_hash": root, "created_at": "2026-11-30T09:30:01.250Z"}
    proof = orjson.loads(members["proof.json"])
    proof.update(last_event_hash=last, leaf_index=0, checkpoint=cp, inclusion_path=[])
    members["proof.json"] = orjson.dumps(proof)
    members["checkpoint.json"] = orjson.dumps(cp)
    manifest = orjson.loads(members["manifest.json"])
    manifest.update(checkpoint=cp, leaf_index=0)
    manifest["events"]["last_event_hash"] = last
    events_now = parse_events_jsonl(members["events.jsonl"], "g-prod").events
    members["report.json"] = orjson.dumps(  # the bundle's own encoding, to the byte
        replay_report(events_now), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    members["report.html"] = fake_page(events_now).encode()
    members["manifest.json"] = orjson.dumps(manifest)


def test_a_consistent_forgery_is_caught_only_by_the_trusted_root(world: dict[str, Any]) -> None:
    forged = forge(world["bundles"]["g-prod"], _full_forgery)
    alone = check_bundle(forged)
    assert statuses(alone)["trusted-checkpoint"] == "warn"
    assert not alone.failed and alone.exit_code == 0  # documented: proves nothing by itself
    against = check_bundle(forged, trusted(world["cp2"]))
    assert against.failed == ["trusted-checkpoint"]
    assert "is not the trusted one" in failed(against)["trusted-checkpoint"]


# --- a dishonest player: the report and the proof --------------------------------------------
def _hide(record_edit: Callable[[dict[str, Any]], None]) -> Callable[[Members], None]:
    return edit_json("report.json", lambda report: record_edit(report["record"]))


REPORT_FORGERIES = [
    ("hide-halt-finding", "g-halt", _hide(lambda r: r.update(findings=[], clean=True))),
    ("unhalt", "g-halt", _hide(lambda r: r.update(halted=False))),
    ("hide-claim-finding", CLAIM, _hide(lambda r: r["findings"].pop())),
    ("winners", "g-liverpool", _hide(lambda r: r["results"].update(winners=["p3"]))),
    ("timeline-dropped", "g-michigan", edit_json("report.json", lambda d: d["timeline"].pop())),
]


@pytest.mark.parametrize(("game", "edit"), [pytest.param(*f[1:], id=f[0]) for f in REPORT_FORGERIES])
def test_an_edited_report_fails_replay(world: dict[str, Any], game: str,
                                       edit: Callable[[Members], None]) -> None:
    result = check_bundle(forge(world["bundles"][game], edit), trusted(world["cp2"]))
    assert list(failed(result)) == ["replay"], result.to_dict()
    assert "report.json differs from the replay: record" in failed(result)["replay"] or \
        "timeline" in failed(result)["replay"]


def _take(source: bytes, *names: str) -> Callable[[Members], None]:
    theirs = members_of(source)
    return lambda members: members.update({n: theirs[n] for n in names})


def test_a_proof_swapped_in_from_another_game_fails_inclusion(world: dict[str, Any]) -> None:
    result = check_bundle(forge(world["bundles"]["g-prod"],
                                _take(world["bundles"]["g-ingest"], "proof.json")),
                          trusted(world["cp2"]))
    assert "the proof is for game 'g-ingest', not 'g-prod'" in failed(result)["inclusion"]


@pytest.mark.parametrize("edit", [
    pytest.param(lambda d: d.update(leaf_index=d["checkpoint"]["tree_size"]), id="index-past-end"),
    pytest.param(lambda d: d.update(leaf_index=-1), id="negative-index"),
    pytest.param(lambda d: d.update(leaf_index=True), id="bool-index"),
    pytest.param(lambda d: d.update(leaf_index=float(d["leaf_index"])), id="float-index"),
    pytest.param(lambda d: d["inclusion_path"].reverse(), id="path-reversed"),
    pytest.param(lambda d: d.update(inclusion_path=[h.upper() for h in d["inclusion_path"]]),
                 id="upper-hex"),
    pytest.param(lambda d: d.update(extra=1), id="extra-field"),
])
def test_malformed_proofs_fail_inclusion(world: dict[str, Any], edit: Callable[[Any], None]
                                         ) -> None:
    result = check_bundle(forge(world["bundles"]["g-late"], edit_json("proof.json", edit)),
                          trusted(world["cp2"]))
    assert "inclusion" in failed(result), result.to_dict()


def test_a_checkpoint_of_another_store_fails_trusted_checkpoint(world: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    with EventStore.open(tmp_path / "other.duckdb") as other:
        events = chain(play("classic", ["p1", "p2"], seed=25, game_id="g-prod"))
        other.ingest_lines(_lines(events))
        foreign = make_checkpoint(other.con, now=T1)
        own = build_bundle(other, "g-prod")
    # Same game, same events, another log: its proof does not lead to our root...
    assert "trusted-checkpoint" in failed(check_bundle(own, trusted(world["cp2"])))
    # ...and our bundle does not lead to theirs.
    assert "trusted-checkpoint" in failed(check_bundle(world["bundles"]["g-prod"],
                                                       trusted(foreign)))


def test_an_older_trusted_checkpoint_asks_for_a_bundle_against_it(world: dict[str, Any]) -> None:
    result = check_bundle(world["bundles"]["g-prod"], trusted(world["cp1"]))
    assert "rummyguard dispute --checkpoint N" in failed(result)["trusted-checkpoint"]
    assert check_bundle(world["before_cp2"], trusted(world["cp1"])).exit_code == 0


# --- the Merkle log ----------------------------------------------------------------------------
def _mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1 MTH, straight from the definition."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


def _path(m: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    if m < k:
        return [*_path(m, leaves[:k]), _mth(leaves[k:])]
    return [*_path(m - k, leaves[k:]), _mth(leaves[:k])]


def _subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [_mth(leaves)]
    k = 1 << ((n - 1).bit_length() - 1)
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), _mth(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), _mth(leaves[:k])]


def test_merkle_matches_the_rfc_definitions_at_every_size_and_edge() -> None:
    for n in range(1, 18):
        leaves = [bytes([i]) * 32 for i in range(n)]
        tree = merkle.MerkleTree.from_leaves(leaves)
        root = _mth(leaves)
        assert tree.root() == root
        for m in range(n):  # first, last, every leaf in between
            assert tree.inclusion_path(m) == _path(m, leaves)
            merkle.verify_inclusion(merkle.leaf_hash(leaves[m]), m, n, _path(m, leaves), root)
        for old in range(1, n + 1):
            proof = _subproof(old, leaves, True)
            assert tree.consistency_proof(old) == proof
            merkle.verify_consistency(old, n, _mth(leaves[:old]), root, proof)


def test_a_rewritten_history_is_not_consistent_with_the_old_checkpoint() -> None:
    leaves = [bytes([i]) * 32 for i in range(11)]
    for old in range(1, 11):
        rewritten = [b"\xff" * 32, *leaves[1:]]  # game 0 rewritten, then more appended
        with pytest.raises(ProofError):
            merkle.verify_consistency(old, 11, _mth(leaves[:old]), _mth(rewritten),
                                      _subproof(old, rewritten, True))


def test_an_interior_node_cannot_pass_as_a_game(world: dict[str, Any]) -> None:
    """Second preimage: the hash of leaves 0 and 1 offered as the 'last event hash' of a
    one-level-smaller tree. Leaves are hashed with 0x00, nodes with 0x01: refused."""
    tree = merkle.MerkleTree([merkle.leaf_hash(bytes([i]) * 32) for i in range(4)])
    node = merkle.node_hash(tree.leaf_hash(0), tree.leaf_hash(1))
    doc = {"format": "rummyguard.inclusion-proof", "version": 1, "tree": "RFC9162_SHA256",
           "game_id": "g", "last_event_hash": node.hex(), "leaf_index": 0,
           "checkpoint": {"n": 1, "tree_size": 2, "root_hash": tree.root().hex(),
                          "created_at": "2026-11-30T09:30:01.250Z"},
           "inclusion_path": [merkle.node_hash(tree.leaf_hash(2), tree.leaf_hash(3)).hex()]}
    with pytest.raises(ProofError, match="does not lead to the root"):
        verify_proof_document(doc)


@pytest.fixture
def store_copy(world: dict[str, Any], tmp_path: Path) -> Path:
    copy = tmp_path / "copy.duckdb"
    shutil.copy(world["path"], copy)
    return copy


def _sql(path: Path, query: str) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute(query)
    finally:
        con.close()


def test_a_game_rewritten_after_it_was_logged_is_refused_everywhere(store_copy: Path) -> None:
    """The operator re-chains g-late in the store (new raw lines and hashes): its leaf no
    longer matches. dispute refuses (exit 1, the game named), and so does checkpoint."""
    with EventStore.open(store_copy) as store:
        rows = store.con.execute("SELECT raw FROM store.events WHERE game_id = 'g-late' "
                                 "ORDER BY seq").fetchall()
        events = rechain(_swap_discard([orjson.loads(r[0]) for r in rows]))
        for e in events:
            store.con.execute("UPDATE store.events SET raw = ?, hash = ?, prev_hash = ? "
                              "WHERE game_id = 'g-late' AND seq = ?",
                              [orjson.dumps(e).decode(), e["hash"], e["prev_hash"], e["seq"]])
        with pytest.raises(TamperError, match="g-late"):
            build_bundle(store, "g-late")
        with pytest.raises(TamperError):
            make_checkpoint(store.con, now=T2)
    out = cli("dispute", "g-late", "--bundle", str(store_copy.parent / "x.zip"),
              "--db", str(store_copy))
    assert out.exit_code == 1 and "g-late" in out.output
    assert not (store_copy.parent / "x.zip").exists()


def test_a_rewritten_checkpoint_table_is_refused(store_copy: Path) -> None:
    _sql(store_copy, "UPDATE store.checkpoints SET root_hash = repeat('ab', 32) WHERE n = 1")
    with EventStore.open(store_copy) as store, pytest.raises(TamperError, match="checkpoint 1"):
        make_checkpoint(store.con, now=T2)


@pytest.mark.parametrize(("game_id", "words"), [
    ("g-after", "in no checkpoint yet"),
    ("g-running", "has not finished"),
    ("g-nope", "not found"),
    ("g-late --checkpoint 1", "added after checkpoint 1"),
])
def test_dispute_refuses_with_one_line(world: dict[str, Any], tmp_path: Path, game_id: str,
                                       words: str) -> None:
    out = cli("dispute", *game_id.split(), "-o", str(tmp_path / "b.zip"), "--db",
              str(world["path"]))
    assert out.exit_code == 2, out.output
    assert words in out.output and len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "b.zip").exists()


# --- the archive: zip tricks ---------------------------------------------------------------------
def _with_extra(data: bytes, *extra: tuple[str, bytes]) -> bytes:
    members = members_of(data)
    return zip_of([*members.items(), *extra])


def _claim_size(data: bytes, name: bytes, size: int) -> bytes:
    """Patch the central directory's uncompressed size of ``name`` (a zip bomb's claim)."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        length = struct.unpack_from("<H", out, at + 28)[0]
        if bytes(out[at + 46: at + 46 + length]) == name:
            struct.pack_into("<I", out, at + 24, size)
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


@pytest.mark.filterwarnings("ignore::UserWarning")  # zipfile warns about the duplicate name
@pytest.mark.parametrize(("extra", "words"), [
    (("../events.jsonl", b"x"), "unexpected members ['../events.jsonl']"),
    (("/etc/passwd", b"x"), "unexpected members ['/etc/passwd']"),
    (("sub/README.txt", b"x"), "unexpected members"),
    (("events.jsonl", b""), "duplicate members ['events.jsonl']"),
    (("report.json", b"{}"), "duplicate members ['report.json']"),
])
def test_foreign_and_duplicate_members_fail_archive(world: dict[str, Any],
                                                    extra: tuple[str, bytes], words: str) -> None:
    result = check_bundle(_with_extra(world["bundles"]["g-prod"], extra), trusted(world["cp2"]))
    assert words in failed(result)["archive"]
    assert result.exit_code == 1


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_duplicated_manifest_makes_the_input_unusable(world: dict[str, Any]) -> None:
    data = _with_extra(world["bundles"]["g-prod"], ("manifest.json", b"{}"))
    result = check_bundle(data)
    assert not result.usable and result.exit_code == 2


@pytest.mark.parametrize("data", [
    pytest.param(b"", id="empty-file"),
    pytest.param(b"PK\x05\x06" + b"\x00" * 18, id="empty-zip"),
    pytest.param(b"not a zip", id="text"),
    pytest.param(zip_of([("README.txt", b"hi")]), id="zip-without-manifest"),
    pytest.param(zip_of([("manifest.json", b"{not json")]), id="manifest-not-json"),
])
def test_unusable_input_exits_2_with_one_line(tmp_path: Path, data: bytes) -> None:
    file = tmp_path / "x.zip"
    file.write_bytes(data)
    out = cli("check-bundle", str(file))
    assert out.exit_code == 2
    assert len(out.output.strip().splitlines()) == 1 and "not a usable dispute bundle" in out.output
    as_json = cli("check-bundle", str(file), "--json")
    assert as_json.exit_code == 2
    assert orjson.loads(as_json.stdout)["usable"] is False


def test_a_zip_bomb_is_refused_by_its_claimed_size(world: dict[str, Any]) -> None:
    bomb = _claim_size(world["bundles"]["g-prod"], b"events.jsonl", 0xFFFFFFF0)
    result = check_bundle(bomb)
    assert not result.usable and "claim more than" in result.checks[0].detail


def test_a_member_larger_than_it_claims_is_damage_not_content(world: dict[str, Any]) -> None:
    """A member that inflates past its declared size is cut at the size, and the CRC of
    the cut data fails: the declared size bounds what is ever read."""
    members = members_of(world["bundles"]["g-prod"])
    small = _claim_size(world["bundles"]["g-prod"], b"events.jsonl",
                        len(members["events.jsonl"]) // 2)
    result = check_bundle(small)
    assert "events.jsonl is damaged" in failed(result)["archive"]


def test_an_edited_manifest_hash_and_a_missing_member_fail_manifest(world: dict[str, Any]) -> None:
    def edit(members: Members) -> None:
        manifest = orjson.loads(members["manifest.json"])
        manifest["members"]["proof.json"]["sha256"] = "0" * 64
        members["manifest.json"] = orjson.dumps(manifest)

    result = check_bundle(forge(world["bundles"]["g-prod"], edit, sign=False))
    assert "proof.json: SHA-256 or size does not match" in failed(result)["manifest"]
    gone = check_bundle(forge(world["bundles"]["g-prod"], lambda m: m.pop("README.txt")))
    assert "README.txt is missing" in failed(gone)["manifest"]
    no_page = check_bundle(forge(world["bundles"]["g-prod"], lambda m: m.pop("report.html")))
    assert "html.included disagrees" in failed(no_page)["manifest"]


# --- UX: the CLI -------------------------------------------------------------------------------
def test_check_bundle_names_each_failure_and_json_is_one_document(world: dict[str, Any],
                                                                  tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(forge(world["bundles"]["g-prod"], edit_events(_swap_discard)))
    cp = world["cp2"]
    text = cli("check-bundle", str(bad), "--root", cp.root_hash.upper(), "--size",
               str(cp.tree_size))
    assert text.exit_code == 1
    assert "FAIL  chain" in text.output and "check(s) failed: chain, replay" in text.output
    doc = cli("check-bundle", str(bad), "--json", "--root", cp.root_hash, "--size",
              str(cp.tree_size))
    assert doc.exit_code == 1
    parsed = orjson.loads(doc.stdout)  # the whole stdout is one JSON document
    assert parsed["failed"] == ["chain", "replay"] and parsed["ok"] is False
    good = tmp_path / "good.zip"
    good.write_bytes(world["bundles"]["g-prod"])
    warn = cli("check-bundle", str(good))
    assert warn.exit_code == 0 and "WARN  trusted-checkpoint" in warn.output
    assert "not compared with a trusted one" in warn.output


def test_prove_json_is_the_bundles_proof(world: dict[str, Any]) -> None:
    out = cli("prove", "g-emoji", "--checkpoint", "2", "--json", "--db", str(world["path"]))
    assert out.exit_code == 0, out.output
    assert orjson.loads(out.stdout) == orjson.loads(members_of(world["bundles"]["g-emoji"])["proof.json"])


def test_a_bundle_without_its_page_skips_html_and_still_passes(world: dict[str, Any]) -> None:
    def drop_page(members: Members) -> None:
        members.pop("report.html")
        manifest = orjson.loads(members["manifest.json"])
        manifest["html"] = {"included": False, "reason": "no renderer in this build"}
        members["manifest.json"] = orjson.dumps(manifest)

    result = check_bundle(forge(world["bundles"]["g-michigan"], drop_page), trusted(world["cp2"]))
    html = result.get("html")
    assert html is not None and html.status == "skip"
    assert "no renderer in this build" in html.detail and result.exit_code == 0


# --- defects ------------------------------------------------------------------------------------
def _patch_central(data: bytes, name: bytes, *, flag: int = 0, method: int | None = None
                   ) -> bytes:
    """Set a general-purpose flag bit or the compression method of one member."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        length = struct.unpack_from("<H", out, at + 28)[0]
        if bytes(out[at + 46: at + 46 + length]) == name:
            struct.pack_into("<H", out, at + 8, struct.unpack_from("<H", out, at + 8)[0] | flag)
            if method is not None:
                struct.pack_into("<H", out, at + 10, method)
                local = struct.unpack_from("<I", out, at + 42)[0]
                struct.pack_into("<H", out, local + 8, method)
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


def _corrupt_deflate(data: bytes, name: str) -> bytes:
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    out = bytearray(data)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 10
    for i in range(start, start + 30):
        out[i] ^= 0xFF
    return bytes(out)


UNREADABLE = [
    pytest.param(lambda d: _patch_central(d, b"report.json", flag=1), id="encrypted-flag"),
    pytest.param(lambda d: _patch_central(d, b"events.jsonl", method=99), id="aes-method-99"),
    pytest.param(lambda d: _corrupt_deflate(d, "events.jsonl"), id="corrupt-deflate"),
]


@pytest.mark.parametrize("damage", UNREADABLE)
def test_an_unreadable_member_fails_archive_instead_of_crashing(
        world: dict[str, Any], tmp_path: Path, damage: Callable[[bytes], bytes]) -> None:
    data = damage(world["bundles"]["g-prod"])
    result = check_bundle(data)  # raises RuntimeError / NotImplementedError / zlib.error
    assert "archive" in failed(result) and result.exit_code == 1
    file = tmp_path / "x.zip"
    file.write_bytes(data)
    out = cli("check-bundle", str(file))
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert out.exit_code == 1 and "FAIL  archive" in out.output


def _duplicate_key_report(members: Members) -> None:
    """report.json whose first ``record`` (what a person reads) is clean and whose
    second (what a JSON parser keeps) is the real one with its findings."""
    real = members["report.json"]
    members["report.json"] = (b'{"record": {"clean": true, "findings": [], "halted": false},\n'
                              + real.lstrip()[1:])


def _integers_for_booleans(members: Members) -> None:
    members["report.json"] = members["report.json"].replace(b'"clean": false', b'"clean": 0')


@pytest.mark.parametrize("edit", [
    pytest.param(_duplicate_key_report, id="duplicate-record-key"),
    pytest.param(_integers_for_booleans, id="clean-as-0"),
])
def test_report_json_must_be_exactly_the_replay(world: dict[str, Any],
                                                edit: Callable[[Members], None]) -> None:
    data = world["bundles"]["g-halt"]
    forged = forge(data, edit)
    assert members_of(forged)["report.json"] != members_of(data)["report.json"]
    assert "replay" in failed(check_bundle(forged, trusted(world["cp2"])))


MANIFEST_LIES = [
    pytest.param(lambda m: m.update(leaf_index=m["leaf_index"] + 3), id="leaf-index"),
    pytest.param(lambda m: m["checkpoint"].update(n=9, tree_size=99, root_hash="ab" * 32),
                 id="checkpoint"),
    pytest.param(lambda m: m["events"].update(last_event_hash="cd" * 32), id="last-event-hash"),
    pytest.param(lambda m: m.pop("events"), id="no-events-table"),
]


@pytest.mark.parametrize("lie", MANIFEST_LIES)
def test_a_manifest_that_contradicts_the_proof_fails(world: dict[str, Any],
                                                     lie: Callable[[dict[str, Any]], None]
                                                     ) -> None:
    result = check_bundle(forge(world["bundles"]["g-prod"], edit_json("manifest.json", lie),
                                sign=False), trusted(world["cp2"]))
    assert result.failed, result.to_dict()  # today: every check passes, exit 0


def _edit_game_ended(events: list[Event]) -> list[Event]:
    """The payout rewritten in the GameEnded line, its declared hash left as it was."""
    net = events[-1]["payload"]["net"]
    a, b = sorted(net)
    net[a], net[b] = net[b], net[a]
    return events


def test_inclusion_is_about_the_recomputed_last_hash(world: dict[str, Any]) -> None:
    result = check_bundle(forge(world["bundles"]["g-prod"], edit_events(_edit_game_ended)),
                          trusted(world["cp2"]))
    assert "hash does not match the event's content" in failed(result)["chain"]
    assert "inclusion" in failed(result), result.to_dict()  # today: PASS, "leads to root"


def _run_hand_script(data: bytes, tmp_path: Path, *flags: str
                     ) -> subprocess.CompletedProcess[str]:
    readme = members_of(data)["README.txt"].decode()
    script = tmp_path / "check.py"
    script.write_text(readme.split("check.py\n--------\n", 1)[1], encoding="utf-8")
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(data)
    return subprocess.run([sys.executable, "-I", *flags, str(script), str(bundle)],
                          capture_output=True, text=True, timeout=60)


def _trojan_readme(members: Members) -> None:
    """The forger's README: same text, a check script that always says OK."""
    readme = members["README.txt"].decode()
    head = readme.split("check.py\n--------\n", 1)[0]
    members["README.txt"] = (head + "check.py\n--------\nimport sys\n"
                             "print('OK: game', sys.argv[1], 'is in the published tree')\n"
                             ).encode()


def test_a_replaced_readme_check_script_fails(world: dict[str, Any], tmp_path: Path) -> None:
    def trojan_and_payout(members: Members) -> None:
        _trojan_readme(members)
        edit_events(_edit_game_ended)(members)

    forged = forge(world["bundles"]["g-prod"], trojan_and_payout)
    assert "OK: game" in _run_hand_script(forged, tmp_path).stdout  # the trojan says OK
    only_readme = forge(world["bundles"]["g-prod"], _trojan_readme)
    result = check_bundle(only_readme, trusted(world["cp2"]))
    assert result.failed, result.to_dict()  # today: every check passes


def test_hand_script_refuses_a_forgery_under_python_O(world: dict[str, Any], tmp_path: Path
                                                      ) -> None:
    forged = forge(world["bundles"]["g-prod"], edit_events(lambda es: rechain(_swap_discard(es))))
    assert _run_hand_script(forged, tmp_path).returncode != 0  # plain python: refused
    optimized = _run_hand_script(forged, tmp_path, "-O")
    assert optimized.returncode != 0, optimized.stdout  # today: "OK: game g-prod is leaf ..."


def _rename_game(members: Members) -> None:
    for name in ("proof.json", "manifest.json"):
        doc = orjson.loads(members[name])
        doc["game_id"] = "g-disputed"
        members[name] = orjson.dumps(doc)


def test_hand_script_holds_for_a_plain_genuine_bundle(world: dict[str, Any], tmp_path: Path
                                                      ) -> None:
    done = _run_hand_script(world["bundles"]["g-ingest"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert world["cp2"].root_hash in done.stdout


def test_hand_script_refuses_events_of_another_game(world: dict[str, Any], tmp_path: Path
                                                    ) -> None:
    forged = forge(world["bundles"]["g-prod"], _rename_game)
    assert "chain" in failed(check_bundle(forged))  # check-bundle catches it
    done = _run_hand_script(forged, tmp_path)
    assert done.returncode != 0, done.stdout  # today: "OK: game g-disputed is leaf 0 ..."


@pytest.mark.parametrize("game_id", ["g-ls", "g-emoji"])
def test_hand_script_passes_every_genuine_bundle(world: dict[str, Any], tmp_path: Path,
                                                 game_id: str) -> None:
    data = world["bundles"][game_id]
    assert check_bundle(data, trusted(world["cp2"])).exit_code == 0
    done = _run_hand_script(data, tmp_path)
    # today g-ls: JSONDecodeError; g-emoji: "the proof is about other events" (an
    # accusation of forgery against a genuine bundle)
    assert done.returncode == 0, done.stderr
