"""Dispute bundles: one zip with everything a third party needs to check a game offline.

A regulator or a player's representative cannot query our database, and should not
have to trust it. A bundle gives them, for one game:

``events.jsonl``
    The game's events, byte for byte the lines the platform sent (the store's ``raw``
    column), in ``seq`` order, each ending in ``\\n``: the hash chain is re-checked
    over exactly what was received, not over our re-encoding of it.
``report.json``
    The replay's verdict (the ``verify --json`` record of the game: findings and
    results) and the move-by-move timeline.
``report.html``
    The replay page, when :func:`rummyguard.replay.html.render_html` works in this
    build; otherwise left out, and ``manifest.json`` says why.
``checkpoint.json`` / ``proof.json``
    The Merkle checkpoint the game is in (number, size, root, time) and the inclusion
    proof document of :mod:`rummyguard.events.checkpoint`.
``quarantine.json`` (only for a game with quarantined lines)
    The game's lines that ingest read but did not store (quarantined: a tampered line,
    a second event at a taken seq, a line that is not a valid event...), each with its
    raw bytes, SHA-256, reason and where ingest read it. They are in neither the hash
    chain nor the Merkle tree, so nothing in the bundle proves them: they are labelled
    unproven (``"proven": false``), and the ``quarantine`` check says so. They are there
    because ``report.json`` replays them where ingest read them, as ``rummyguard replay
    GAME --db`` and ``verify --db`` do, so the bundle says what the support agent saw.
``README.txt``
    How to check all of it by hand, with a standard-library-only Python script.
``manifest.json``
    SHA-256 and size of every other member, the tool version, the game, the chain mode.

The chain of evidence is: events -> (hash chain) -> last event hash -> (inclusion
proof) -> checkpoint root -> the root the operator *published*. A bundle's own
checkpoint is only as good as that last comparison, which :func:`check_bundle` makes
when given a trusted checkpoint and flags loudly when not. ``report.json`` is not
evidence but a claim about the evidence, so it is re-derived by replaying the events.

Bundles are deterministic: the same store state gives a byte-identical zip (members
sorted, fixed timestamps taken from the checkpoint, fixed attributes and compression),
so two parties can compare bundles by their hash.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import lzma
import struct
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import orjson

from .. import __version__
from ..events.checkpoint import (
    PROOF_FORMAT,
    CheckpointError,
    InclusionProof,
    ProofError,
    TamperError,
    inclusion_proof,
    latest_checkpoint,
    verify_proof_document,
)
from ..events.hashing import chain, event_hash, verify_chain
from ..events.ingest import parse_line
from ..events.models import EventError, IngestLinked
from ..events.store import EventStore
from ..events.upcast import upcast
from .engine import replay
from .timeline import timeline
from .verify import BadLine, VerifyRun, merge_store_lines, read_store_bad_lines, verify_games

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "CHECK_NAMES",
    "BundleCheck",
    "BundleError",
    "Check",
    "ParsedEvents",
    "build_bundle",
    "check_bundle",
    "parse_events_jsonl",
    "read_manifest",
    "replay_report",
]

BUNDLE_FORMAT = "rummyguard.dispute-bundle"
BUNDLE_VERSION = 1
REPORT_FORMAT = "rummyguard.replay-report"
REPORT_VERSION = 1
TOOL = "rummyguard"

EVENTS = "events.jsonl"
REPORT = "report.json"
HTML = "report.html"
CHECKPOINT = "checkpoint.json"
PROOF = "proof.json"
README = "README.txt"
MANIFEST = "manifest.json"
QUARANTINE = "quarantine.json"
QUARANTINE_FORMAT = "rummyguard.quarantined-lines"
QUARANTINE_VERSION = 1
REQUIRED = (CHECKPOINT, EVENTS, PROOF, README, REPORT)
KNOWN = frozenset((*REQUIRED, HTML, MANIFEST, QUARANTINE))
UNPROVEN = (
    "NOT EVIDENCE: lines of this game that ingest read but did not store (quarantined). "
    "They are in neither events.jsonl's hash chain nor the Merkle tree, so nothing in this "
    "bundle proves them: they are the operator's copy of what it received, byte for byte "
    "(raw_base64, raw_sha256). report.json replays them where ingest read them, as "
    "`rummyguard replay GAME --db` does."
)

MAX_UNCOMPRESSED = 1 << 30
"""A bundle is one game; refuse archives that claim more than 1 GiB (a zip bomb)."""

CHECK_NAMES = ("archive", "manifest", "chain", "inclusion", "trusted-checkpoint", "quarantine",
               "replay", "html")
"""Every check :func:`check_bundle` reports, in order."""

_JSON_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2


class BundleError(Exception):
    """A bundle that cannot be built (unknown or unfinished game, no checkpoint, ...)."""


def _json(value: Any) -> bytes:
    """The one JSON encoding of every bundle member: sorted keys, indented, final newline."""
    return orjson.dumps(value, option=_JSON_OPTS) + b"\n"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- events -----------------------------------------------------------------------------
@dataclass(slots=True)
class ParsedEvents:
    """``events.jsonl`` read back: the events as the replay wants them, and any problem.

    ``events`` are what :meth:`EventStore.load_game` returns for the same lines (upcast,
    ``prev_hash``/``hash`` set); ``chained_by`` is ``producer`` (every line carries both
    hash fields), ``ingest`` (none does: the chain is recomputed here exactly as the
    store computed it at ingest) or ``mixed``; ``last_hash`` is what the inclusion proof
    must be about. ``readable`` is False when a line is not a valid event at all.
    """

    events: list[dict[str, Any]] = field(default_factory=list)
    chained_by: str = "ingest"
    problems: list[str] = field(default_factory=list)
    last_hash: str | None = None
    readable: bool = True


def parse_events_jsonl(data: bytes, game_id: str | None = None) -> ParsedEvents:
    """Validate ``events.jsonl`` and walk its hash chain (EVENTS.md "The envelope").

    Used both to build a bundle (from the store's raw lines) and to check one, so the
    replay on either side sees identical events.
    """
    out = ParsedEvents()
    if not data:
        out.problems.append("events.jsonl is empty")
        out.readable = False
        return out
    if not data.endswith(b"\n"):
        out.problems.append("events.jsonl does not end with a newline (truncated?)")
    written: list[dict[str, Any]] = []
    for line_no, line in enumerate(data.removesuffix(b"\n").split(b"\n"), start=1):
        try:
            written.append(parse_line(line))
        except EventError as exc:
            out.problems.append(f"line {line_no} is not a valid event: {exc.reason}: {exc.detail}")
            out.readable = False
    if not out.readable:
        return out
    for event in written:
        if game_id is not None and event["game_id"] != game_id:
            out.problems.append(
                f"seq {event['seq']} belongs to game {event['game_id']!r}, not {game_id!r}"
            )
    with_hashes = sum(1 for e in written if "hash" in e and "prev_hash" in e)
    if with_hashes == len(written):
        out.chained_by, linked = "producer", written
    elif with_hashes == 0 and not any("hash" in e or "prev_hash" in e for e in written):
        # The store chained these at ingest: hash = sha256(JCS(event + prev_hash)).
        out.chained_by, linked = "ingest", chain(written)
    else:
        out.chained_by, linked = "mixed", written
        out.problems.append("some events carry hash fields and some do not")
    out.problems.extend(f"seq {seq}: {problem}" for seq, problem in verify_chain(linked))
    # What the inclusion proof must be about: the last event's hash recomputed from its
    # content (docs/disputes.md), never the hash field the line merely declares.
    out.last_hash = event_hash(linked[-1])
    out.events = [upcast(e) for e in linked]
    if out.chained_by == "ingest":  # the store's links, checked apart from the producer's
        out.events = [IngestLinked(e) for e in out.events]
    return out


# --- the report ---------------------------------------------------------------------------
def quarantine_bad_lines(lines: list[Mapping[str, Any]]) -> list[BadLine]:
    """The lines of ``quarantine.json`` as the store's reader gives them
    (:func:`~rummyguard.replay.verify.read_store_bad_lines`): a line that names its game
    and seq comes with its object (the raw text parsed), so the replay places it. New
    objects each call: :func:`~rummyguard.replay.verify.merge_store_lines` places them."""
    out: list[BadLine] = []
    for q in lines:
        seq, game = q["seq"], q["game_id"]
        obj = None
        if seq is not None and seq >= 0:
            try:
                parsed = orjson.loads(q["raw"])
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict) and parsed.get("game_id") == game \
                    and parsed.get("seq") == seq:
                obj = parsed
        out.append(BadLine(q["source"], q["line_no"], q["message"], game, seq, obj, q["reason"],
                           quarantined=True, event=obj is not None and q["event"] is True,
                           head=q["head"], chained_by=q["chained_by"],
                           raw_sha256=q["raw_sha256"]))
    return out


def _folded(events: list[dict[str, Any]], quarantined: list[Mapping[str, Any]]
            ) -> tuple[list[dict[str, Any]], list[BadLine], dict[int, BadLine]]:
    """The events with the quarantined lines folded in where ingest read them, the lines
    that stay bad lines, and the quarantined line behind each event taken from it."""
    return merge_store_lines(events, quarantine_bad_lines(quarantined))


def replay_report(events: list[dict[str, Any]],
                  quarantined: list[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """``report.json``: the game's verify record (findings, results) and its timeline.

    Only what one game's events determine: cross-game findings of ``rummyguard verify``
    (CL-NEXT, which needs the table's other games) are not part of it. ``quarantined``:
    the game's lines of ``quarantine.json``, folded in where ingest read them, so the
    record and the timeline are those of ``rummyguard replay GAME --db --json`` (rows of
    lines the store did not store marked ``"quarantined": reason``).
    """
    if not quarantined:
        record = replay(events)
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "record": record.to_dict(),
            "timeline": timeline(events, record),
        }
    # the timeline's finishing touches are replay --json's own, so the two cannot drift
    from .timeline import finish_timeline, in_place

    merged, bad, kept_back = _folded(events, quarantined)
    game_id = events[0]["game_id"]
    run = verify_games([merged], VerifyRun(bad_lines=list(bad)), keep_state=True)
    record = next(r for r in run.records if r.game_id == game_id)
    lines: dict[int, dict[str, Any]] = {}
    for b in bad:
        if isinstance(b.obj, dict) and b.seq is not None:
            lines.setdefault(b.seq, b.obj)
    rows = timeline(merged, record)
    finish_timeline(rows, len(merged), lines, kept_back, bad, None)
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "record": record.to_dict(),
        "timeline": in_place(rows),
    }


def _render_html(events: list[dict[str, Any]], quarantined: list[Mapping[str, Any]] | None = None
                 ) -> tuple[bytes | None, str | None]:
    """The replay page, or why there is none.

    The page is a convenience for people, not evidence (it is derived from the events
    like report.json), so a renderer that is missing or fails leaves it out of the
    bundle, with the reason recorded, rather than blocking the evidence.
    """
    try:
        from .html import render_html
    except ImportError as exc:
        return None, f"the HTML replay page is not available in this build ({exc})"
    try:
        if quarantined:  # as `replay GAME --db --html` draws it
            merged, bad, kept_back = _folded(events, quarantined)
            page = render_html(merged, bad=bad, kept_back={i: b.code for i, b in kept_back.items()})
        else:
            page = render_html(events)
    except Exception as exc:
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        return None, f"the HTML replay page could not be rendered in this build ({detail})"
    return page.encode("utf-8"), None


# --- building -----------------------------------------------------------------------------
def _raw_lines(store: EventStore, game_id: str) -> tuple[list[tuple[int, str, str]], str]:
    # The game from deal to payout: up to its (first) GameEnded, the event its Merkle
    # leaf is; events logged after it (a late PlayerLeft) are not part of the dispute.
    rows = store.con.execute(
        "SELECT seq, raw, hash FROM store.events WHERE game_id = $g AND seq <= coalesce("
        "(SELECT min(seq) FROM store.events WHERE game_id = $g AND type = 'GameEnded'), "
        "2147483647) ORDER BY seq", {"g": game_id}
    ).fetchall()
    head = store.con.execute(
        "SELECT chained_by FROM store.games_chain WHERE game_id = ?", [game_id]
    ).fetchone()
    if not rows or head is None:
        raise BundleError(f"game {game_id!r} not found in the store")
    return [(int(s), r, h) for s, r, h in rows], str(head[0])


def _quarantined(store: EventStore, game_id: str, ended_seq: int | None) -> list[dict[str, Any]]:
    """The game's quarantined lines as ``quarantine.json`` holds them: those the store's
    replay folds in (:func:`~rummyguard.replay.verify.read_store_bad_lines`, in ingest's
    read order), up to the game's end. Like a stored event logged after the GameEnded, a
    line ingest read after it is not part of the dispute (``ended_seq``: the GameEnded's
    seq; None: all of them)."""
    from .verify import _store_place

    run = VerifyRun()
    read_store_bad_lines(store.con, run, game_id, load_games=False)
    raw_of = {
        (src, int(no), sha): (bytes(data), text) for src, no, sha, data, text in store.con.execute(
            "SELECT source, line_no, raw_sha256, raw_bytes, raw FROM store.quarantine "
            "WHERE game_id = ?", [game_id]).fetchall()
    }
    out: list[dict[str, Any]] = []
    for b in run.bad_lines:
        if b.game_id != game_id or (ended_seq is not None and _store_place(b) > ended_seq):
            continue
        data, text = raw_of[(b.source, b.line_no, b.raw_sha256)]
        out.append({
            "source": b.source, "line_no": b.line_no, "reason": b.code, "message": b.reason,
            "game_id": game_id, "seq": b.seq, "head": b.head, "chained_by": b.chained_by,
            "event": b.event, "raw": text, "raw_base64": base64.b64encode(data).decode("ascii"),
            "raw_sha256": b.raw_sha256,
        })
    return out


def _quarantine_document(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": QUARANTINE_FORMAT, "version": QUARANTINE_VERSION, "proven": False,
            "note": UNPROVEN, "lines": lines}


def _prove(store: EventStore, game_id: str, checkpoint: int | None, last_type: str,
           last_seq: int) -> InclusionProof:
    con = store.con
    if last_type != "GameEnded":
        raise BundleError(
            f"game {game_id} has not finished (its last event, seq {last_seq}, is {last_type}); "
            "only finished games are checkpointed"
        )
    if latest_checkpoint(con) is None:
        raise BundleError("there is no checkpoint yet: run `rummyguard checkpoint` first")
    leaf = con.execute(
        "SELECT leaf_index FROM store.merkle_leaves WHERE game_id = ?", [game_id]
    ).fetchone()
    if leaf is None:
        raise BundleError(
            f"game {game_id} is in no checkpoint yet: run `rummyguard checkpoint` first"
        )
    try:
        return inclusion_proof(con, game_id, checkpoint)
    except TamperError:
        raise
    except (CheckpointError, ProofError) as exc:
        raise BundleError(str(exc)) from None


def build_bundle(store: EventStore, game_id: str, checkpoint: int | None = None) -> bytes:
    """The dispute bundle of ``game_id`` against checkpoint ``checkpoint`` (default latest).

    Refuses (:class:`BundleError`) a game that is unknown, unfinished or not yet in a
    checkpoint; refuses (:class:`~rummyguard.events.checkpoint.TamperError`) when the
    stored raw lines no longer give the stored hashes or the checkpointed leaf. The
    finished bundle is checked with :func:`check_bundle` before it is returned, so a
    bundle that would not verify is never handed out.
    """
    rows, chained_by = _raw_lines(store, game_id)
    events_bytes = b"".join(raw.encode("utf-8") + b"\n" for _, raw, _ in rows)
    parsed = parse_events_jsonl(events_bytes, game_id)
    if not parsed.readable:
        raise TamperError([f"game {game_id}: {p}" for p in parsed.problems])
    recomputed = [e["hash"] for e in parsed.events]
    stored = [h for _, _, h in rows]
    differ = [seq for (seq, _, _), a, b in zip(rows, recomputed, stored, strict=True) if a != b]
    problems = list(parsed.problems)
    if differ:
        problems.append(f"stored hashes differ from the raw lines at seq {differ[:5]}")
    if parsed.chained_by != chained_by:
        problems.append(f"the store says chained by {chained_by}, the lines say {parsed.chained_by}")
    if problems:
        raise TamperError([f"game {game_id}: {p}" for p in problems])

    last = parsed.events[-1]
    if last["type"] != "GameEnded":
        kept = _quarantined(store, game_id, None)
        if kept:
            # not "not finished": the replay of the store (replay/verify --db) does reach
            # the end, through lines ingest quarantined; the store's game stops before them
            first = kept[0]
            raise BundleError(
                f"game {game_id} cannot be bundled: its stored events end at seq {last['seq']} "
                f"({last['type']}) because ingest quarantined {len(kept)} line(s) of it (first: "
                f"seq {first['seq']}, {first['message']}); a game is checkpointed, and so "
                "provable, only once its stored events reach GameEnded. `rummyguard replay "
                f"{game_id} --db` shows the whole game with those lines"
            )
    proof = _prove(store, game_id, checkpoint, last["type"], last["seq"])
    cp = proof.checkpoint.to_document()
    quarantined = _quarantined(store, game_id, last["seq"])
    members: dict[str, bytes] = {
        EVENTS: events_bytes,
        REPORT: _json(replay_report(parsed.events, quarantined)),
        CHECKPOINT: _json(cp),
        PROOF: _json(proof.to_document()),
    }
    if quarantined:
        members[QUARANTINE] = _json(_quarantine_document(quarantined))
    page, why_not = _render_html(parsed.events, quarantined)
    if page is not None:
        members[HTML] = page
    members[README] = _readme(game_id, proof, len(rows), page is not None,
                              len(quarantined)).encode("utf-8")
    manifest = {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "tool": {"name": TOOL, "version": __version__},
        "game_id": game_id,
        "events": {
            "count": len(rows),
            "chained_by": chained_by,
            "last_event_hash": proof.last_event_hash,
        },
        "checkpoint": cp,
        "leaf_index": proof.leaf_index,
        "html": {"included": page is not None, "reason": why_not},
        **({"quarantine": {"count": len(quarantined), "proven": False, "member": QUARANTINE}}
           if quarantined else {}),
        "members": {
            name: {"sha256": _sha256(data), "bytes": len(data)} for name, data in sorted(members.items())
        },
    }
    members[MANIFEST] = _json(manifest)
    data = _zip(members, _zip_time(proof.checkpoint.created_at))
    self_check = check_bundle(data)
    failed = [c for c in self_check.checks if c.status == "fail"]
    if failed:
        raise TamperError([f"the built bundle does not verify: {c.name}: {c.detail}" for c in failed])
    return data


def _zip_time(created_at: str) -> tuple[int, int, int, int, int, int]:
    """Every member's timestamp: the checkpoint's time (UTC), fixed by the store state."""
    t = datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%S.%fZ")
    return (t.year, t.month, t.day, t.hour, t.minute, t.second)


def _zip(members: Mapping[str, bytes], when: tuple[int, int, int, int, int, int]) -> bytes:
    """A byte-stable zip: sorted names, fixed time, attributes, OS and compression level."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=when)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever OS builds it
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            archive.writestr(info, members[name], compresslevel=9)
    return buffer.getvalue()


# --- README ---------------------------------------------------------------------------------
_HAND_CHECK = '''\
import hashlib, json, sys, zipfile

def check(ok, message):  # not assert: `python3 -O` would skip every check
    if not ok:
        sys.exit("FAILED: " + message)

def jcs(value):  # RFC 8785 for integer-only JSON: keys in UTF-16 code unit order
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: item[0].encode("utf-16-be"))
        return b"{" + b",".join(jcs(k) + b":" + jcs(v) for k, v in items) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(jcs(v) for v in value) + b"]"
    return json.dumps(value, ensure_ascii=False).encode()

z = zipfile.ZipFile(sys.argv[1])
manifest = json.loads(z.read("manifest.json"))
game = manifest["game_id"]
for name, want in manifest["members"].items():
    check(hashlib.sha256(z.read(name)).hexdigest() == want["sha256"], "manifest: " + name)
prev = "0" * 64
for line in z.read("events.jsonl").decode().split("\\n")[:-1]:  # not splitlines(): U+2028
    event = json.loads(line)
    check(event["game_id"] == game, "seq %d is not an event of game %s" % (event["seq"], game))
    if "hash" in event:  # chained by the producer
        check(event["prev_hash"] == prev, "chain broken at seq %d" % event["seq"])
        body = {k: v for k, v in event.items() if k != "hash"}
        check(hashlib.sha256(jcs(body)).hexdigest() == event["hash"], "edited seq %d" % event["seq"])
        prev = event["hash"]
    else:  # chained by the store at ingest: hash = sha256(JCS(event + prev_hash))
        prev = hashlib.sha256(jcs(dict(event, prev_hash=prev))).hexdigest()
proof = json.loads(z.read("proof.json"))
check(proof["game_id"] == game, "the proof is for another game")
check(proof["last_event_hash"] == prev, "the proof is about other events")
index, size = proof["leaf_index"], proof["checkpoint"]["tree_size"]
check(0 <= index < size, "leaf index outside the tree")
r = hashlib.sha256(b"\\x00" + bytes.fromhex(prev)).digest()  # the leaf hash
fn, sn = index, size - 1  # RFC 9162 section 2.1.3.2
for sibling in map(bytes.fromhex, proof["inclusion_path"]):
    check(sn > 0, "inclusion path too long")
    if fn & 1 or fn == sn:
        r = hashlib.sha256(b"\\x01" + sibling + r).digest()
        while not fn & 1 and fn:
            fn, sn = fn >> 1, sn >> 1
    else:
        r = hashlib.sha256(b"\\x01" + r + sibling).digest()
    fn, sn = fn >> 1, sn >> 1
check(sn == 0, "inclusion path too short")
check(r.hex() == proof["checkpoint"]["root_hash"], "the path does not lead to the root")
print("OK: game", proof["game_id"], "is leaf", index, "of the tree of size", size,
      "with root", r.hex(), "- now compare size and root with the published checkpoint")
'''


def _readme(game_id: str, proof: InclusionProof, count: int, has_html: bool,
            quarantined: int = 0) -> str:
    cp = proof.checkpoint
    quarantine_line = (
        f"quarantine.json  {quarantined} line(s) of this game ingest read but did not store\n"
        "                 (quarantined), raw bytes and reason: NOT proven by anything here\n"
        "                 (not in the hash chain nor the Merkle tree); report.json replays\n"
        "                 them where ingest read them\n"
        if quarantined else ""
    )
    html_line = (
        "report.html      the same replay as a page to step through in a browser (offline)\n"
        if has_html
        else "(report.html      not included: manifest.json field html.reason says why)\n"
    )
    return f"""\
Dispute bundle for game {game_id}
{"=" * (23 + len(game_id))}

Made by {TOOL} {__version__}. Everything here can be checked without the operator's
database and without trusting the operator, except for one thing you must get
elsewhere: the checkpoint the operator PUBLISHED (see step 4).

Contents
--------
events.jsonl     the game's {count} events, byte for byte as the platform sent them
report.json      the replay's verdict: findings by rule, results, and a timeline
{html_line}checkpoint.json  Merkle checkpoint {cp.n}: {cp.tree_size} games, root {cp.root_hash},
                 made {cp.created_at}
proof.json       the inclusion proof: this game is leaf {proof.leaf_index} of that checkpoint
{quarantine_line}manifest.json    the SHA-256 of every other file, the tool version, the game id

How to check it
---------------
With rummyguard installed (it also replays the game and compares report.json):

    rummyguard check-bundle THIS.zip --root <published root hex> --size <published size>

By hand, with Python 3 and nothing else (steps 1 to 3; save the script below as
check.py and run `python3 check.py THIS.zip`):

1. Integrity of the files: the SHA-256 of each file equals manifest.json "members".
2. The hash chain (spec EVENTS.md): each event's "hash" is the SHA-256 of its JSON
   Canonicalization Scheme form (RFC 8785: sorted keys, no spaces, UTF-8) without the
   "hash" key, and its "prev_hash" is the previous event's "hash" (64 zeros for the
   first). Events sent without hash fields were chained by the store on arrival the
   same way, with "prev_hash" added before hashing. Any edited, dropped or reordered
   event breaks the chain or changes the last hash.
3. Inclusion (RFC 9162 section 2.1.3.2, SHA-256): the leaf is SHA-256(0x00 || the 32
   bytes of the last event's hash); walking "inclusion_path" with interior nodes
   SHA-256(0x01 || left || right) must give the checkpoint's root at its tree size.
4. Trust: compare the checkpoint's tree size and root with the checkpoint the operator
   published (or sent you) before the dispute. A bundle's own checkpoint proves
   nothing by itself: only a root you obtained independently binds the operator. If
   you hold another checkpoint, ask for a bundle made against yours
   (`rummyguard dispute {game_id} --bundle FILE.zip --checkpoint N`).
5. The verdict: report.json is a claim about the events, not evidence. Re-derive it by
   replaying the events under the published rules (check-bundle does this).

check.py
--------
{_HAND_CHECK}"""


def read_manifest(data: bytes) -> dict[str, Any]:
    """The manifest of a bundle this module built (for summaries; no checking)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest: dict[str, Any] = orjson.loads(archive.read(MANIFEST))
    return manifest


# --- checking -----------------------------------------------------------------------------
Status = Literal["pass", "fail", "warn", "skip"]


@dataclass(frozen=True, slots=True)
class Check:
    """One named check's outcome; ``warn`` and ``skip`` do not fail the bundle."""

    name: str
    status: Status
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass(slots=True)
class BundleCheck:
    """Everything :func:`check_bundle` found. ``usable`` is False for input that is not a
    bundle at all (not a zip, no readable manifest): exit code 2, not 1."""

    checks: list[Check] = field(default_factory=list)
    usable: bool = True
    game_id: str | None = None
    checkpoint: dict[str, Any] | None = None

    def add(self, name: str, status: Status, detail: str) -> None:
        self.checks.append(Check(name, status, detail))

    def get(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if c.status == "fail"]

    @property
    def ok(self) -> bool:
        return self.usable and not self.failed

    @property
    def exit_code(self) -> int:
        return 2 if not self.usable else 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "usable": self.usable,
            "game_id": self.game_id,
            "checkpoint": self.checkpoint,
            "failed": self.failed,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(frozen=True, slots=True)
class TrustedCheckpoint:
    """A checkpoint obtained independently of the bundle (published by the operator)."""

    tree_size: int
    root_hash: str

    def as_mapping(self) -> dict[str, Any]:
        return {"tree_size": self.tree_size, "root_hash": self.root_hash}


def _load_json(members: Mapping[str, bytes], name: str) -> Any:
    """A member parsed as JSON, or None if it is missing or not JSON."""
    data = members.get(name)
    if data is None:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


# The zip layout ``_zip`` writes (zipfile's own headers, one fixed form): checked field by
# field so that a byte changed anywhere in the file fails the ``archive`` check, not only a
# byte of a member's content (which the manifest's SHA-256s catch). A byte changed in a
# local header or after the archive used to pass every check (audit 52).
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature, version .. name length, extra length
_END_RECORD = struct.Struct("<4s4H2LH")  # signature, disks, entries, cd size, cd offset, comment
_CENTRAL_LENGTHS = struct.Struct("<4s24x3H")  # signature .. name, extra, comment lengths
_CENTRAL_SIZE = 46
_CANONICAL = {"create_version": 20, "extract_version": 20, "create_system": 3, "reserved": 0,
              "flag_bits": 0, "compress_type": zipfile.ZIP_DEFLATED, "volume": 0,
              "internal_attr": 0, "external_attr": 0o100644 << 16, "extra": b"", "comment": b""}


def _dos_time(when: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    """A member's (time, date) as a zip header holds them (2-second resolution)."""
    year, month, day, hour, minute, second = when
    return (hour << 11) | (minute << 5) | (second // 2), ((year - 1980) << 9) | (month << 5) | day


_UNENDED = "does not end where its size says"


def _inflate(raw: bytes) -> bytes | None:
    """A raw deflate stream's content; None unless it ends exactly at its last byte."""
    stream = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        out = stream.decompress(raw)
    except zlib.error:
        return None
    return out if stream.eof and not stream.unused_data else None


def _deflate_problem(raw: bytes) -> str | None:
    """What is wrong with a member's deflate stream: it must end where its size says, and
    the padding bits after its last code (the high bits of its last byte, which zlib
    writes as 0) must be 0. A padding bit is one whose flip leaves the content as it is."""
    content = _inflate(raw)
    if content is None:
        return _UNENDED if raw else None
    for bit in range(7, -1, -1):
        flipped = raw[:-1] + bytes([raw[-1] ^ (1 << bit)])
        if _inflate(flipped) != content:
            return None  # a bit of the last code: the padding is above it
        if raw[-1] >> bit & 1:
            return "has a padding bit set after its last code"
    return None


def _layout_problems(data: bytes, archive: zipfile.ZipFile) -> tuple[list[str], list[str]]:
    """``(damage, departures)``: how ``data`` fails as a zip, and how it departs from the
    layout ``_zip`` writes.

    Damage, whatever tool wrote the zip: a local header that disagrees with its
    central-directory entry (signature, version, flags, method, time, name; CRC and sizes
    unless a data descriptor carries them), a deflate stream that does not end where its
    size says. Departures, which another zip tool also makes when it re-packs the bundle
    (so a warning, not a failure; the members' contents are checked either way): members
    not back to back from byte 0 in name order, attributes other than ours, more than one
    timestamp, extra fields or comments, deflate padding bits that are not 0 (zlib writes
    0), bytes between the members and the directory, or after the end record."""
    infos = archive.infolist()
    damage: list[str] = []
    departures: list[str] = []
    if [i.filename for i in infos] != sorted(i.filename for i in infos):
        departures.append("members out of name order")
    if len({i.date_time for i in infos}) > 1:
        departures.append("members with different timestamps")
    offset = 0
    for info in infos:
        name = info.filename
        odd = sorted(k for k, v in _CANONICAL.items() if getattr(info, k) != v)
        if odd:
            departures.append(f"{name}: central directory fields {odd}")
        if info.header_offset != offset:
            departures.append(f"{name} starts at byte {info.header_offset}, not {offset}")
        at = info.header_offset
        try:
            (sig, version, flags, method, time, date, crc, csize, usize, name_len,
             extra_len) = _LOCAL_HEADER.unpack_from(data, at)
        except struct.error:
            damage.append(f"{name}: its local header is cut short")
            break
        encoded = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
        start = at + _LOCAL_HEADER.size + name_len + extra_len
        local = (sig, version, flags, method, (time, date),
                 data[at + _LOCAL_HEADER.size:at + _LOCAL_HEADER.size + name_len])
        central = (b"PK\x03\x04", info.extract_version, info.flag_bits, info.compress_type,
                   _dos_time(info.date_time), encoded)
        sizes_here = not flags & 0x08  # else a data descriptor after the data holds them
        if local != central or (sizes_here and (crc, csize, usize) != (
                info.CRC, info.compress_size, info.file_size)):
            damage.append(f"{name}: its local header differs from its central-directory entry")
            break
        if extra_len:
            departures.append(f"{name}: a local extra field")
        if method == zipfile.ZIP_DEFLATED:
            problem = _deflate_problem(data[start:start + info.compress_size])
            if problem == _UNENDED:
                damage.append(f"{name}: its compressed data {problem}")
            elif problem:
                departures.append(f"{name}: its compressed data {problem}")
        offset = start + info.compress_size
    else:
        if offset != archive.start_dir:
            departures.append("bytes between the members and the central directory")
        # zipfile cuts a length that runs past the directory short: read them raw
        at = archive.start_dir
        for info in infos:
            try:
                sig, name_len, extra_len, comment_len = _CENTRAL_LENGTHS.unpack_from(data, at)
            except struct.error:
                sig, name_len, extra_len, comment_len = b"", 0, 0, 0
            if (sig, name_len, extra_len, comment_len) != (
                    b"PK\x01\x02", len(info.orig_filename.encode("cp437")), 0, 0):
                departures.append(f"{info.filename}: central-directory lengths (name, extra "
                                  "field, comment)")
                break
            at += _CENTRAL_SIZE + name_len
        end = len(data) - _END_RECORD.size
        record = _END_RECORD.unpack_from(data, end) if end >= 0 else (b"",) * 8
        sig, disk, cd_disk, here, total, cd_size, cd_offset, comment = record
        if (sig, disk, cd_disk, here, total, cd_offset, comment) != (
                b"PK\x05\x06", 0, 0, len(infos), len(infos), archive.start_dir, 0) \
                or cd_offset + cd_size != end or at != end:
            departures.append("the end of the archive (bytes after the end record, a comment, "
                              "or its counts and offsets)")
    return damage, departures


def _open_archive(data: bytes, result: BundleCheck) -> dict[str, bytes] | None:
    """Read every member; record the ``archive`` check. None if the input is unusable."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, NotImplementedError,
            struct.error, EOFError, OSError, OverflowError) as exc:
        # NotImplementedError: a header's "version needed" beyond zipfile's (one changed
        # byte): damage to report, never a crash of the checker
        result.usable = False
        result.add("archive", "fail", f"not a readable zip file ({exc})")
        return None
    with archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        if sum(i.file_size for i in infos) > MAX_UNCOMPRESSED:
            result.usable = False
            result.add("archive", "fail", f"members claim more than {MAX_UNCOMPRESSED} bytes")
            return None
        members: dict[str, bytes] = {}
        problems: list[str] = []
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            problems.append(f"duplicate members {dupes}")
        unknown = sorted(set(names) - KNOWN)
        if unknown:
            problems.append(f"unexpected members {unknown}")
        for info in infos:
            if info.filename not in KNOWN or info.filename in dupes:
                continue
            try:
                members[info.filename] = archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
                    NotImplementedError, zlib.error, lzma.LZMAError) as exc:
                # bad deflate data, an encrypted member, an unknown compression method:
                # damage to report, never a crash of the checker
                problems.append(f"{info.filename} is damaged ({exc})")
        damage, departures = _layout_problems(data, archive)
        problems.extend(damage)
    if MANIFEST not in members:
        result.usable = False
        result.add("archive", "fail", "; ".join([*problems, "no manifest.json: not a dispute bundle"]))
        return None
    if problems:
        result.add("archive", "fail", "; ".join(problems))
    elif departures:
        # re-packed by another zip tool, or changed outside the members' contents: either
        # way the contents are what the checks below judge
        result.add("archive", "warn", f"{len(members)} members, CRCs ok; not the zip layout "
                   f"rummyguard writes ({'; '.join(departures[:3])}"
                   f"{'; ...' if len(departures) > 3 else ''}): re-packed, or changed outside "
                   "the members' contents")
    else:
        result.add("archive", "pass", f"{len(members)} members, CRCs ok, the layout rummyguard "
                   "writes")
    return members


def _check_manifest(members: Mapping[str, bytes], manifest: Mapping[str, Any],
                    result: BundleCheck) -> None:
    listed = manifest.get("members")
    if not isinstance(listed, Mapping):
        result.add("manifest", "fail", "manifest.json has no members table")
        return
    problems = []
    present = set(members) - {MANIFEST}
    foreign = sorted(set(listed) - KNOWN)
    if foreign:
        problems.append(f"lists members a bundle does not have {foreign}")
    for name in sorted((set(listed) | present | set(REQUIRED)) & KNOWN):
        want = listed.get(name)
        if name not in members:
            problems.append(f"{name} is missing")
        elif not isinstance(want, Mapping):
            problems.append(f"{name} is not listed")
        elif want.get("sha256") != _sha256(members[name]) or want.get("bytes") != len(members[name]):
            problems.append(f"{name}: SHA-256 or size does not match")
    readme = members.get(README)
    if readme is not None and readme.split(b"check.py\n--------\n", 1)[-1] != _HAND_CHECK.encode():
        problems.append("README.txt's check script is not the one rummyguard writes"
                        + _version_note(manifest))
    html = manifest.get("html")
    included = isinstance(html, Mapping) and html.get("included") is True
    if included != (HTML in members):
        problems.append("manifest html.included disagrees with the members")
    if ("quarantine" in manifest) != (QUARANTINE in members):
        problems.append("manifest quarantine disagrees with the members")
    if problems:
        result.add("manifest", "fail", "; ".join(problems))
    else:
        result.add("manifest", "pass", f"{len(listed)} member hashes match")


def _check_chain(members: Mapping[str, bytes], manifest: Mapping[str, Any],
                 result: BundleCheck) -> ParsedEvents | None:
    data = members.get(EVENTS)
    if data is None:
        result.add("chain", "fail", "events.jsonl is missing")
        return None
    parsed = parse_events_jsonl(data, result.game_id)
    declared = manifest.get("events")
    if not isinstance(declared, Mapping):
        parsed.problems.append("manifest.json declares no events (count, chain mode)")
    elif parsed.readable:
        if declared.get("chained_by") != parsed.chained_by:
            parsed.problems.append(
                f"manifest says chained by {declared.get('chained_by')}, "
                f"the events are chained by {parsed.chained_by}"
            )
        if declared.get("count") != len(parsed.events):
            parsed.problems.append(
                f"manifest says {declared.get('count')} events, events.jsonl holds "
                f"{len(parsed.events)}"
            )
    if parsed.problems:
        more = f" (+{len(parsed.problems) - 3} more)" if len(parsed.problems) > 3 else ""
        result.add("chain", "fail", "; ".join(parsed.problems[:3]) + more)
    else:
        how = (
            "hashes recomputed as the store chained them at ingest"
            if parsed.chained_by == "ingest"
            else "hashes as chained by the producer"
        )
        last = parsed.events[-1]
        result.add(
            "chain", "pass",
            f"{len(parsed.events)} events, seq 0..{last['seq']}, {how}; "
            f"ends at {last['type']} {parsed.last_hash}",
        )
    return parsed if parsed.readable else None


def _manifest_claims(manifest: Mapping[str, Any], proof: Mapping[str, Any]) -> None:
    """The manifest's checkpoint, leaf index and last event hash are the proof's: a
    person reads them there, so a manifest that says otherwise must not pass."""
    events = manifest.get("events")
    claims = (
        ("checkpoint", manifest.get("checkpoint"), proof.get("checkpoint")),
        ("leaf_index", manifest.get("leaf_index"), proof.get("leaf_index")),
        ("events.last_event_hash", events.get("last_event_hash") if isinstance(events, Mapping)
         else None, proof.get("last_event_hash")),
    )
    for name, says, proven in claims:
        if says != proven:
            raise ProofError(f"manifest.json {name} {says!r} is not proof.json's {proven!r}")


def _check_inclusion(members: Mapping[str, bytes], parsed: ParsedEvents | None,
                     manifest: Mapping[str, Any], trusted: TrustedCheckpoint | None,
                     result: BundleCheck) -> None:
    proof = _load_json(members, PROOF)
    checkpoint = _load_json(members, CHECKPOINT)
    if not isinstance(proof, Mapping) or proof.get("format") != PROOF_FORMAT:
        result.add("inclusion", "fail", "proof.json is missing or not an inclusion proof document")
        result.add("trusted-checkpoint", "fail", "no inclusion proof to compare")
        return
    result.checkpoint = proof.get("checkpoint") if isinstance(proof.get("checkpoint"), dict) else None
    last_hash = parsed.last_hash if parsed is not None else None
    try:
        if parsed is None or last_hash is None:
            raise ProofError("the events could not be read, so the leaf is unknown")
        if checkpoint != proof.get("checkpoint"):
            raise ProofError("checkpoint.json is not the checkpoint the proof is against")
        verify_proof_document(proof, game_id=result.game_id, last_event_hash=last_hash)
        _manifest_claims(manifest, proof)
    except ProofError as exc:
        result.add("inclusion", "fail", str(exc))
    else:
        cp = proof["checkpoint"]
        result.add(
            "inclusion", "pass",
            f"leaf {proof['leaf_index']} of {cp['tree_size']} leads to root {cp['root_hash']} "
            f"(checkpoint {cp['n']}, {cp['created_at']})",
        )
    if trusted is None:
        result.add(
            "trusted-checkpoint", "warn",
            "no trusted checkpoint given (--root/--size): the bundle's own checkpoint proves "
            "nothing by itself; compare its size and root with the one the operator published",
        )
        return
    try:
        verify_proof_document(proof, trusted_checkpoint=trusted.as_mapping())
    except ProofError as exc:
        hint = ""
        size = result.checkpoint.get("tree_size") if result.checkpoint else None
        if isinstance(size, int) and size != trusted.tree_size:
            hint = (" (if you hold another checkpoint, ask for a bundle made against it "
                    "with `rummyguard dispute --checkpoint N`)")
        result.add("trusted-checkpoint", "fail", f"{exc}{hint}")
    else:
        result.add(
            "trusted-checkpoint", "pass",
            f"the proof leads to the trusted root {trusted.root_hash} at size {trusted.tree_size}",
        )


_LINE_FIELDS: dict[str, tuple[type, ...]] = {
    "source": (str,), "line_no": (int,), "reason": (str,), "message": (str,),
    "game_id": (str,), "seq": (int, type(None)), "head": (int, type(None)),
    "chained_by": (str, type(None)), "event": (bool,), "raw": (str,), "raw_base64": (str,),
    "raw_sha256": (str,),
}


def _line_problem(i: int, line: Any, game_id: str | None) -> str | None:
    """What is wrong with line ``i`` of quarantine.json as a document, or None."""
    if not isinstance(line, Mapping) or set(line) != set(_LINE_FIELDS):
        return f"line {i} does not have the fields {sorted(_LINE_FIELDS)}"
    for key, types in _LINE_FIELDS.items():
        value = line[key]
        if type(value) not in types:  # type(): True is not a line number
            return f"line {i}: {key} is not {' or '.join(t.__name__ for t in types)}"
    if line["game_id"] != game_id:
        return f"line {i} belongs to game {line['game_id']!r}, not {game_id!r}"
    try:
        data = base64.b64decode(line["raw_base64"], validate=True)
    except (binascii.Error, ValueError):
        return f"line {i}: raw_base64 is not base64"
    if _sha256(data) != line["raw_sha256"]:
        return f"line {i} (seq {line['seq']}): its raw bytes do not give its raw_sha256"
    if data.decode("utf-8", errors="replace") != line["raw"]:
        return f"line {i} (seq {line['seq']}): raw is not the text of raw_base64"
    return None


def _check_quarantine(members: Mapping[str, bytes], manifest: Mapping[str, Any],
                      result: BundleCheck) -> list[dict[str, Any]] | None:
    """``quarantine.json``: well formed, each line's bytes its SHA-256, the count the
    manifest's. Never ``pass`` with lines: they are unproven, so ``warn`` says so. The
    lines (``[]`` when the bundle has none), or None when they cannot be read."""
    data = members.get(QUARANTINE)
    if data is None:
        result.add("quarantine", "pass",
                   "no quarantined lines: report.json replays events.jsonl alone")
        return []
    doc = _load_json(members, QUARANTINE)
    if not (isinstance(doc, Mapping) and doc.get("format") == QUARANTINE_FORMAT
            and doc.get("version") == QUARANTINE_VERSION and isinstance(doc.get("lines"), list)
            and doc["lines"]):
        result.add("quarantine", "fail",
                   f"quarantine.json is not a {QUARANTINE_FORMAT} version {QUARANTINE_VERSION} "
                   "document with lines")
        return None
    lines = doc["lines"]
    problems = [p for i, line in enumerate(lines, start=1)
                if (p := _line_problem(i, line, result.game_id)) is not None]
    if doc.get("proven") is not False or doc.get("note") != UNPROVEN:
        problems.append("quarantine.json is not labelled unproven as rummyguard labels it")
    declared = manifest.get("quarantine")
    if not isinstance(declared, Mapping) or declared.get("count") != len(lines) \
            or declared.get("proven") is not False:
        problems.append(f"manifest.json does not declare {len(lines)} unproven quarantined lines")
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        result.add("quarantine", "fail", "; ".join(problems[:3]) + more)
        return None
    seqs = sorted({q["seq"] for q in lines if q["seq"] is not None})
    reasons = sorted({q["reason"] for q in lines})
    result.add(
        "quarantine", "warn",
        f"{len(lines)} line(s) ingest read but did not store (seq {seqs}, {', '.join(reasons)}): "
        "UNPROVEN, in neither the hash chain nor the Merkle tree (the operator's copy, each "
        "line's bytes match its SHA-256); report.json replays them where ingest read them",
    )
    return lines


def _first_difference(claimed: Any, derived: Any, path: str = "") -> str:
    """Where two JSON values first differ, for a person (``record.findings[2].rule``)."""
    if isinstance(claimed, dict) and isinstance(derived, dict):
        for key in sorted(set(claimed) | set(derived), key=str):
            if claimed.get(key, ...) != derived.get(key, ...):
                return _first_difference(claimed.get(key), derived.get(key), f"{path}.{key}")
    if isinstance(claimed, list) and isinstance(derived, list):
        for i, (a, b) in enumerate(zip(claimed, derived, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
        if len(claimed) != len(derived):
            return f"{path[1:]}: report has {len(claimed)} items, the replay gives {len(derived)}"
    shown = orjson.dumps(claimed).decode()[:120], orjson.dumps(derived).decode()[:120]
    return f"{path[1:] or 'report'}: report says {shown[0]}, the replay gives {shown[1]}"


def _version_note(manifest: Mapping[str, Any]) -> str:
    tool = manifest.get("tool")
    made_by = tool.get("version") if isinstance(tool, Mapping) else None
    if made_by == __version__:
        return ""
    return f" (bundle made by {TOOL} {made_by}, checked with {__version__}: rules may differ)"


def _check_replay(members: Mapping[str, bytes], parsed: ParsedEvents | None,
                  quarantined: list[dict[str, Any]] | None,
                  manifest: Mapping[str, Any], result: BundleCheck) -> None:
    report = _load_json(members, REPORT)
    if not isinstance(report, Mapping):
        result.add("replay", "fail", "report.json is missing or not JSON")
        return
    if parsed is None:
        result.add("replay", "fail", "not replayed: events.jsonl is not readable")
        return
    if quarantined is None:
        result.add("replay", "fail", "not replayed: quarantine.json is not readable")
        return
    expected = _json(replay_report(parsed.events, quarantined))
    derived = orjson.loads(expected)
    if members[REPORT] == expected:  # byte for byte: what a person reads is what was checked
        record = derived["record"]
        verdict = "clean" if record["clean"] else f"{len(record['findings'])} finding(s)"
        folded = (f", with the {len(quarantined)} quarantined line(s) where ingest read them"
                  if quarantined else "")
        result.add(
            "replay", "pass",
            f"re-replayed{folded}: {verdict}, winners {record['results']['winners']}; "
            "findings, results and timeline match report.json",
        )
    else:
        result.add(
            "replay", "fail",
            "report.json differs from the replay: "
            + (_first_difference(report, derived) if report != derived else
               "same values, other bytes (duplicate keys, number types or layout)")
            + _version_note(manifest),
        )


def _check_html(members: Mapping[str, bytes], parsed: ParsedEvents | None,
                quarantined: list[dict[str, Any]] | None,
                manifest: Mapping[str, Any], result: BundleCheck) -> None:
    page = members.get(HTML)
    if page is None:
        html = manifest.get("html")
        reason = html.get("reason") if isinstance(html, Mapping) else None
        result.add("html", "skip", f"no report.html in the bundle: {reason or 'no reason given'}")
        return
    if parsed is None:
        result.add("html", "fail", "not re-rendered: events.jsonl is not readable")
        return
    if quarantined is None:
        result.add("html", "fail", "not re-rendered: quarantine.json is not readable")
        return
    rendered, why_not = _render_html(parsed.events, quarantined)
    if rendered is None:
        result.add("html", "skip", f"cannot re-render report.html here: {why_not}")
    elif rendered == page:
        result.add("html", "pass", "report.html is the page the events render to")
    else:
        result.add("html", "fail", "report.html is not the page the events render to"
                   + _version_note(manifest))


def check_bundle(data: bytes, trusted: TrustedCheckpoint | None = None) -> BundleCheck:
    """Verify a dispute bundle offline; every check in :data:`CHECK_NAMES` is reported.

    ``archive`` (a readable zip of known members), ``manifest`` (every member's SHA-256),
    ``chain`` (events.jsonl validates and its hash chain holds), ``inclusion`` (the proof
    leads from this game's last event hash to the bundle's checkpoint root),
    ``trusted-checkpoint`` (that checkpoint is the trusted one; ``warn`` when none is
    given), ``quarantine`` (quarantine.json, when there is one, is well formed and each
    line's bytes give its SHA-256; ``warn``: those lines are unproven), ``replay``
    (report.json is exactly what replaying the events, with those lines, gives),
    ``html`` (report.html is what the events render to; ``skip`` if absent).
    Checks go on after a failure, so one run shows everything that is wrong.
    """
    result = BundleCheck()
    members = _open_archive(data, result)
    if members is None:
        return result
    manifest = _load_json(members, MANIFEST)
    if not (
        isinstance(manifest, Mapping)
        and manifest.get("format") == BUNDLE_FORMAT
        and manifest.get("version") == BUNDLE_VERSION
        and isinstance(manifest.get("game_id"), str)
    ):
        result.usable = False
        result.add("manifest", "fail",
                   f"manifest.json is not a {BUNDLE_FORMAT} version {BUNDLE_VERSION} manifest")
        return result
    result.game_id = manifest["game_id"]
    _check_manifest(members, manifest, result)
    parsed = _check_chain(members, manifest, result)
    _check_inclusion(members, parsed, manifest, trusted, result)
    quarantined = _check_quarantine(members, manifest, result)
    _check_replay(members, parsed, quarantined, manifest, result)
    _check_html(members, parsed, quarantined, manifest, result)
    return result
