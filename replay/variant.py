"""The interface every variant implements, and the registry of variants.

A variant is the state machine of one game under one rulebook section. The engine
(:mod:`rummyguard.replay.engine`) owns everything that is the same for all variants —
the envelope, the hash chain, connections, chip claims and result claims — and hands
every other event to the variant's ``apply_<Type>`` method. A variant never touches the
engine's internals: it reports through :class:`GameContext` (findings, halts, chip
transfers) and answers the engine's questions (results, who may act, legal moves,
views). Adding a variant means adding a module; the core does not change.

Style (after PokerKit): for each move type ``T`` a variant has ``apply_T``: the rule
checks (reporting violations through the context) folded with the state change as the
platform applied it, in one pass, because the replay must go on after a violation.
:meth:`Variant.can` answers, without changing the state, whether a proposed move would be
clean: the same ``apply_T`` on a copy. :meth:`Variant.legal_moves` lists the clean moves
a player has now; the simulator chooses among them, so its games replay clean by
construction.
"""

from __future__ import annotations

import copy
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mypy_extensions import mypyc_attr

from ..events.timestamps import ts_millis
from .findings import DISCREPANCY, INTEGRITY, VIOLATION, Finding, Halt, Kind

Event = dict[str, Any]


@mypyc_attr(native_class=False)  # a plain class when compiled (setup.py): copies, pickles as is
@dataclass(slots=True)
class Transfer:
    """One chip movement the replay computes (RULES.md C-CLAIM)."""

    src: str
    dst: str
    amount: int
    reason: str
    seq: int

    def key(self) -> tuple[str, str, int]:
        return (self.src, self.dst, self.amount)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.src, "to": self.dst, "amount": self.amount, "reason": self.reason,
                "seq": self.seq}


@dataclass(slots=True)
class GameContext:
    """What a variant may do to the world outside its own state."""

    game_id: str
    seats: list[str]
    dealer: int
    stake: int
    seq: int = 0
    ts_ms: int = 0
    findings: list[Finding] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        """Copy and pickle as a call of the class (a compiled build's native class cannot
        be rebuilt otherwise; Variant.__reduce__)."""
        return (GameContext, (self.game_id, self.seats, self.dealer, self.stake, self.seq,
                              self.ts_ms, self.findings, self.transfers))

    def seat_of(self, player: str) -> int | None:
        try:
            return self.seats.index(player)
        except ValueError:
            return None

    def report(self, rule: str, message: str, kind: Kind = VIOLATION, seq: int | None = None) -> None:
        self.findings.append(Finding(self.seq if seq is None else seq, rule, kind, message))

    def violation(self, rule: str, message: str) -> None:
        self.report(rule, message, VIOLATION)

    def discrepancy(self, message: str, rule: str = "C-CLAIM") -> None:
        self.report(rule, message, DISCREPANCY)

    def integrity(self, rule: str, message: str) -> None:
        self.report(rule, message, INTEGRITY)

    def halt(self, rule: str, message: str) -> Halt:
        """Build the exception that stops the replay; use as ``raise ctx.halt(...)``."""
        return Halt(rule, message)

    def transfer(self, src: str, dst: str, amount: int, reason: str) -> None:
        """Record a chip movement (zero amounts are not movements and are skipped)."""
        if amount:
            self.transfers.append(Transfer(src, dst, amount, reason, self.seq))


