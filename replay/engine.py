"""The replayer: a pure fold of one game's events into state, results and findings.

``replay(events) -> GameRecord``. The same events always give the same record, bit
for bit: no clock, no randomness, no dict-order dependence. A violation is recorded
and the move applied as the platform applied it; a break the state cannot follow
(C-HOLD: a card that is not where the event says) halts the game with an
``integrity`` finding.

The engine owns what all variants share: the envelope (one game, ``seq`` 0, 1, 2...,
the hash chain), connections, and the platform's claims — ``ChipsTransferred``
(compared as one multiset at the end, C-CLAIM), ``RoundEnded`` and ``GameEnded``.
Everything else goes to the game's :class:`~rummyguard.replay.variant.Variant`.

Decisions on claims (RULES.md C-CLAIM, EVENTS.md):

- Transfers the replay computes but the log lacks are reported at ``GameEnded``; a log
  without ``GameEnded`` may be cut short (a game still in progress), so its missing
  transfers are not a finding ("a claim the platform did not log is not a finding").
  Logged transfers that are not due are reported at the first such event either way.
- A game that halts is judged up to the halting event: the claims logged before it
  against the transfers computed before it, as for a log that ends there (the halt ends
  the fold, it does not cancel what was found before).
- ``GameEnded.net`` is compared player by player; a key for a seated player the claim
  leaves out counts as a claimed 0. A key that names no seated player (``house``) is
  compared with what that pool gained by the computed transfers, so a true rake claim
  is not a finding and a wrong one is. ``results.net`` itself lists the seats only.
- Events after ``GameEnded`` are still folded and judged (a move then is out of turn,
  a transfer then still belongs to the game's multiset).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mypy_extensions import mypyc_attr

from ..events.hashing import GENESIS_HASH, event_hash, take_event_hash
from ..events.models import CURRENT_VERSION, IngestLinked
from ..events.timestamps import TS_TABLES, ts_millis
from ..events.upcast import upcast
from .findings import INTEGRITY, Finding, Halt
from .variant import Event, GameContext, Transfer, Variant, variant_class

_MINUTE_MS, _SECOND_MS, _MILLI_MS = TS_TABLES

ENGINE_TYPES = frozenset(
    {"GameCreated", "PlayerConnected", "PlayerDisconnected", "ChipsTransferred", "RoundEnded",
     "GameEnded"}
)

@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(slots=True)
class Results:
    winners: list[str]
    net: dict[str, int]
    scores: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"winners": self.winners, "net": self.net, "scores": self.scores}


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(slots=True)
class GameRecord:
    """Everything a replay says about one game."""

    game_id: str
    variant: str
    findings: list[Finding]
    halted: bool
    results: Results
    transfers: list[Transfer]
    events_read: int
    last_seq: int
    state: Variant | None = field(repr=False, default=None)
    chained: bool | None = None
    #: the game reached its end by the rules (a game cut short, halted or still in
    #: progress has not: its ``results`` are the state so far, stakes still in the pot)
    finished: bool = False
    #: the seq of the event the replay halted at (None: it did not halt)
    halted_at: int | None = None

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        """The ``verify --json`` form of one game."""
        return {
            "game_id": self.game_id,
            "variant": self.variant,
            "clean": self.clean,
            "halted": self.halted,
            "findings": [f.to_dict() for f in self.findings],
            "results": self.results.to_dict(),
        }


Observer = Callable[["GameEngine", Event], None]
#: a dispatch table entry: (handler, True if the engine's own, the type's current version)
_Entry = tuple[Callable[[Any, Event], None], bool, "int | None"]
#: a chip transfer as (from, to, amount); Any, for a claim read from a direct caller's
#: event may break the contract there and must still be compared (C-CLAIM), and a
#: compiled build checks the types it is told
_Key = tuple[Any, Any, Any]


class GameEngine:
    """Incremental replay of one game: feed events with :meth:`apply`, then :meth:`record`.

    The simulator drives games through the same engine (``legal_moves``/``to_act``), so
    whatever it writes replays clean by construction.
    """

    def __init__(self, *, verify_hashes: bool = True, observer: Observer | None = None,
                 consume: bool = False) -> None:
        self.verify_hashes = verify_hashes
        #: how the hot path hashes an event: ``consume`` (the caller gives its events up,
        #: as a reader of files that parses lines only to replay them) lets it remove the
        #: event's ``hash`` member in place rather than copy the event; the rest of the
        #: event, and every event taking the slow path, is left as given
        self._hash_of = take_event_hash if consume else event_hash
        self.observer = observer
        self.ctx: GameContext | None = None
        self.variant: Variant | None = None
        self.variant_name = ""
        self.game_id = ""
        self.halted = False
        #: the seq of the event that halted the fold (None: not halted, or before the game)
        self.halted_at: int | None = None
        self.next_seq = 0  # the seq the next event should have (last_seq + 1)
        self.events_read = 0
        self.prev_hash = GENESIS_HASH
        self.chained: bool | None = None
        #: the last link of the store's own chain (events marked :class:`IngestLinked`)
        self.ingest_prev = GENESIS_HASH
        #: each such event's links by event_id: an unchained copy of it is compared as
        #: ingest would have linked it (:meth:`_repeat`)
        self._ingest_links: dict[Any, tuple[Any, Any]] = {}
        #: (seq, transfer) as logged
        self.claimed: list[tuple[int, _Key]] = []
        #: a ChipsTransferred was logged, even one listing nothing (a claim no chips moved)
        self.transfers_logged = False
        self.game_ended_seq: int | None = None
        #: the event ids seen in this game (EVENTS.md: event_id is globally unique; RULES.md
        #: §5: a duplicate is an integrity finding), each with the hash of its content when
        #: the chain check computed one (None otherwise): a copy of an earlier seq is then
        #: told apart as a retry (same content) or a conflict (EVENTS.md: "the same event_id
        #: with other content ... is rejected as a conflict"). An id reused by another game
        #: is the readers' to catch (ingest quarantines it as conflict_event_id, and so do
        #: the file readers of verify.py)
        self._event_ids: dict[str | None, str | None] = {}
        self.connections: dict[str, list[tuple[int, str, str, str]]] = {}
        self._pre_findings: list[Finding] = []
        #: event type -> (handler, True if it is the engine's own, False if the variant's,
        #: the type's current version): one table per variant class
        #: (:func:`_handler_table`), set at GameCreated
        self._handlers: Mapping[str, _Entry] = _NO_HANDLERS

    # -- the fold --------------------------------------------------------------------------
    @property
    def last_seq(self) -> int:
        """The seq of the last event taken in its place (-1: none yet). Derived, so the
        hot path of :meth:`apply` keeps one counter, not two."""
        return self.next_seq - 1

    @property
    def findings(self) -> list[Finding]:
        return self._pre_findings if self.ctx is None else self.ctx.findings

    def _finding(self, seq: int, rule: str, message: str, kind: str = INTEGRITY) -> None:
        self.findings.append(Finding(seq, rule, kind, message))  # type: ignore[arg-type]

    def _halt(self, seq: int, rule: str, message: str) -> None:
        """An integrity finding at ``seq`` that stops the fold (RULES.md §5)."""
        self._finding(seq, rule, message)
        self.halted = True
        self.halted_at = seq

    def apply(self, event: Event) -> None:
        """Fold one event (a validated dict, original or current version) into the game.

        The hot loop of every replay: the order checks of :meth:`_check_order` are skipped
        in the common case (the next seq of the same game), and a current-version event
        goes straight to its handler through the variant class's merged table (engine +
        variant, :func:`_handler_table`, set at GameCreated) with no version look-up.
        """
        self.events_read += 1
        if self.halted:
            return
        try:  # an event that breaks the contract raises in here: see the except below
            seq = event["seq"]
            if type(event) is IngestLinked and self.verify_hashes:
                # the store's own chain runs through every stored event, one the fold
                # skips (a seq a quarantined line took first) included
                self._check_ingest_link(event, seq)
            # The first event (game_id still "") and any seq or game out of line take the
            # checks; a first event whose game_id is "" and seq 0 gets the same state here.
            if seq == self.next_seq and event["game_id"] == self.game_id:
                self.next_seq = seq + 1
            elif not self._check_order(event, seq):
                return
            ids = self._event_ids
            try:  # a subscript, not .get: a method call per event costs more (no miss here)
                event_id = event["event_id"]
            except KeyError:
                event_id = None
            known = len(ids)
            ids.setdefault(event_id, None)  # one hash look-up, not two (`in`, then a store)
            # not grown: an id already seen (None, from a direct caller's events, is no id)
            new_id = len(ids) != known
            if not new_id and event_id is not None:
                self._finding(seq, "LOG-EVENT", f"event_id {event_id!r} is used by an earlier "
                              "event of this game (event ids are unique)")
            if self.verify_hashes:
                try:  # subscripts, as for event_id
                    claimed = event["hash"]
                    linked = event["prev_hash"] == self.prev_hash
                except KeyError:
                    claimed, linked = event.get("hash"), False
                if (  # the common case of _check_chain: the chain goes on, nothing to report
                    linked and self.chained and claimed is not None and "upcast_from" not in event
                ):
                    content: str | None = self._hash_of(event)
                    if content != claimed:
                        self._finding(seq, "LOG-CHAIN", "hash does not match the event's content")
                    self.prev_hash = claimed
                else:
                    content = self._check_chain(event, seq)
                if new_id:
                    ids[event_id] = content
            elif self.chained is None:
                self.chained = event.get("hash") is not None and type(event) is not IngestLinked
            folded = event  # what is folded: the event, or its upcast to the current version
            try:  # (handler, engine's own?, current version); a subscript, as for event_id
                entry: _Entry | None = self._handlers[event["type"]]
            except KeyError:
                entry = None
            if entry is None or event["v"] != entry[2]:  # not the common case: version checks
                current = CURRENT_VERSION.get(event["type"])
                if event["v"] != current:
                    if type(event["v"]) is not int:  # "2", null: no version (a direct caller's)
                        self._breach(event, seq)
                        return
                    if current is None or not 0 < event["v"] < current:
                        self._unreadable(event, seq, current)
                        return
                    try:
                        folded = upcast(event)
                    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                        # an older-version event that breaks the contract: the same LOG-EVENT
                        # halt as a current-version one, never an exception (EVENTS.md: v1 and
                        # v2 say the same thing, so they must be judged the same)
                        self._breach(event, seq)
                        return
            ctx = self.ctx
            try:
                if ctx is None:
                    self._start(folded)
                else:
                    ctx.seq = seq
                    ts = folded["ts"]
                    try:  # ts_millis(ts), inlined: a call per event costs as much as its look-ups
                        ctx.ts_ms = _MINUTE_MS[ts[:16]] + _SECOND_MS[ts[17:19]] + _MILLI_MS[ts[20:23]]
                    except KeyError:  # a minute not yet in the table, or not plain digits
                        ctx.ts_ms = ts_millis(ts)
                    if entry is None:
                        self.variant.apply(folded)  # type: ignore[union-attr]  # reports LOG-EVENT
                    else:
                        entry[0](self if entry[1] else self.variant, folded)
            except Halt as halt:
                self._halt(seq, halt.rule, halt.message)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            # Only an event that breaks the contract gets here (the project's readers
            # validate at the edge; a direct caller of replay() may not): say so and halt,
            # whether its envelope or its payload broke it (a compiled build checks the
            # types its code names, so it may be told where the plain one reads on).
            # A valid event that raises is a bug of ours, and is raised.
            if _contract_breach(event) is None:
                raise
            at = event.get("seq")
            self._breach(event, at if type(at) is int and at >= 0 else self.next_seq)
            return
        if self.observer is not None and not self.halted:
            self.observer(self, folded)

    def _breach(self, event: Event, seq: int) -> None:
        """An event that breaks the contract (EVENTS.md), given by a direct caller of
        :func:`replay` or read from a store line edited behind ingest's back: a LOG-EVENT
        halt that says why (the state cannot follow an event it cannot read)."""
        reason = _contract_breach(event) or "its payload cannot be upcast"
        self._halt(seq, "LOG-EVENT", f"{event.get('type')} v{event.get('v')} is not a valid "
                   f"event ({reason}); the replay cannot follow it")

    def _unreadable(self, event: Event, seq: int, current: int | None) -> None:
        """An event of a type not in the catalog, or of a version the project does not
        know (EVENTS.md: such a line is quarantined, "never guessed at"). Its seq and
        chain links were checked like any event's; it is a LOG-EVENT integrity finding.
        An unknown type is skipped and the replay goes on (as for an event the variant
        does not know); a version newer than ours halts: the state cannot follow a
        move it cannot read."""
        kind = event["type"]
        if current is None:
            self._finding(seq, "LOG-EVENT", f"unknown event type {kind!r}; skipped")
            return
        if kind in _SESSION_TYPES:  # no game state: skipped, as GameEngine.unreadable does
            self._finding(seq, "LOG-EVENT", f"{kind} v{event['v']} is not a version this "
                          f"project knows (v1..v{current}); skipped")
            return
        self._halt(seq, "LOG-EVENT", f"{kind} v{event['v']} is not a version this project "
                   f"knows (v1..v{current}); the replay cannot follow it")

    def unreadable(self, obj: dict[str, Any], reason: str, message: str) -> None:
        """A line of this game that is not a valid event (``reason``: the quarantine
        code), given whole by a reader of files: its seq and chain links are checked
        like any event's, so it does not read as a gap after it, and it is a LOG-EVENT
        integrity finding at its seq. An unknown type is skipped and the replay goes
        on, as after a session event (PlayerConnected/Disconnected, no game state);
        anything else halts (the state cannot follow an event it cannot read). The line
        must name a seq >= 0 (its place); a reader reports any other line by itself."""
        seq = obj.get("seq")
        if type(seq) is not int or seq < 0:
            raise ValueError(f"a line placed in a game needs a seq >= 0, not {seq!r}")
        self.events_read += 1
        if self.halted or not self._check_order(obj, seq):
            # after a halt, or at a seq already taken: the line is still reported
            self._finding(seq, "LOG-EVENT", f"{message}; skipped")
            return
        if self.verify_hashes:
            claimed, prev = obj.get("hash"), obj.get("prev_hash")
            if isinstance(claimed, str) and isinstance(prev, str):
                try:
                    self._check_chain(obj, seq)
                except ValueError:  # content JCS cannot hash (a float): the link stands
                    self.prev_hash = claimed
            elif claimed is None and prev is None:
                if self.chained is None:
                    self.chained = False
                elif self.chained:
                    self._finding(seq, "LOG-CHAIN", "the game mixes chained and unchained events")
                    self.chained = False
        if reason == "unknown_type" or obj.get("type") in _SESSION_TYPES:
            self._finding(seq, "LOG-EVENT", f"{message}; skipped")
            return
        self._halt(seq, "LOG-EVENT", f"{message}; the replay cannot follow it")

    def _check_order(self, event: Event, seq: int) -> bool:
        """Game id and seq order. False = skip the event."""
        if self.events_read == 1:
            self.game_id = event["game_id"]
        elif event["game_id"] != self.game_id:
            self._finding(seq, "LOG-GAME", f"event of game {event['game_id']!r} in game {self.game_id!r}")
            return False
        if seq < self.next_seq:
            # say when it is the same event again (a retry, or files that overlap): the
            # support agent's answer is then "merge by ingest", not "the log was reordered"
            what = self._repeat(event)
            self._finding(
                seq, "LOG-SEQ", f"seq {seq} {what} (expected {self.next_seq}); event skipped",
            )
            return False
        if seq > self.next_seq:
            missing = (f"seq {self.next_seq}" if seq == self.next_seq + 1
                       else f"seqs {self.next_seq}..{seq - 1}")
            self._finding(seq, "LOG-SEQ", f"sequence gap: {missing} missing")
        self.next_seq = seq + 1
        return True

    def _repeat(self, event: Event) -> str:
        """What an event at an earlier seq is, for its LOG-SEQ finding: the same event
        again (a retry, or files that overlap: the support agent's answer is "merge by
        ingest"), an event_id again with other content (a conflict, which ingest rejects),
        or, its id unseen, an event repeated or out of order (the log was reordered).
        Content is compared by hash when the chain check hashed the first one and the
        copy is chained too (a producer-chained log); otherwise the wording says the
        content was not compared."""
        event_id = event.get("event_id")
        if event_id not in self._event_ids:
            return "repeated or out of order"
        first = self._event_ids[event_id]
        link = self._ingest_links.get(event_id)
        if first is None and link is not None and "hash" not in event \
                and "prev_hash" not in event:
            # the first is an event of a game the store chained: its content is known by
            # the hash the store gave it (or, kept back at ingest, by its own), so the
            # copy is linked as the first was and compared (the store's replay of a retry
            # kept back at ingest; audit 39)
            try:
                same = event_hash(event if link[0] is None else {**event, "prev_hash": link[0]}) \
                    == link[1]
            except ValueError:  # content JCS cannot hash: not the stored content
                same = False
            if same:
                return "repeated: the same event_id again, with the same content (a retry or overlapping files)"
            return (f"repeated: event_id {event_id!r} again with other content (a conflict: "
                    "EVENTS.md rejects it, ingest quarantines it)")
        # both chained, or not compared: a copy without hash fields is how an unchained
        # log repeats an event, and the store (which chains such a log at ingest) and the
        # file must word it alike (audit 35)
        if first is None or event.get("hash") is None or "upcast_from" in event:
            return "repeated: the same event_id again (unchained: content not compared)"
        # the same line again: its content and its hash field as the first's (ingest's
        # no-op compares whole lines, so a copy whose `hash` was edited is a conflict too)
        if event.get("hash") == first and event_hash(event) == first:
            return "repeated: the same event_id again, with the same content (a retry or overlapping files)"
        return (f"repeated: event_id {event_id!r} again with other content (a conflict: "
                "EVENTS.md rejects it, ingest quarantines it)")

    def _check_chain(self, event: Event, seq: int) -> str | None:
        """The hash chain: one game is all chained or all not, each ``prev_hash`` is the
        previous event's hash and each ``hash`` covers the event's content. Returns the
        hash of the event's content (an upcast event's: its stored hash, see below; None: an
        unchained or a half-chained event)."""
        if type(event) is IngestLinked:
            # links the store gave it (checked in :meth:`apply`): the producer's chain
            # sees the unchained event the file has
            if self.chained is None:
                self.chained = False
            elif self.chained:
                self._finding(seq, "LOG-CHAIN", "the game mixes chained and unchained events")
                self.chained = False
            return None
        claimed = event.get("hash")
        has_hash = claimed is not None
        if (event.get("prev_hash") is None) == has_hash:
            # one link field without the other: say so, once, as ingest does ("only one of
            # prev_hash/hash is present"); the other checks would only echo it three ways
            self._finding(seq, "LOG-CHAIN", "only one of prev_hash and hash is present "
                          "(a chained event carries both, an unchained one neither)")
            if self.chained is None:
                self.chained = True
            if has_hash:
                self.prev_hash = claimed  # type: ignore[assignment]
            return None
        if self.chained is None:
            self.chained = has_hash
        if has_hash != self.chained:
            self._finding(seq, "LOG-CHAIN", "the game mixes chained and unchained events")
            self.chained = has_hash
        if has_hash:
            if event.get("prev_hash") != self.prev_hash:
                self._finding(seq, "LOG-CHAIN", "prev_hash is not the previous event's hash")
            # An upcast event (from the store) no longer has the content its hash covers;
            # its original bytes were hash-checked at ingest and are by `verify-log`, and
            # the store's reader re-hashed them (`event_from_row` drops the mark of an
            # edited one): its claimed hash is the hash of its content, so a copy of it at
            # an earlier seq is compared as a current-version event's copy is (audit 39)
            if "upcast_from" in event:
                self.prev_hash = claimed  # type: ignore[assignment]
                return claimed  # type: ignore[return-value]
            content = event_hash(event)
            if content != claimed:
                self._finding(seq, "LOG-CHAIN", "hash does not match the event's content")
            self.prev_hash = claimed  # type: ignore[assignment]
            return content
        return None

    def _check_ingest_link(self, event: Event, seq: int) -> None:
        """The store's own link of a stored :class:`IngestLinked` event: an edit of the
        store reads as it does in a producer-chained game (an upcast event was re-hashed
        by the store's reader, as in :meth:`_check_chain`). A line kept back at ingest
        has no link; its content hash is kept, for a copy of it (:meth:`_repeat`)."""
        claimed = event.get("hash")
        if claimed is None and "prev_hash" not in event:
            try:
                content = event_hash(event)
            except ValueError:  # content JCS cannot hash: nothing to compare a copy with
                return
            self._ingest_links.setdefault(event.get("event_id"), (None, content))
            return
        if event.get("prev_hash") != self.ingest_prev:
            self._finding(seq, "LOG-CHAIN", "prev_hash is not the previous event's hash")
        # content JCS cannot hash (an edited float) raises, as in the chain check: the
        # event is then the LOG-EVENT breach it is there
        if "upcast_from" not in event and event_hash(event) != claimed:
            self._finding(seq, "LOG-CHAIN", "hash does not match the event's content")
        if isinstance(claimed, str):
            self.ingest_prev = claimed
        self._ingest_links.setdefault(event.get("event_id"), (event.get("prev_hash"), claimed))

    def _start(self, event: Event) -> None:
        if event["type"] != "GameCreated":
            self.halted = True
            self._finding(event["seq"], "LOG-GAME", f"the log starts with {event['type']}, not GameCreated")
            return
        p = event["payload"]
        self.variant_name = p["variant"]
        seats = list(p["seats"])
        self.ctx = GameContext(self.game_id, seats, p["dealer"], p["stake"], seq=event["seq"],
                               ts_ms=ts_millis(event["ts"]))
        self.ctx.findings[:0] = self._pre_findings
        if len(set(seats)) != len(seats) or "system" in seats:
            raise Halt("LOG-GAME", "GameCreated.seats repeats a player id or names 'system'")
        if p["dealer"] >= len(seats):
            raise Halt("LOG-GAME", f"dealer seat {p['dealer']} does not exist")
        cls = variant_class(self.variant_name)
        if cls is None:
            raise Halt("LOG-EVENT", f"variant {self.variant_name!r} is not supported")
        self.variant = cls(self.ctx, p["rules"])
        self._handlers = _handler_table(cls)

    def _second_created(self, event: Event) -> None:
        self._finding(event["seq"], "LOG-GAME", "a second GameCreated in the same game")

    def _claimed_transfers(self, event: Event) -> None:
        self.transfers_logged = True
        for t in event["payload"]["transfers"]:
            if t["amount"]:  # a logged 0 (a zero rake) moves nothing: the replay has none
                self.claimed.append((event["seq"], (t["from"], t["to"], t["amount"])))

    def _connected(self, event: Event) -> None:
        self._connection(event, True)

    def _disconnected(self, event: Event) -> None:
        self._connection(event, False)

    def _connection(self, event: Event, connected: bool) -> None:
        actor = event["actor"]  # connections are not moves: no turn rule applies
        p = event["payload"]
        self.connections.setdefault(actor, []).append(
            (event["seq"], "connect" if connected else "disconnect", p.get("ip_hash", ""),
             p.get("device_hash", ""))
        )

    # -- claims ---------------------------------------------------------------------------
    def _check_round_claim(self, event: Event) -> None:
        assert self.variant is not None and self.ctx is not None
        p = event["payload"]
        result = self.variant.round_result(p["round"])
        if result is None:
            self.ctx.discrepancy(f"RoundEnded claims round {p['round']} ended; by the rules it has not")
            return
        winners, scores = result
        if sorted(p["winners"]) != sorted(winners):
            self.ctx.discrepancy(
                f"round {p['round']} winners: claimed {sorted(p['winners'])}, recomputed {sorted(winners)}"
            )
        diff = _claim_diff(p["scores"], scores)
        if diff:
            self.ctx.discrepancy(f"round {p['round']} scores: {diff}")

    def _check_game_claim(self, event: Event) -> None:
        assert self.variant is not None and self.ctx is not None
        self.game_ended_seq = event["seq"]
        # the ids stay held after the end: events after GameEnded are still judged, and a
        # log written out twice then says "the same event_id again", not "out of order"
        p = event["payload"]
        if not self.variant.is_over():
            self.ctx.discrepancy("GameEnded claims the game ended; by the rules it has not")
        winners = self.variant.winners()
        if sorted(p["winners"]) != sorted(winners):
            self.ctx.discrepancy(
                f"game winners: claimed {sorted(p['winners'])}, recomputed {sorted(winners)}"
            )
        computed = self.net()
        for key in p["net"]:  # a pool in the claim (``house``) is judged by its own net
            if key not in computed:
                computed[key] = self._pool_net(key)
        diff = _claim_diff(p["net"], computed)
        if diff:
            self.ctx.discrepancy(f"net differs: {diff}")

    def _check_transfers(self) -> None:
        """C-CLAIM: the logged transfers, together, equal the computed ones as a multiset.

        Transfers of a split the rules fix only in total (:meth:`Variant.regroupable`:
        Michigan's pay cards at the end) may be routed differently by the platform: what
        is left of them after the exact match is compared with the unmatched claims from
        their pools by the totals per pool and per player."""
        if not self.transfers_logged or self.ctx is None:
            return
        computed = [(t.src, t.dst, t.amount) for t in self.ctx.transfers]  # Transfer.key()
        claimed_at = self.claimed
        if self.halted_at is not None:
            # A halt ends the fold, not the judging of what came before it (RULES.md §5,
            # C-CLAIM): the claims logged before the halting event are compared with the
            # transfers computed before it, as for a log that ends there.
            cut = self.halted_at
            computed = [(t.src, t.dst, t.amount) for t in self.ctx.transfers if t.seq < cut]
            claimed_at = [claim for claim in claimed_at if claim[0] < cut]
        claimed = [key for _, key in claimed_at]
        if computed == claimed:  # the common case: the same transfers in the same order
            return
        if len(computed) == len(claimed):  # the same multiset in another order?
            try:
                if sorted(computed) == sorted(claimed):
                    return  # nothing extra, nothing missing
            except TypeError:  # a claim whose fields do not order (not a valid event)
                pass
        expected = Counter(computed)
        extra: list[tuple[int, _Key]] = []
        for seq, key in claimed_at:
            if expected[key] > 0:
                expected[key] -= 1
            else:
                extra.append((seq, key))
        if extra and self.variant is not None:
            extra = self._regroup(expected, extra)
        missing = sorted(expected.elements()) if self.game_ended_seq is not None else []
        if not extra and not missing:
            return
        at = extra[0][0] if extra else self.game_ended_seq
        parts = []
        if extra:
            parts.append("claimed but not due: " + _transfers_text([key for _, key in extra]))
        if missing:
            parts.append("due but not claimed: " + _transfers_text(missing))
        self.ctx.findings.append(
            Finding(at if at is not None else self.last_seq, "C-CLAIM", "discrepancy",
                    "chip transfers differ; " + "; ".join(parts))
        )

    def _regroup(
        self, expected: Counter[_Key], extra: list[tuple[int, _Key]]
    ) -> list[tuple[int, _Key]]:
        """Match unmatched claims against the unmatched regroupable computed transfers by
        their totals (per source pool, per recipient); returns the claims still extra and
        takes the matched transfers out of ``expected``."""
        assert self.ctx is not None and self.variant is not None
        split = Counter(t.key() for t in self.ctx.transfers if self.variant.regroupable(t))
        left = Counter({k: min(n, split[k]) for k, n in expected.items() if n > 0 and split[k]})
        if not left:
            return extra
        pools = {src for src, _, _ in left}
        claims = [(seq, key) for seq, key in extra if key[0] in pools]

        def totals(keys: Iterable[_Key]) -> tuple[Counter[str], Counter[str]]:
            by_src: Counter[str] = Counter()
            by_dst: Counter[str] = Counter()
            for src, dst, amount in keys:
                by_src[src] += amount
                by_dst[dst] += amount
            return by_src, by_dst

        if not claims or totals(left.elements()) != totals(key for _, key in claims):
            return extra
        expected.subtract(left)
        return [(seq, key) for seq, key in extra if key[0] not in pools]

    # -- results ----------------------------------------------------------------------------
    def net(self) -> dict[str, int]:
        """Each seated player's chip gain or loss from the computed transfers."""
        assert self.ctx is not None
        net = dict.fromkeys(self.ctx.seats, 0)
        for t in self.ctx.transfers:
            if t.src in net:
                net[t.src] -= t.amount
            if t.dst in net:
                net[t.dst] += t.amount
        return net

    def _pool_net(self, name: str) -> int:
        """What a non-player id (a pool such as ``house``) gained over the game so far."""
        assert self.ctx is not None
        return sum(t.amount for t in self.ctx.transfers if t.dst == name) - sum(
            t.amount for t in self.ctx.transfers if t.src == name
        )

    def record(self) -> GameRecord:
        """Close the fold: check the transfer claims and return the record."""
        self._check_transfers()
        if self.ctx is None or self.variant is None:
            return GameRecord(self.game_id, self.variant_name, list(self.findings), self.halted,
                              Results([], {}, {}), [], self.events_read, self.last_seq, None,
                              self.chained, halted_at=self.halted_at)
        return GameRecord(
            game_id=self.game_id,
            variant=self.variant_name,
            findings=sorted(self.ctx.findings, key=_by_seq),  # stable: found order within a seq
            halted=self.halted,
            results=Results(self.variant.winners(), self.net(), self.variant.scores()),
            transfers=list(self.ctx.transfers),
            events_read=self.events_read,
            last_seq=self.last_seq,
            state=self.variant,
            chained=self.chained,
            finished=self.variant.is_over(),
            halted_at=self.halted_at,
        )


#: the event types the engine itself folds (everything else goes to the variant)
_ENGINE_HANDLERS: dict[str, Callable[[GameEngine, Event], None]] = {
    "GameCreated": GameEngine._second_created,
    "PlayerConnected": GameEngine._connected,
    "PlayerDisconnected": GameEngine._disconnected,
    "ChipsTransferred": GameEngine._claimed_transfers,
    "RoundEnded": GameEngine._check_round_claim,
    "GameEnded": GameEngine._check_game_claim,
}
assert set(_ENGINE_HANDLERS) == ENGINE_TYPES

_NO_HANDLERS: Mapping[str, _Entry] = MappingProxyType({})
#: variant class -> (its ``_handlers`` when merged, the merged table)
_HANDLER_TABLES: dict[
    type[Variant], tuple[dict[str, Callable[[Any, Event], None]], dict[str, _Entry]]
] = {}


def _handler_table(cls: type[Variant]) -> dict[str, _Entry]:
    """The merged dispatch table of a variant class: the variant's ``apply_<Type>``
    methods, then the engine's own types over them, each with the type's current
    version (an event of it needs no upcast). Built once per class (not bound per
    game: a game's replay then allocates no handler objects), rebuilt if the class's
    handlers were replaced."""
    cached = _HANDLER_TABLES.get(cls)
    if cached is not None and cached[0] is cls._handlers:
        return cached[1]
    table = {t: (f, False, CURRENT_VERSION.get(t)) for t, f in cls._handlers.items()}
    table.update({t: (f, True, CURRENT_VERSION.get(t)) for t, f in _ENGINE_HANDLERS.items()})
    _HANDLER_TABLES[cls] = (cls._handlers, table)
    return table


#: Events that are not moves and change no game state: an unreadable one is skipped.
_SESSION_TYPES = frozenset({"PlayerConnected", "PlayerDisconnected"})


def _contract_breach(event: Event) -> str | None:
    """Why ``event`` breaks the contract (EVENTS.md), or None if it is a valid event."""
    from ..events.models import EventError, validate_event

    try:
        validate_event(event)
    except EventError as exc:
        return f"{exc.reason}: {exc.detail}"
    return None


def _by_seq(finding: Finding) -> int:
    return finding.seq


def _claim_diff(claimed: dict[str, int], computed: dict[str, int]) -> str:
    """The keys where a ``{player: int}`` claim is wrong, as text ('' = none). A key
    either side lacks counts as 0 there: leaving out a player whose recomputed value
    is 0 is not a wrong claim (RULES.md C-CLAIM: a claim the platform did not log is
    not a finding), and neither is claiming 0 for an id the replay has no value for
    (``"house": 0``); any other difference is."""
    if claimed == computed:  # the common case: every key agrees (== as below)
        return ""
    keys = sorted(set(claimed) | set(computed))
    return ", ".join(
        f"{k}: claimed {claimed.get(k, 0)}, recomputed {computed.get(k, 0)}"
        for k in keys
        if claimed.get(k, 0) != computed.get(k, 0)
    )


def _transfers_text(items: list[_Key]) -> str:
    return ", ".join(f"{a}->{b} {n}" for a, b, n in items)


def replay(
    events: Iterable[Event],
    *,
    until_seq: int | None = None,
    verify_hashes: bool = True,
    observer: Observer | None = None,
) -> GameRecord:
    """Replay one game's events (in seq order) and return its :class:`GameRecord`.

    With ``until_seq`` the fold stops after that event: the record then describes the
    game *at* that move (claims about the rest are not judged).
    """
    engine = GameEngine(verify_hashes=verify_hashes, observer=observer)
    apply = engine.apply
    if until_seq is None:
        for event in events:
            apply(event)
        return engine.record()
    for event in events:
        if event["seq"] > until_seq:
            break
        apply(event)
    engine.claimed = []
    engine.transfers_logged = False
    return engine.record()


#: a game id no event has (replay_interleaved's "no game yet")
_NO_GAME = object()


def replay_interleaved(
    events: Iterable[Event], *, verify_hashes: bool = True, consume: bool = False
) -> dict[str, GameRecord]:
    """Replay the events of many games in one pass, as a file holds them (games may
    interleave): each event goes to its game's engine as it comes, so no game's events
    are held in memory. Each game sees its events in the order given, exactly as
    :func:`replay` of that game's events would: the records are the same. Returns the
    records by game id, in the order the games first appear. ``consume``: the events
    are given up (parsed for this pass only), see :class:`GameEngine`."""
    engines: dict[str, GameEngine] = {}
    appliers: dict[str, Callable[[Event], None]] = {}  # game id -> its engine's bound apply
    get = appliers.get
    last_id: object = _NO_GAME  # files mostly hold a game's events together: its apply again
    apply: Callable[[Event], None]
    for event in events:
        game_id = event["game_id"]
        if game_id != last_id:
            last_id = game_id
            found = get(game_id)
            if found is None:
                engine = engines[game_id] = GameEngine(verify_hashes=verify_hashes,
                                                       consume=consume)
                found = appliers[game_id] = engine.apply
            apply = found
        apply(event)
    return {game_id: engine.record() for game_id, engine in engines.items()}


def state_at(events: Iterable[Event], seq: int, viewer: str | None = None) -> dict[str, Any]:
    """The game state right after event ``seq``; with ``viewer``, only what that player
    could see at that moment (own hand, table, discard pile, others' card counts)."""
    record = replay(events, until_seq=seq)
    if record.state is None:
        return {}
    return record.state.snapshot(viewer)
