"""The rulebook's sentence for every rule ID (generated from spec/RULES.md; regenerate
when the spec changes). Reports quote these next to a finding."""

import re

RULE_TEXT: dict[str, str] = {
    'C-DEAL': 'The deck is recorded, not re-generated (C-DEAL). `RoundStarted.deck` is the full shuffled order, top first. Dealing takes cards from the top, one at a time, seat by seat starting left of the dealer. A replay never calls a random generator.',
    'C-WILD': 'Wild cards (C-WILD) stand for exactly one card, fixed when the meld is made: a meld in the log is an ordered list (runs low to high), so the position of a wild fixes what it stands for. A run whose wild is at an end may name it with `"as"`; without it, a wild at the low end stands for the card below only when the high end is `A`.',
    'C-RESTOCK': 'Stock exhausted (C-RESTOCK, decided), unless a variant says otherwise: the discard pile except its top card becomes the new stock, in the order the platform records in a `StockReplenished` event. A replay takes that order from the event.',
    'C-CLAIM': 'Claims are checked, never trusted (C-CLAIM). Scores, payouts, removals and auto-plays that the platform logs are recomputed from the moves; a difference is a discrepancy finding, reported with both values. A claim the platform did not log is not a finding. `ChipsTransferred`: if a game logs any, all of its transfers together must equal, as a multiset of `(from, to, amount)`, every transfer the replay computes for the game (stakes, antes, penalties, payouts, rake); the first differing event, or `GameEnded` for a missing transfer, carries the finding. `GameEnded.net` is compared player by player.',
    'C-TURN': 'Turns (C-TURN): a move by a player who is not entitled to act at that moment is a violation (variants say who is: the player in turn, a buyer in a buy window, the holder of the next card). System events are never out of turn.',
    'C-HOLD': 'Cards in place (C-HOLD): a card an event takes from somewhere (hand, stock top, discard pile, a meld) must be there; if not, the log and the state have parted and the replay halts with an `integrity` finding.',
    'C-RUN': 'Runs (C-RUN): cards of one suit in consecutive rank. Ace is low (`A23`) or high (`QKA`) but never both: no wrap-around (`KA2` is illegal) unless a variant says so.',
    'C-SET': 'Sets (C-SET): cards of one rank.',
    'CL-DEAL': 'CL-DEAL: the first player (left of dealer) gets 15 cards, every other player 14 (seed): 14 circuits of one card each starting with the first player, then a 15th card to him (decided). The next card is turned face up to start the discard pile (decided); the rest is stock.',
    'CL-FIRST': 'CL-FIRST: the first player may not draw on the first turn; he discards one card (seed).',
    'CL-DRAW': 'CL-DRAW: every later turn starts with one draw: the top of the stock or the face-up top discard (seed).',
    'CL-NODISCARD-TAKEN': 'CL-NODISCARD-TAKEN: a card taken from the discard pile may not be discarded in the same turn (seed).',
    'CL-NODISCARD-JOKER': 'CL-NODISCARD-JOKER: a joker may never be discarded (seed).',
    'CL-DISCARD': 'CL-DISCARD: every turn ends with exactly one discard (seed).',
    'CL-MELDS': 'CL-MELDS: melds are runs (≥3 cards, one suit, consecutive) or sets (3–4 cards, one rank, all suits different) (seed). Jokers are wild in both (decided).',
    'CL-LONGRUN': 'CL-LONGRUN: at least one meld of a winning hand is a run of ≥4 cards (seed); jokers may stand in it (config `long_run_allows_joker`, default true).',
    'CL-RUMMY': 'CL-RUMMY: a player declares "Rummy" in his turn after his draw (the first player may on his first turn, without one): his 15 cards minus one discard are partitioned into valid melds covering all 14 (seed). The declared partition is in the event; it is checked, and an invalid declaration is a violation (no "best effort"). The winner takes the pot (seed), less the rake (config `rake_bps`, basis points, default 0; rake = ⌊pot × rake_bps / 10000⌋, paid from the pot to `house`).',
    'CL-POT': 'CL-POT: at `GameCreated`, each player stakes `stake` chips into the pot (decided).',
    'CL-FRESH': 'CL-FRESH: any player may press "Fresh" at any moment of a round, in turn or not (seed). When every active player has pressed it in the same round, the round is redealt (new `RoundStarted`, same first player). The first unanimous Fresh of a game also charges every active player one more `stake` (the pot doubles, seed); later unanimous Fresh only redeal (seed). Votes are cleared by a redeal.',
    'CL-TIMER': "CL-TIMER (seed): a turn has a base clock of 60 s if it is the player's first turn of the round and 30 s otherwise, then an extra clock of 60 s. The turn starts at the `ts` of the event that ended the previous turn (a discard, a declaration, an auto-play, a removal) or, for the first turn, of `RoundStarted` (decided). A move of the player in turn whose `ts` is later than turn start + base + extra is late (a violation if accepted).",
    'CL-AUTOPLAY': "CL-AUTOPLAY (seed): when both clocks run out, the system plays the turn for the player: draw from stock and discard the drawn card, or, if it is a joker, the highest non-joker card in hand (ranks as usual, then suits `C < D < H < S`) (decided). On the first player's first turn there is no draw: the highest non-joker card is discarded. An `AutoPlayed` event earlier than the clocks allow, or that plays other cards than this rule gives, is a violation.",
    'CL-STRIKES': "CL-STRIKES (seed): a player's first three timeouts in a game are auto-played (strikes 1–3); at the fourth he is removed instead (`PlayerRemoved`, reason `strikes`) and loses his stake; his cards leave play (decided). With one active player left, that player wins the pot at once. Otherwise play goes on with the next player (seed).",
    'CL-LEAVE': 'CL-LEAVE: a player who leaves (`PlayerLeft`, at any moment) is removed at once and forfeits his stake; if it was his turn, the next turn starts then (decided).',
    'CL-RESULT': 'CL-RESULT (decided): a classic game is one round (Fresh redeals restart it). Results: `winners` = the declarer or the last player standing; `net` = pot − rake − own stake(s) for the winner, minus the stake(s) paid for everyone else; `RoundEnded.scores` is `{}`.',
    'CL-NEXT': 'CL-NEXT: the next game at the table starts with the winner as first player (seed).',
    'R5-DRAW-STOCK': 'R5-DRAW-STOCK: a turn starts with a draw: the top stock card, or from the discard pile.',
    'R5-DRAW-PILE': 'R5-DRAW-PILE (seed): a player may take any card of the discard pile together with every card above it. `Drew.cards` lists the cards taken, deepest first.',
    'R5-USE-BOTTOM': 'R5-USE-BOTTOM (seed): if more than one card was taken, the deepest one must be used in the same turn: melded, laid off, or swapped for a joker on the table.',
    'R5-NODISCARD-TOP': 'R5-NODISCARD-TOP (seed): a single card taken from the pile may be kept but not discarded in the same turn; after taking several, any of them but the deepest may be discarded.',
    'R5-MELD': 'R5-MELD (seed): sets (3–4 of a rank) and runs (≥3, one suit, consecutive); no minimum value for a first meld. Jokers are wild.',
    'R5-LAYOFF': "R5-LAYOFF (seed): in his turn, after drawing, a player may add cards to any meld on the table, his own or another's, even before he has melded. Points of a laid-off card go to the player who laid it off.",
    'R5-SWAP': 'R5-SWAP (seed): a player may give the natural card a table joker stands for and take the joker into his hand.',
    'R5-DISCARD': 'R5-DISCARD: every turn ends with one discard. A player goes out by discarding his last card (he may not meld his last card without a discard) (seed).',
    'R5-END': 'R5-END (seed): the round ends when a player goes out, or when the stock is empty after a discard (decided: the player who drew the last stock card finishes his turn first).',
    'R5-VALUES': 'R5-VALUES (seed): 2–10 face value; J Q K 10; ace 11, but 1 in a run `A 2 3…`; a melded joker is worth the card it stands for. Left in hand at the end: ace and joker −15 each, others their face value as above (negative).',
    'R5-SCORE': 'R5-SCORE (seed): round score = value of cards the player melded or laid off − value of cards left in his hand. It can be negative.',
    'R5-GAME': "R5-GAME (seed): config `mode`: - `target` (fill the table): rounds go on until at least one player's total ≥ `target` (default 500); the highest total wins. Tied leaders (seed): players below the tie are eliminated and the tied players play more rounds until the tie breaks. - `rounds`: a fixed number of rounds (config `rounds`, 1–3 for quick games, seed); the highest total wins; a tie splits the prize equally (remainder chips go one each to the tied players in seat order, decided). - `tournament` (seed): after every round chips move (R5-CHIPS); a player with no chips left is out; the last player at the table wins.",
    'R5-POT': "R5-POT (decided): in `target` and `rounds` modes each player pays `stake` into the pot at the start and the winner takes the pot (a split as above on a tie). In `tournament` mode `stake` is each player's starting stack; chips move only between players, by R5-CHIPS, and `net` = final stack − `stake`.",
    'R5-CHIPS': "R5-CHIPS (seed): the round winner is the player with the highest round score. Each other player pays him (winner score − own score) × `chip_ratio` chips, capped at what he holds (decided). Test vectors from the seed: - ratio 3; winner 100; others 70 and 60 → they pay 90 and 120. - ratio 2; winner 60; others 0 and −10 → they pay 120 and 140. Tied round winners (decided): the losers' payments are split equally between them, remainder in seat order.",
    'LV-CONTRACT': "LV-CONTRACT (seed): to lay down, a player shows exactly the round's contract at once: 1. two sets; 2. one set + one run; 3. two runs; 4. three sets; 5. two sets + one run; 6. one set + two runs. Sets: ≥3 cards of a rank, naturals of different suits (config `set_distinct_suits`, default true). Runs: ≥4 cards, one suit, consecutive (seed).",
    'LV-WILD': 'LV-WILD (seed): a 2 stands for any card; a set needs ≥2 natural cards, a run ≥3.',
    'LV-ALLOUT': "LV-ALLOUT (decided, from the seed's card counts): in rounds 5 and 6 laying down must use the whole hand: in round 5 all cards but the one discarded, in round 6 every card (the player goes out without a discard).",
    'LV-BUY': 'LV-BUY (seed): the player after the discarder may take the discard as his draw. If he draws from the stock instead, the discard may be bought until he discards: the first other player to buy it takes it plus the top stock card as a penalty (`Bought`). Buys per player per round: unlimited (seed: "any number"), config `max_buys`. A player who has laid down may not buy, nor may the discarder buy back his own card (decided).',
    'LV-DRAW': 'LV-DRAW: a turn starts with one draw, stock top or discard top.',
    'LV-LAYOFF': 'LV-LAYOFF (seed): after he has laid down, in his later turns (decided), a player may add cards to any melds on the table, sets and runs alike.',
    'LV-RUMMY': 'LV-RUMMY (seed, interpreted): when a discard could have been laid off on a meld on the table, any other player who has laid down may call "Rummy" before the next player draws or a buy happens. He takes the card, lays it off, and then discards a card of his own.',
    'LV-DISCARD': 'LV-DISCARD: a turn ends with one discard, except a going-out in round 6 (LV-ALLOUT).',
    'LV-OUT': 'LV-OUT: the round ends when a player has no cards.',
    'LV-SCORE': 'LV-SCORE (seed): the others score what they hold: A and 2 = 25; 3–9 = 5; T J Q K = 10. The lowest total after round 6 wins; a tie shares the win (decided).',
    'MI-ANTE': 'MI-ANTE (seed): before each deal every player but the dealer puts 1 chip in the kitty, the dealer 2. Each player also puts `pay_ante` chips (config, default 1, decided) on each pay card. Chips on a pay card stay there until won (seed).',
    'MI-DEAL': 'MI-DEAL (seed): all 52 cards are dealt one at a time, starting left of the dealer, into one hand per player plus one extra hand, the widow, dealt as if it sat after the dealer (decided). Hands may differ in size.',
    'MI-WIDOW': 'MI-WIDOW (seed; decided timing and price): before the first card is played, any one player may buy the widow for `widow_price` chips (default 1) into the kitty; the first buyer takes it and his own hand becomes dead. A second purchase is a violation.',
    'MI-START': 'MI-START (seed): the player left of the dealer starts a sequence with a card of any suit, which must be his lowest card of that suit.',
    'MI-FOLLOW': 'MI-FOLLOW (seed): whoever holds the next card of that suit plays it; turns do not rotate. The platform logs each play; a play by anyone but the holder, or a holder who is skipped, is a violation.',
    'MI-STOP': 'MI-STOP (seed): the sequence stops when the next card is in the widow or dead hand, has been played, or the ace was played. The player who played the last card starts a new sequence with his lowest card of a suit different from the stopped one; if he has none, the right passes left (decided).',
    'MI-PENALTY': 'MI-PENALTY (seed): a player who starts a sequence with a card other than his lowest of that suit pays 1 chip to every other player. The play stands; it is not a finding (the rules allow it at a price), and the replay charges the penalty.',
    'MI-PAY': 'MI-PAY (seed): whoever plays a pay card takes the chips on it.',
    'MI-OUT': 'MI-OUT (seed): the first player to play all his cards wins the kitty. Chips on unplayed pay cards roll over to the next deal.',
    'MI-END': "MI-END (seed): the game lasts `deals` deals (config, default one per player); the dealer moves left each deal (decided). A deal's `winners` is the player who went out; the game's `winners` are the players with the highest `net` (decided). After the last, the chips left on all pay cards together are divided equally among all players; the remainder goes one chip each in seat order from left of the last dealer (decided).",
    'MI-POKER': 'MI-POKER (seed: "three in one"; config `three_in_one`, default false): before the stop phase (after any widow purchase) each player puts 1 chip in the poker pot and declares five cards of his hand; the best poker hand (standard ranking, A high, `A2345` the lowest straight) wins the pot; ties split, remainder one chip each in seat order from left of the dealer. Declared cards stay in the hand.',
}

