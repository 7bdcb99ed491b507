"""Card notation (EVENTS.md "Cards") and the engine's integer encoding."""

from __future__ import annotations

import pytest

from rummyguard.events.cards import (
    JOKER,
    NCARDS,
    CardError,
    cards_of,
    counts_of,
    format_card,
    format_cards,
    is_card_code,
    legacy_to_code,
    parse_card,
    parse_cards,
    pretty_card,
    rank_of,
    standard_deck,
    suit_of,
)

ALL_CODES = [r + s for r in "23456789TJQKA" for s in "CDHS"] + ["JK"]


def test_every_code_round_trips_and_encoding_is_dense() -> None:
    ints = [parse_card(c) for c in ALL_CODES]
    assert ints == list(range(NCARDS))
    assert [format_card(i) for i in ints] == ALL_CODES
    assert parse_card("2C") == 0 and parse_card("AS") == 51 and parse_card("JK") == JOKER


def test_rank_and_suit() -> None:
    assert (rank_of(parse_card("TH")), suit_of(parse_card("TH"))) == (8, 2)
    assert (rank_of(parse_card("AS")), suit_of(parse_card("AS"))) == (12, 3)


@pytest.mark.parametrize("bad", ["1H", "10H", "th", "T", "JJ", "", "KX", "jk", " AS", 7, None])
def test_bad_codes_are_rejected_with_a_clear_error(bad: object) -> None:
    assert not is_card_code(bad)
    with pytest.raises(CardError, match="bad card code"):
        parse_card(bad)  # type: ignore[arg-type]


def test_bad_integer() -> None:
    with pytest.raises(CardError):
        format_card(53)
    with pytest.raises(CardError):
        format_card(-1)


def test_counts_round_trip_with_two_decks_and_jokers() -> None:
    deck = standard_deck(decks=2, jokers=4)
    counts = counts_of(deck)
    assert len(counts) == NCARDS
    assert counts[0] == 2 and counts[JOKER] == 4 and sum(counts) == 108
    assert cards_of(counts) == sorted(deck)
    assert format_cards(parse_cards(["KD", "JK", "2C"])) == ["KD", "JK", "2C"]


def test_pretty() -> None:
    assert pretty_card(parse_card("QD")) == "Q♦"
    assert pretty_card(JOKER) == "JK"


@pytest.mark.parametrize(
    ("legacy", "code"),
    [({"rank": "10", "suit": "hearts"}, "TH"), ({"rank": "Q", "suit": "spades"}, "QS"),
     ({"rank": "2", "suit": "clubs"}, "2C"), ({"rank": "A", "suit": "diamonds"}, "AD"),
     ({"rank": "joker"}, "JK")],
)
def test_legacy_notation(legacy: dict, code: str) -> None:
    assert legacy_to_code(legacy) == code


@pytest.mark.parametrize(
    "legacy",
    [{"rank": "1", "suit": "hearts"}, {"rank": "T", "suit": "hearts"},
     {"rank": "10", "suit": "H"}, {"rank": "joker", "suit": "hearts"}, {"rank": "10"}, {}],
)
def test_bad_legacy_cards(legacy: dict) -> None:
    with pytest.raises(CardError):
        legacy_to_code(legacy)
