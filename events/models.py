"""The event contract of spec/EVENTS.md as pydantic models: one model per type and version.

Every model is strict (no ``"7"`` -> 7, no ``true`` -> 1, no floats for ints) and
closed (an unknown field is an error), with size bounds on strings and lists, so that
anything that passes :func:`validate_event` can be trusted by the replay hot loop.

The union is discriminated by ``(type, v)``; :func:`validate_event` checks the type
and version first so that an unknown type or a version newer than we know gets its own
precise reason instead of a generic union error.

Readings of EVENTS.md where it is terse (each pinned by tests/test_audit_events.py):

- Integers: every integer of an event lies within +-(2**53 - 1) (I-JSON's exact range),
  GameCreated.rules values and ``v`` included; beyond it JCS would not write the
  integer's digits (and orjson reads such a ``v`` as a float: ``invalid``, not
  ``future_version``, on every path).
- Sizes: the contract gives none but "1-64 chars" for ids; the project's bounds (``seq``
  up to 10,000,000, a deck up to 1,024 cards, up to 8 seats, free text up to 256 chars,
  ...) are far above any real game and stated in the JSON Schemas (``rummyguard schema``),
  which also state the ``ts`` format, the ``as`` keys and who the actor must be.
- ``ts``: exactly ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (upper-case ``T`` and ``Z``, no offset, no
  leap second): the spec's "RFC 3339 UTC with milliseconds" and its example.
- ``prev_hash`` / ``hash``: lower-case hex, as ``hashlib`` writes it; ``null`` = absent.
- String lengths ("1-64 chars") count Unicode code points.
- Legacy cards (v1): a natural card has rank and suit, a joker ``{"rank": "joker"}`` and
  no suit ("suit then absent"); anything else is invalid here rather than failing later
  in the upcaster.
- ``as`` keys are card positions in ASCII digits, no leading zero.
- ``GameCreated.rules``: a value may be ``null``, meaning "not set" (the default applies).
- ``ChipsTransferred.transfers`` may be empty (a claim that nothing moved). A transfer's
  ``amount`` is >= 0 (``from``/``to`` give the direction): a negative one is ``invalid``,
  quarantined by ingest and a LOG-EVENT finding in a replay, not a claim to recompute.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    create_model,
)

# --- bounds ---------------------------------------------------------------------------
MAX_ID = 64
MAX_TEXT = 256
MAX_PLAYERS = 8
MAX_DECK = 1024  # the largest shuffled deck a RoundStarted may carry
MAX_LIST = 4096
MAX_RULES_KEYS = 64

SYSTEM_ACTOR = "system"
HEX64 = r"^[0-9a-f]{64}$"
GENESIS_HASH = "0" * 64


class IngestLinked(dict):  # type: ignore[type-arg]
    """An event of a game the store chained at ingest (EVENTS.md: "A producer may leave
    both hash fields out; the store then chains the events itself at ingest"): stored, with
    the ``prev_hash``/``hash`` the store gave it, not its producer; or kept back at ingest
    (quarantined), with neither.

    The replay of the store checks these links as the store's own chain (an edit of the
    store reads as LOG-CHAIN) but judges the producer's chain as the file's replay does,
    where the same events carry no hash fields: a quarantined line the producer did chain
    is then the mixed chain it is in the file, and an unlinked quarantined line leaves the
    store's chain as it was (``replay/verify.py`` ``merge_store_lines``). A dict subclass,
    so every reader and serializer takes it as the event it is; a copy (``dict(e)``) is a
    plain event again.
    """

    __slots__ = ()

_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def _check_ts(ts: str) -> str:
    if not _TS_RE.match(ts):
        raise ValueError("timestamp must be RFC 3339 UTC with milliseconds, e.g. 2026-11-29T18:00:00.000Z")
    try:
        datetime.fromisoformat(ts)
    except ValueError as exc:
        raise ValueError(f"timestamp is not a real date/time: {exc}") from None
    return ts


def _check_index_keys(value: dict[str, str] | None) -> dict[str, str] | None:
    # ASCII digits only: str.isdigit() also takes "١" or "²", which are no card positions
    # (and which the compiled fast path, rightly, rejects).
    if value is not None:
        for key in value:
            if not (key.isascii() and key.isdigit()) or (len(key) > 1 and key[0] == "0"):
                raise ValueError(f"`as` keys are card positions (\"0\", \"1\", ...), got {key!r}")
    return value


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Card = Annotated[str, Field(pattern=r"^(?:[2-9TJQKA][CDHS]|JK)$")]
MAX_INT = 2**53 - 1
Count = Annotated[int, Field(ge=0, le=MAX_INT)]
Chips = Annotated[int, Field(ge=-MAX_INT, le=MAX_INT)]
#: The JSON Schemas (``rummyguard schema``, for producers to validate against) carry
#: the constraints the after-validators check, so a line that passes them is not
#: quarantined for its ``ts`` format, its ``as`` keys or its actor.
Timestamp = Annotated[str, Field(max_length=24, json_schema_extra={"pattern": _TS_RE.pattern}),
                      AfterValidator(_check_ts)]
Hex64 = Annotated[str, Field(pattern=HEX64)]
Pool = Annotated[str, Field(min_length=1, max_length=MAX_ID + 8)]  # player id or pay:<card>


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Empty(_Strict):
    """A payload with no fields."""


# --- payloads: player events ----------------------------------------------------------
class PlayerConnectedV1(_Strict):
    ip_hash: Text
    device_hash: Text
    client: Text


class DrewV2(_Strict):
    source: Literal["stock", "discard"]
    cards: Annotated[list[Card], Field(min_length=1, max_length=MAX_DECK)]


class LegacyNatural(_Strict):
    """A v1 natural card: rank and suit, both required."""

    rank: Literal["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    suit: Literal["clubs", "diamonds", "hearts", "spades"]


class LegacyJoker(_Strict):
    """A v1 joker: ``{"rank": "joker"}``, "suit then absent" (EVENTS.md)."""

    rank: Literal["joker"]


#: Two closed shapes rather than one model with an optional suit: a natural card
#: without a suit, or a joker with one, is not a card and must be rejected here, at the
#: edge, not crash the v1 -> v2 upcaster at ingest or replay.
LegacyCard = LegacyNatural | LegacyJoker


class DrewV1(_Strict):
    from_: Literal["deck", "pile"] = Field(alias="from")
    card: LegacyCard


class DiscardedV2(_Strict):
    card: Card


class DiscardedV1(_Strict):
    card: LegacyCard


class MeldSpec(_Strict):
    kind: Literal["run", "set"]
    cards: Annotated[list[Card], Field(min_length=1, max_length=64)]
    as_: Annotated[
        dict[str, Card] | None,
        Field(alias="as", max_length=64,
              json_schema_extra={"propertyNames": {"pattern": r"^(?:0|[1-9][0-9]*)$"}}),
        AfterValidator(_check_index_keys),
    ] = None


class MeldedV1(MeldSpec):
    pass


class LaidDownV1(_Strict):
    melds: Annotated[list[MeldSpec], Field(min_length=1, max_length=16)]


class LaidOffV1(_Strict):
    card: Card
    meld: Count
    end: Literal["low", "high"] | None = None


class JokerSwappedV1(_Strict):
    meld: Count
    card: Card


class DeclaredRummyV1(_Strict):
    melds: Annotated[list[MeldSpec], Field(min_length=1, max_length=16)]
    discard: Card


class BoughtV1(_Strict):
    card: Card
    penalty: Card


class RummyCalledV1(_Strict):
    card: Card
    meld: Count
    end: Literal["low", "high"] | None = None
    discard: Card


class WidowBoughtV1(_Strict):
    price: Count


class CardPlayedV1(_Strict):
    card: Card


class PokerHandDeclaredV1(_Strict):
    cards: Annotated[list[Card], Field(min_length=5, max_length=5)]


# --- payloads: system decisions and claims ------------------------------------------
#: A value of GameCreated.rules. Integers stay within +-(2**53 - 1), as everywhere in an
#: event: beyond that JCS (RFC 8785, ECMAScript numbers) no longer writes the integer's
#: digits, so the hash a producer computes would not be "plain sorted-key compact JSON".
#: ``null`` is accepted and means "not set" (the default applies), like a missing key.
RuleValue = Chips | bool | Text | list[Text] | list[Chips] | None


class GameCreatedV1(_Strict):
    variant: Literal["classic", "r500", "liverpool", "michigan"]
    table_id: Id
    seats: Annotated[list[Id], Field(min_length=2, max_length=MAX_PLAYERS)]
    dealer: Count
    stake: Count
    rules: Annotated[dict[Annotated[str, Field(max_length=MAX_ID)], RuleValue],
                     Field(max_length=MAX_RULES_KEYS)]


class RoundStartedV1(_Strict):
    round: Annotated[int, Field(ge=1, le=10_000)]
    dealer: Count
    deck: Annotated[list[Card], Field(min_length=1, max_length=MAX_DECK)]
    redeal: Count


class StockReplenishedV1(_Strict):
    stock: Annotated[list[Card], Field(max_length=MAX_DECK)]


class AutoPlayedV1(_Strict):
    player: Id
    drew: Card | None
    discarded: Card
    strike: Annotated[int, Field(ge=1, le=1000)]


class PlayerRemovedV1(_Strict):
    player: Id
    reason: Literal["strikes", "left", "bust"]


class Transfer(_Strict):
    from_: Pool = Field(alias="from")
    to: Pool
    amount: Count
    reason: Text


class ChipsTransferredV1(_Strict):
    # An empty list is a claim that no chips moved: odd, but nothing in EVENTS.md forbids
    # it, and quarantining it would cut the rest of its game off at a sequence gap.
    transfers: Annotated[list[Transfer], Field(max_length=MAX_LIST)]


class RoundEndedV1(_Strict):
    round: Annotated[int, Field(ge=1, le=10_000)]
    winners: Annotated[list[Id], Field(max_length=MAX_PLAYERS)]
    scores: Annotated[dict[Id, Chips], Field(max_length=MAX_PLAYERS)]


class GameEndedV1(_Strict):
    winners: Annotated[list[Id], Field(max_length=MAX_PLAYERS)]
    net: Annotated[dict[Id, Chips], Field(max_length=MAX_PLAYERS)]


# --- the catalog ----------------------------------------------------------------------
PLAYER_TYPES: dict[tuple[str, int], type[BaseModel]] = {
    ("PlayerConnected", 1): PlayerConnectedV1,
    ("PlayerDisconnected", 1): Empty,
    ("PlayerLeft", 1): Empty,
    ("Drew", 1): DrewV1,
    ("Drew", 2): DrewV2,
    ("Discarded", 1): DiscardedV1,
    ("Discarded", 2): DiscardedV2,
    ("Melded", 1): MeldedV1,
    ("LaidDown", 1): LaidDownV1,
    ("LaidOff", 1): LaidOffV1,
    ("JokerSwapped", 1): JokerSwappedV1,
    ("DeclaredRummy", 1): DeclaredRummyV1,
    ("FreshPressed", 1): Empty,
    ("Bought", 1): BoughtV1,
    ("RummyCalled", 1): RummyCalledV1,
    ("WidowBought", 1): WidowBoughtV1,
    ("CardPlayed", 1): CardPlayedV1,
    ("PokerHandDeclared", 1): PokerHandDeclaredV1,
}
SYSTEM_TYPES: dict[tuple[str, int], type[BaseModel]] = {
    ("GameCreated", 1): GameCreatedV1,
    ("RoundStarted", 1): RoundStartedV1,
    ("StockReplenished", 1): StockReplenishedV1,
    ("AutoPlayed", 1): AutoPlayedV1,
    ("PlayerRemoved", 1): PlayerRemovedV1,
    ("ChipsTransferred", 1): ChipsTransferredV1,
    ("RoundEnded", 1): RoundEndedV1,
    ("GameEnded", 1): GameEndedV1,
}
PAYLOADS: dict[tuple[str, int], type[BaseModel]] = PLAYER_TYPES | SYSTEM_TYPES
SYSTEM_TYPE_NAMES = frozenset(t for t, _ in SYSTEM_TYPES)
TYPE_NAMES = frozenset(t for t, _ in PAYLOADS)
#: The newest version of each type: what the engine reads after upcasting.
CURRENT_VERSION: dict[str, int] = {}
for _t, _v in PAYLOADS:
    CURRENT_VERSION[_t] = max(CURRENT_VERSION.get(_t, 0), _v)


class Envelope(_Strict):
    """The fields every event has (EVENTS.md "The envelope")."""

    event_id: Id
    game_id: Id
    seq: Annotated[int, Field(ge=0, le=10_000_000)]
    type: str
    v: Annotated[int, Field(ge=1)]
    ts: Timestamp
    actor: Id
    payload: dict[str, Any]
    prev_hash: Hex64 | None = None
    hash: Hex64 | None = None


def _event_model(type_name: str, version: int, payload: type[BaseModel]) -> type[BaseModel]:
    # The actor rule is checked by validate_event (reason ``bad_actor``), not by the
    # model; the schema states it for producers.
    actor_schema = ({"const": SYSTEM_ACTOR} if type_name in SYSTEM_TYPE_NAMES
                    else {"not": {"const": SYSTEM_ACTOR}})
    fields: dict[str, Any] = {
        "type": (Literal[type_name], ...),  # type: ignore[valid-type]
        "v": (Literal[version], ...),  # type: ignore[valid-type]
        "actor": (Annotated[str, Field(min_length=1, max_length=MAX_ID,
                                       json_schema_extra=actor_schema)], ...),
        "payload": (payload, ...),
    }
    return create_model(f"{type_name}V{version}Event", __base__=Envelope, **fields)


EVENT_MODELS: dict[tuple[str, int], type[BaseModel]] = {
    key: _event_model(key[0], key[1], payload) for key, payload in PAYLOADS.items()
}


def _tag(value: Any) -> str | None:
    if isinstance(value, dict):
        return f"{value.get('type')}/{value.get('v')}"
    return f"{getattr(value, 'type', None)}/{getattr(value, 'v', None)}"


#: The discriminated union over every (type, version) of the catalog.
EventUnion = Annotated[
    Union[  # noqa: UP007 - a runtime-built union needs the subscript form
        tuple(Annotated[model, Tag(f"{t}/{v}")] for (t, v), model in EVENT_MODELS.items())
    ],
    Discriminator(_tag),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(EventUnion)


class EventError(ValueError):
    """An event that breaks the contract; ``reason`` is a short machine code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"] if not str(p).endswith("Event"))
        loc = re.sub(r"^[A-Za-z]+/\d+\.?", "", loc)
        parts.append(f"{loc or '(event)'}: {err['msg']}")
    return "; ".join(parts)