LOG_RULE_TEXT: dict[str, str] = {
    'LOG-SEQ': 'Events of a game are numbered 0, 1, 2, ... with no gap, repeat or reorder (EVENTS.md).',
    'LOG-CHAIN': 'Each event carries prev_hash = the previous event\'s hash and hash = sha256(JCS(event)) (EVENTS.md).',
    'LOG-EVENT': 'Every event is valid for the contract and known to the game\'s variant (RULES.md §5).',
    'LOG-GAME': 'A game\'s log starts with GameCreated and holds one game (EVENTS.md).',
    'LOG-RULES': 'GameCreated.rules holds only the config keys RULES.md defines for the variant.',
}


def rule_text(rule: str) -> str:
    """The sentence behind a rule ID (empty if unknown)."""
    return RULE_TEXT.get(rule) or LOG_RULE_TEXT.get(rule, '')


_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z`\"])")
_LIST_MARK = re.compile(r"\s(\d+\.|-)$")


def rule_summary(rule: str, limit: int = 90) -> str:
    """The rule's text shortened for a table cell: its first sentence, cut at a word
    boundary with an ellipsis when longer than ``limit`` characters (a cut mid-word,
    such as "the player: dr", reads as a typo in a report)."""
    text = rule_text(rule)
    end = _SENTENCE_END.search(text)  # not "contract at once: 1. two sets"
    first = text if end is None else text[: end.start() + 1]
    if len(first) <= limit:
        return first
    cut = first[: limit - 1].rsplit(" ", 1)[0]
    cut = _LIST_MARK.sub("", cut).rstrip(" ,;:(-")  # no dangling "1." or "-" item mark
    return cut + "…"