class Variant(ABC):
    """One variant's rules as a state machine over events."""

    #: the ``variant`` value of GameCreated
    name: ClassVar[str]
    #: event types this variant understands beyond the engine's own
    event_types: ClassVar[frozenset[str]]
    #: the defaults of every config key of GameCreated.rules
    config_defaults: ClassVar[Mapping[str, Any]] = {}

    #: event type -> unbound ``apply_<Type>`` method, built once per class
    _handlers: ClassVar[dict[str, Callable[[Any, Event], None]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        types: frozenset[str] = getattr(cls, "event_types", frozenset())
        cls._handlers = {t: getattr(cls, "apply_" + t) for t in types if hasattr(cls, "apply_" + t)}

    def __init__(self, ctx: GameContext | None = None, rules: Mapping[str, Any] | None = None) -> None:
        if ctx is None:  # a bare instance, for __reduce__
            return
        self.ctx = ctx
        self.config = self.read_config(rules if rules is not None else {})

    # -- copy and pickle ---------------------------------------------------------------------
    # A compiled build (setup.py) makes the variants mypyc native classes, which have no
    # __dict__ and which copy and pickle cannot rebuild by themselves: a state is rebuilt
    # as a bare instance (no arguments: __init__ does nothing) given every attribute set.
    # The same code serves the plain-Python build, so both copy alike (:meth:`can`).
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (), self.__getstate__())

    def __getstate__(self) -> dict[str, Any]:
        cls = type(self)
        names: tuple[str, ...] | None = getattr(cls, "__mypyc_attrs__", None)  # compiled
        if names is None:
            names = tuple(n for c in cls.__mro__ for n in getattr(c, "__slots__", ()))
        state = dict(getattr(self, "__dict__", {}))
        for name in names:
            if name not in state and name != "__dict__" and hasattr(self, name):
                state[name] = getattr(self, name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    # -- configuration -----------------------------------------------------------------
    def read_config(self, rules: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with GameCreated.rules; unknown keys and wrong types are
        reported (LOG-RULES) and ignored so the replay can still go on. A ``null`` value
        means "not set", like a missing key (events/models.py): the default applies."""
        config = dict(self.config_defaults)
        for key, value in rules.items():
            if key not in self.config_defaults:
                self.ctx.integrity("LOG-RULES", f"unknown rules key {key!r} for {self.name}")
                continue
            if value is None:
                continue
            default = self.config_defaults[key]
            if type(value) is not type(default) and not (
                default is None or (isinstance(default, tuple) and isinstance(value, list))
            ):
                self.ctx.integrity(
                    "LOG-RULES", f"rules.{key} must be {type(default).__name__}, got {value!r}"
                )
                continue
            config[key] = tuple(value) if isinstance(value, list) else value
        return config

    # -- the fold ------------------------------------------------------------------------
    def apply(self, event: Event) -> None:
        """Apply one event (already past the engine's envelope checks)."""
        handler = self._handlers.get(event["type"])
        if handler is None:
            self.ctx.integrity("LOG-EVENT", f"{event['type']} is not an event of {self.name}")
            return
        handler(self, event)

    def can(self, player: str, event: Event) -> bool:
        """Whether ``event`` (a move of this variant, current version) made now by
        ``player`` would be clean: no finding and no halt. Asked of a copy of the state
        with a context of its own, so this state, its findings and its transfers never
        change; the answer is the one the replay would give, because it is the same
        ``apply_<Type>`` fold. The event's ``ts`` is the move's time (the clocks judge
        it); its ``actor`` is set to ``player``."""
        handler = self._handlers.get(event.get("type", ""))
        if handler is None:
            return False
        ctx = self.ctx
        probe_ctx = GameContext(ctx.game_id, list(ctx.seats), ctx.dealer, ctx.stake,
                                seq=ctx.seq + 1, ts_ms=ts_millis(event["ts"]) if "ts" in event
                                else ctx.ts_ms)
        probe = copy.deepcopy(self, {id(ctx): probe_ctx})
        try:
            handler(probe, {**event, "actor": player, "seq": probe_ctx.seq})
        except Halt:
            return False
        return not probe_ctx.findings

    # -- questions the engine and the tools ask ---------------------------------------------
    @abstractmethod
    def is_over(self) -> bool:
        """True once the game has ended by the rules."""

    @abstractmethod
    def winners(self) -> list[str]:
        """The game's winners by the rules (player ids), so far."""

    @abstractmethod
    def scores(self) -> dict[str, int]:
        """The game's totals as the variant counts them (RULES.md §5)."""

    def regroupable(self, transfer: Transfer) -> bool:
        """True for a computed transfer that belongs to a split the rules fix only in
        total (so many pool -> player decompositions are right): the claim check then
        compares such transfers by their totals per pool and per player."""
        return False

    @abstractmethod
    def round_result(self, round_no: int) -> tuple[list[str], dict[str, int]] | None:
        """``(winners, scores)`` of a finished round, or None if it has not ended."""

    @abstractmethod
    def to_act(self) -> list[str]:
        """Players entitled to make a move now (empty while the system must act)."""

    @abstractmethod
    def legal_moves(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        """Clean moves ``(type, payload)`` the player could make now (for the simulator)."""

    @abstractmethod
    def snapshot(self, viewer: str | None = None) -> dict[str, Any]:
        """The state as JSON-able data; with ``viewer`` only what that player could see.

        Keys every variant uses where they apply (the HTML page and the views read them):
        ``variant``, ``round``, ``dealer`` (player id), ``in_turn`` (player id or None),
        ``active`` (player ids), ``hands`` ({player: [cards]}; with a viewer only his
        own), ``hand_counts`` ({player: n}), ``stock_count``, ``stock`` (top first; only
        without a viewer), ``discard_pile`` (bottom first), ``melds`` ([{kind, cards,
        stands, owner}]; ``owner`` a player id), ``pots`` ({pool: chips}: ``pot``, ``kitty``, ``poker``,
        ``pay:AH``...), ``scores`` ({player: int}), ``over``, ``winners``. Variant-specific
        extras go under other keys (e.g. ``widow``, ``buy_window``).
        """

    # -- what the platform must do next (the simulator's driver asks these) --------------
    def deal_due(self) -> dict[str, Any] | None:
        """If a deal is due now: ``{"round", "dealer", "redeal", "cards"}`` where ``cards``
        is the multiset (ints) the platform shuffles into ``RoundStarted.deck``."""
        return None

    def restock_due(self) -> list[int] | None:
        """If the stock must be replenished now (C-RESTOCK): the cards to shuffle."""
        return None

    def rounds_finished(self) -> int:
        """How many rounds have ended by the rules (the driver logs a RoundEnded each)."""
        return 0


_REGISTRY: dict[str, str] = {
    "classic": "rummyguard.replay.rules.classic:ClassicRummy",
    "r500": "rummyguard.replay.rules.r500:Rummy500",
    "liverpool": "rummyguard.replay.rules.liverpool:Liverpool",
    "michigan": "rummyguard.replay.rules.michigan:Michigan",
}
_LOADED: dict[str, type[Variant]] = {}


def variant_class(name: str) -> type[Variant] | None:
    """The Variant class for a GameCreated ``variant`` value (None if not available)."""
    if name in _LOADED:
        return _LOADED[name]
    target = _REGISTRY.get(name)
    if target is None:
        return None
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    cls = getattr(module, attr)
    _LOADED[name] = cls
    return cls


__all__ = [
    "DISCREPANCY",
    "INTEGRITY",
    "VIOLATION",
    "Event",
    "GameContext",
    "Transfer",
    "Variant",
    "variant_class",
]