def validate_event(obj: Any) -> BaseModel:
    """Validate one decoded JSON value against the contract.

    Raises :class:`EventError` whose ``reason`` is one of ``not_object``,
    ``unknown_type``, ``future_version``, ``bad_actor`` or ``invalid`` (missing,
    extra, mistyped or oversize field, bad card code, bad timestamp, ...).

    >>> validate_event({"type": "Nope", "v": 1}).type
    Traceback (most recent call last):
    ...
    rummyguard.events.models.EventError: unknown_type: unknown event type 'Nope'
    """
    if not isinstance(obj, dict):
        raise EventError("not_object", f"an event must be a JSON object, got {type(obj).__name__}")
    type_name = obj.get("type")
    version = obj.get("v")
    if not isinstance(type_name, str) or type_name not in TYPE_NAMES:
        # no `type`, or not a string: no type of the catalog either (the replay skips the
        # line as it does an unknown type), said in words, not as Python's None
        detail = ("the event has no `type`" if "type" not in obj
                  else f"`type` must be a string, got {json.dumps(type_name, default=repr)}"
                  if not isinstance(type_name, str) else f"unknown event type {type_name!r}")
        raise EventError("unknown_type", detail)
    if type(version) is not int or not 1 <= version <= MAX_INT:
        # beyond 2**53 - 1 not an integer JSON readers agree on (orjson reads a float)
        got = "nothing (no `v`)" if "v" not in obj else json.dumps(version, default=repr)
        raise EventError("invalid", f"v: must be an integer from 1 to 2**53 - 1, got {got}")
    if (type_name, version) not in PAYLOADS:
        current = CURRENT_VERSION[type_name]
        if version > current:
            raise EventError(
                "future_version", f"{type_name} v{version} is newer than the known v{current}"
            )
        raise EventError("invalid", f"{type_name} has no version {version}")
    try:
        event = _ADAPTER.validate_python(obj)
    except ValidationError as exc:
        raise EventError("invalid", _describe(exc)) from None
    is_system = type_name in SYSTEM_TYPE_NAMES
    if is_system != (event.actor == SYSTEM_ACTOR):
        want = "'system'" if is_system else "a player id"
        raise EventError("bad_actor", f"{type_name} must have actor {want}, got {event.actor!r}")
    return event


def event_json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every type and version, keyed ``Type.vN``."""
    return {
        f"{t}.v{v}": model.model_json_schema(by_alias=True)
        for (t, v), model in sorted(EVENT_MODELS.items())
    }
