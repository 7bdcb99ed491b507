"""Card notation: the one place that knows how a card is written (EVENTS.md "Cards").

Text form: rank ``2..9 T J Q K A`` + suit ``C D H S`` (``TH`` = ten of hearts); the
joker is ``JK``. The engine uses a compact integer: ``rank_index * 4 + suit_index``
for the 52 naturals (``2C`` = 0 ... ``AS`` = 51) and :data:`JOKER` = 52, so a hand is a
list of 53 counts and a multi-deck multiset costs nothing extra.

>>> parse_card("TH"), format_card(parse_card("TH"))
(34, 'TH')
>>> rank_of(parse_card("AS")), suit_of(parse_card("AS"))
(12, 3)
>>> pretty_card(parse_card("QD"))
'Q♦'
>>> parse_card("1H")
Traceback (most recent call last):
...
rummyguard.events.cards.CardError: bad card code '1H': expected rank 2-9/T/J/Q/K/A + suit C/D/H/S, or JK
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANKS = "23456789TJQKA"
SUITS = "CDHS"
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
JOKER = 52
NCARDS = 53  # 52 naturals + the joker slot

# Rank indexes (0-based, 2 = 0). The face value of a rank index r is r + 2 for 2..10.
R2, R3, R4, R5, R6, R7, R8, R9, RT, RJ, RQ, RK, RA = range(13)


class CardError(ValueError):
    """A card code that is not in the notation."""


_CODE_TO_INT: dict[str, int] = {
    r + s: ri * 4 + si for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
_CODE_TO_INT["JK"] = JOKER
_INT_TO_CODE: list[str] = [""] * NCARDS
for _code, _i in _CODE_TO_INT.items():
    _INT_TO_CODE[_i] = _code


def is_card_code(text: object) -> bool:
    """True if ``text`` is a valid card code."""
    return isinstance(text, str) and text in _CODE_TO_INT


def parse_card(code: str) -> int:
    """Card code -> integer; raises :class:`CardError` on anything else."""
    try:
        return _CODE_TO_INT[code]
    except (KeyError, TypeError):
        raise CardError(
            f"bad card code {code!r}: expected rank 2-9/T/J/Q/K/A + suit C/D/H/S, or JK"
        ) from None


def parse_cards(codes: Iterable[str]) -> list[int]:
    try:  # the replay's hot path: one dict look-up per card, no call per card
        return [_CODE_TO_INT[c] for c in codes]
    except (KeyError, TypeError):
        return [parse_card(c) for c in codes]  # raises CardError naming the bad code


def format_card(card: int) -> str:
    if not 0 <= card < NCARDS:
        raise CardError(f"bad card integer {card!r}")
    return _INT_TO_CODE[card]


def format_cards(cards: Iterable[int]) -> list[str]:
    return [_INT_TO_CODE[c] for c in cards]


def pretty_card(card: int) -> str:
    """Human form with a suit symbol: ``Q♦``, ``10♥`` is written ``T♥``, the joker stays ``JK``."""
    if card == JOKER:
        return "JK"
    code = _INT_TO_CODE[card]
    return code[0] + SUIT_SYMBOLS[code[1]]


def rank_of(card: int) -> int:
    """Rank index 0..12 (2..A); only for naturals."""
    return card >> 2


def suit_of(card: int) -> int:
    """Suit index 0..3 (C D H S); only for naturals."""
    return card & 3


def make_card(rank: int, suit: int) -> int:
    return rank * 4 + suit


def standard_deck(decks: int = 1, jokers: int = 0) -> list[int]:
    """The multiset of a game's cards, in a fixed order (not a shuffle)."""
    return [c for _ in range(decks) for c in range(52)] + [JOKER] * jokers


def counts_of(cards: Iterable[int]) -> list[int]:
    """Cards -> a list of 53 counts."""
    counts = [0] * NCARDS
    for c in cards:
        counts[c] += 1
    return counts


def cards_of(counts: Sequence[int]) -> list[int]:
    """53 counts -> sorted cards."""
    return [c for c in range(NCARDS) for _ in range(counts[c])]


# --- the legacy notation of Drew/Discarded v1 (EVENTS.md "Older versions") ---------

LEGACY_RANKS = {str(n): str(n) for n in range(2, 10)} | {
    "10": "T", "J": "J", "Q": "Q", "K": "K", "A": "A",
}
LEGACY_SUITS = {"clubs": "C", "diamonds": "D", "hearts": "H", "spades": "S"}


def legacy_to_code(card: dict) -> str:
    """``{"rank": "10", "suit": "hearts"}`` -> ``"TH"``; ``{"rank": "joker"}`` -> ``"JK"``.

    >>> legacy_to_code({"rank": "10", "suit": "hearts"})
    'TH'
    >>> legacy_to_code({"rank": "joker"})
    'JK'
    """
    rank = card.get("rank")
    if rank == "joker":
        if "suit" in card:
            raise CardError("a legacy joker has no suit")
        return "JK"
    if rank not in LEGACY_RANKS or card.get("suit") not in LEGACY_SUITS:
        raise CardError(f"bad legacy card {card!r}")
    return LEGACY_RANKS[rank] + LEGACY_SUITS[card["suit"]]
