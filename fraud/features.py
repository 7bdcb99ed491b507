"""Features: per player and per pair, from the fact tables, in DuckDB SQL (step 5).

Every signal is measured *relative to the same player's behaviour toward third parties
in comparable situations*, and carries its evidence count, so a strong-looking value
built on three discards is visibly thin:

- feeding (a -> b): how much more a's discards help b's hidden hand than a's other
  options would have (``gain - alt_gain``), compared with the same excess toward a's
  other opponents; as a Welch t statistic (``feed_t``) with the count ``feed_n``;
  plus how much more often b picks up a's discards than other players' (``take_lift``).
  The sharper form holds a's own interest fixed: among options worth the same to a (a
  free choice), does a pick the card b needs (``tie_t``: next seat; ``tie_any_t``: any
  seat — soft play tilts free choices toward a partner wherever he sits).
- going-out timing (a -> b): when a ends a round, the points b is left holding against
  the others at the table (``out_t``).
- result with vs without (a -> b): a's chips per stake with b seated minus without
  (``net_with``), and the share of shared games a lost and b won (``lose_to``).
- soft play (a -> b): a declines useful pile cards discarded by b more often than useful
  cards discarded by others (``soft_lift``, ``soft_t``, ``soft_n``).
- directed chip flow beyond deal strength: chips that went from a to b (pot-mediated
  flows) minus what b's dealt hands made expected, per chip staked (``flow_excess``).
- hidden-card knowledge (player): discards that avoid helping opponents' hidden hands
  more than the player's options allow (``hc_excess``, ``hc_t``), and draws from the
  stock that follow the hidden stock top's value once the visible pile top's value is
  held fixed (``stock_informed``).
- timing (player): spread of log think time (``think_sd``), its correlation with the
  decision difficulty (``think_diff_corr``).
- timeouts and Fresh (player): auto-play rate, use of the extra clock, disconnects,
  Fresh presses and the hand strength at a Fresh press; timeouts / Fresh presses in
  the same games as one partner beyond both players' own rates (pair ``auto_co``,
  ``fresh_co``; player: the strongest partner, ``auto_co_max``, ``fresh_co_max``).
- hidden-card knowledge, the clean form (player): on free choices where the public
  record (pile cards the next player took) gives no preference, how much less the
  chosen card helps the next player's hidden hand (``hc_tie``, ``hc_tie_t``); and on
  close draw calls, the hidden stock top's value when he drew stock vs took the pile
  (``stock_edge``).
- timeouts on a dropped connection (player; classic, the only variant with a clock): an
  auto-play his own disconnect preceded *in the same turn* (between the turn's start,
  CL-TIMER, and the auto-play) — per clocked turn (``auto_disc_rate``, count
  ``n_auto_disc`` of ``n_clock_turns``), per auto-play shrunk toward the population's share
  (``auto_disc_share``), and as a pooled z against the population's rate per clocked turn
  (``auto_disc_z``); and the hand he let the clock run out on: the meld distance at his
  auto-plays against the population's hands at the same point of a game (variant, hand
  size, turn), pooled (``auto_hand_z``). Honest players drop too (long pauses, network
  trouble) and then time out at any hand; a timeout abuser drops when the turn is not
  worth playing. The *timing* of the drop within the turn is no signal: an abuser's drop
  comes after a think time like anybody's.
- throwing (a -> b): a discards cards of his own melds more often with b seated than
  without (``throw_with``).
- co-seating beyond the lobby (pair): games together over the number expected from both
  players' activity in the same hours (``co_lift``).
- shared devices / IPs (pair): distinct device and IP hashes both accounts connected from.
- pooled evidence (round 3; pair: ``tie_z``, ``gain_z``, ``take_z``, ``collude_z``,
  ``throw_z``, ``left_z``, ``lose_z``; player: ``stock_z``, ``hc_tie_z``, ``hc_all_z``,
  ``mi_tie_z``, ``mi_reach_z``, ``hc_z``): sums of per-decision excesses against the
  population's null (per variant and table size), over their spread — z statistics that
  grow with consistent evidence and stay near 0 on thin evidence. The two-sample forms
  above compare with the same player's behaviour toward others, which vanishes for a
  pair that always sits together (DETECTION.md, round 3).
- Rummies held back (pair, classic, session 12: ``hold_z``, ``hold_near_z``, ``hold_n``):
  at a's decisions where he could have declared Rummy, how often he discarded instead with
  b seated (``hold_z``) and with b within two cards of going out himself (``hold_near_z``:
  soft play's "delay going out"), against a's own rate at his other such decisions,
  shrunk toward the population's (weak players miss Rummies anywhere); a score statistic,
  the stronger direction. ``hold_z`` is also the dumper's fourth lever in ``dump_z``.
- Michigan starts, round 4 (player: ``mi_hb_z``, folded into ``hc_z`` in place of
  ``mi_reach_z``): how often he chose the very start a player who sees every hand picks,
  beyond the population's rate for starts that looked the same to him (DETECTION.md,
  round 4).
- session 4, thin evidence (player): ``hc_lr``, the log likelihood ratio "cheater of
  unknown intensity" vs honest over his independent hidden-card z's (stock draws;
  next-seat discards that were free choices with a flat public record, ``hc_tie_z``, and
  the other next-seat discards, ``hc_oth_z`` over ``hc_oth_n``, at a smaller shift — since
  session 29; session 28 read the free choices only, earlier sessions all next-seat
  discards as one z; and Michigan starts), each expected to shift by its per-decision
  effect times sqrt(decisions); averaged over a broad range of intensities. A z of 2.5 on
  30 decisions is what a mild cheater shows, on 300 it is less than any cheater would:
  a z alone cannot tell the two apart. The shifts here are *priors* (no label enters the
  features); the supervised model re-estimates them from its training world's cheaters
  and recomputes the ratio from the z's and their counts (``n_stock_dec``,
  ``hc_tie_n``, ``hc_oth_n``, ``n_hb_starts``; session 15,
  :func:`rummyguard.fraud.models.hc_shifts`). ``think_sd_all``: the spread of log think time
  within each (variant, move kind) of the player, pooled over all of them (so Michigan's
  card plays count too: a Michigan-only bot had no timing signal at all), shrunk toward
  the population's spread by 3 moves.

Inputs: a DuckDB connection holding ``fraud.moves`` ... (see :mod:`.facts`). Outputs are
polars DataFrames ordered by player (pair: ``p1 < p2``) — byte-stable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb
import polars as pl

#: The definition of the feature tables below. Bump it whenever a feature's column set
#: or meaning changes: the built-in model's shipped training tables (fraud/builtin.py)
#: record the version they were computed with and are refused under another one.
FEATURES_VERSION = 14  # 14: hc_lr reads the other next-seat discards too (hc_oth_z, hc_oth_n)
# 13: hc_lr's discards are the free choices (hc_tie_z, hc_tie_n)
# 12: mi_reach_z against starts with as many cards above the run (and seats);
# 11: a Michigan start's look-alikes match his cards in the suit (facts);
# 10: hc_lr's evidence counts (n_stock_dec, n_next_disc, n_hb_starts)
# 9: Rummies held back (hold_z, hold_near_z; dump_z's fourth lever)
# 8: the facts audit (meld distance, offsets, public record, declarations)

#: player-level feature columns (model inputs), in order
PLAYER_FEATURES: tuple[str, ...] = (
    "n_games", "win_rate", "win_resid", "net_per_stake",
    "think_sd", "think_sd_draw", "think_diff_corr", "think_median_log", "slow_share",
    "extra_clock_share", "auto_rate", "disconnect_rate", "left_rate", "fresh_rate",
    "fresh_dist_rel", "hc_excess", "hc_t", "hc_next_excess", "stock_informed", "pick_gain",
    "keep_gain", "n_devices", "n_ips", "device_sharers",
    "hc_tie", "hc_tie_t", "hc_tie_n", "hc_pub", "stock_edge", "auto_co_max", "fresh_co_max",
    "auto_disc_rate", "auto_disc_share", "auto_disc_z", "auto_hand_z",
    "stock_z", "hc_tie_z", "hc_all_z", "hc_z", "mi_tie_z", "mi_reach_z", "mi_hb_z",
    "hc_lr", "think_sd_all",
)

#: pair-level feature columns (model inputs), in order
PAIR_FEATURES: tuple[str, ...] = (
    "co_games", "co_lift", "feed_t", "feed_lift", "feed_n", "take_lift", "keep_lift",
    "soft_t", "soft_lift", "soft_n", "flow_excess", "flow_net", "flow_z", "left_with",
    "shared_devices", "shared_ips", "win_with",
    "tie_t", "tie_n", "tie_any_t", "out_t", "out_n", "net_with", "lose_to", "auto_co",
    "fresh_co", "co_share", "throw_with",
    "tie_z", "tie_z_dir", "gain_z", "take_z", "take_z_dir", "collude_z", "hu_games", "lose_z",
    "left_z", "throw_z", "dump_z", "hold_z", "hold_near_z", "hold_n",
)

_PLAYER_SQL = """
WITH pg AS (
    SELECT *, floor(coalesce(deal_dist, 8))::INT AS dd FROM fraud.player_games
),
pwin AS (  -- P(win | table size, deal strength): what the deal explains
    SELECT n_seats, dd, avg(won::INT)::DOUBLE AS p_win FROM pg GROUP BY n_seats, dd
),
res AS (
    SELECT pg.player, count(*) AS n_games, avg(won::INT) AS win_rate,
           avg(won::INT - p_win) AS win_resid,
           avg(net / greatest(stake, 1)) AS net_per_stake,
           avg(left_game::INT) AS left_rate, avg(deal_dist) AS deal_dist
    FROM pg JOIN pwin USING (n_seats, dd) GROUP BY pg.player
),
mv AS (
    SELECT player, type, think_ms, difficulty, dist, auto, ln(greatest(think_ms, 1)) AS lt
    FROM fraud.moves WHERE seat >= 0
),
tim AS (
    SELECT player,
        count(*) FILTER (WHERE type IN ('Discarded', 'AutoPlayed')) AS n_turns,
        count(*) FILTER (WHERE type = 'Discarded' AND NOT auto) AS n_timed,
        stddev_samp(lt) FILTER (WHERE type = 'Discarded' AND think_ms < 30000) AS think_sd,
        stddev_samp(lt) FILTER (WHERE type = 'Drew' AND think_ms < 30000) AS think_sd_draw,
        corr(lt, difficulty) FILTER (WHERE type = 'Discarded' AND think_ms < 30000) AS think_diff_corr,
        median(lt) FILTER (WHERE type = 'Discarded') AS think_median_log,
        avg((think_ms > 20000)::INT) FILTER (WHERE type IN ('Drew', 'Discarded')) AS slow_share,
        avg((think_ms > 30000)::INT) FILTER (WHERE type IN ('Drew', 'Discarded')) AS extra_clock_share,
        count(*) FILTER (WHERE auto) AS n_auto,
        count(*) FILTER (WHERE type = 'FreshPressed') AS n_fresh,
        avg(dist) FILTER (WHERE type = 'FreshPressed') AS fresh_dist
    FROM mv GROUP BY player
),
hc AS (
    SELECT player, count(*) AS hc_n, avg(gain - alt_gain) AS hc_excess,
           stddev_samp(gain - alt_gain) AS hc_sd,
           avg(gain - alt_gain) FILTER (WHERE "offset" = 1) AS hc_next_excess,
           avg(keep_gain) AS keep_gain
    FROM fraud.discards GROUP BY player
),
pk AS (
    SELECT player, source, pile_gain, stock_gain, gain,
           (source = 'stock')::INT::DOUBLE AS is_stock
    FROM fraud.pickups WHERE stock_gain >= 0 AND pile_gain >= 0
),
pkr AS (
    SELECT player, stock_gain, gain,
           is_stock - avg(is_stock) OVER (PARTITION BY player, pile_gain) AS r
    FROM pk
),
pks AS (
    SELECT player, count(*) AS n_pickups,
           CASE WHEN isnan(corr(r, stock_gain::DOUBLE)) THEN 0
                ELSE coalesce(corr(r, stock_gain::DOUBLE), 0) END AS stock_informed,
           avg(gain) AS pick_gain
    FROM pkr GROUP BY player
),
ses AS (
    SELECT player, count(DISTINCT device_hash) AS n_devices, count(DISTINCT ip_hash) AS n_ips,
           count(*) FILTER (WHERE event = 'disconnect') AS n_disc
    FROM fraud.sessions GROUP BY player
),
dev AS (
    SELECT DISTINCT player, device_hash FROM fraud.sessions WHERE device_hash IS NOT NULL
),
dsh AS (
    SELECT a.player, count(DISTINCT b.player) AS device_sharers
    FROM dev a JOIN dev b ON a.device_hash = b.device_hash AND a.player <> b.player
    GROUP BY a.player
),
popfresh AS (SELECT avg(deal_dist) AS m FROM fraud.player_games),
-- hidden-card knowledge, the clean form: free choices (options worth the same to him)
-- where the public record gives no preference; how much less the chosen card helps
-- the next player's hidden hand than the equal options would have
tie AS (
    SELECT player, count(*) AS hc_tie_n, avg(tie_alt - gain) AS hc_tie,
           stddev_samp(tie_alt - gain) AS tie_sd
    FROM fraud.discards WHERE "offset" = 1 AND tie_n >= 2 AND pub_flat GROUP BY player
),
tpub AS (  -- the same, against what the next player is publicly known to hold
    SELECT player, avg(pub_tie_alt - pub_gain) AS hc_pub
    FROM fraud.discards WHERE "offset" = 1 AND tie_n >= 2 GROUP BY player
),
edge AS (  -- close calls (visible pile top of some use): stock top value when he drew stock
    SELECT player,
           avg(stock_gain) FILTER (WHERE source = 'stock')
             - avg(stock_gain) FILTER (WHERE source = 'discard') AS stock_edge
    FROM fraud.pickups WHERE pile_gain = 1 AND stock_gain >= 0 GROUP BY player
),
ev AS (  -- per game: did the player time out / press Fresh
    SELECT game_id, player, (autoplays > 0)::INT AS a, (fresh > 0)::INT AS f FROM fraud.player_games
),
evr AS (SELECT player, avg(a) AS ra, avg(f) AS rf FROM ev GROUP BY player),
co_ev AS (  -- timeouts / Fresh together with one partner, beyond both players' own rates
    SELECT x.player, y.player AS other, count(*) AS n, sum(x.a * y.a) AS aa, sum(x.f * y.f) AS ff
    FROM ev x JOIN ev y ON x.game_id = y.game_id AND x.player <> y.player GROUP BY ALL
    HAVING count(*) >= 3
),
-- timeouts on a dropped connection (only classic has a clock, CL-TIMER). A turn starts at
-- the move that ended the previous one (a discard, a declaration, an auto-play; the game's
-- start for the first); an auto-play counts as "on a dropped connection" if the player's own
-- PlayerDisconnected lies between that move and the auto-play. No gap in time is measured:
-- when in the turn a player drops tells nothing (abusers and honest players drop after a
-- think time alike); *that* he drops and lets the clock run, and on which hand, does.
tmv AS (
    SELECT game_id, seq, player, type, auto, dist, hand_size, variant,
           least(turn // 2, 15) AS tb,  -- the point of the game: ~ his n-th turn, capped
           coalesce(max(CASE WHEN type IN ('Discarded', 'DeclaredRummy', 'AutoPlayed') THEN seq END)
             OVER (PARTITION BY game_id ORDER BY seq
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), -1) AS turn_seq
    FROM fraud.moves WHERE variant = 'classic' AND seat >= 0
),
tau AS (  -- his auto-plays, each with: did he drop in that turn before it
    SELECT a.game_id, a.seq, a.player, a.variant, a.hand_size, a.tb, a.dist,
           count(s.seq) > 0 AS disc
    FROM tmv a LEFT JOIN fraud.sessions s
      ON s.game_id = a.game_id AND s.player = a.player AND s.event = 'disconnect'
     AND s.seq > a.turn_seq AND s.seq < a.seq
    WHERE a.auto GROUP BY ALL
),
tct AS (
    SELECT player, count(*) FILTER (WHERE type IN ('Discarded', 'DeclaredRummy', 'AutoPlayed'))
             AS n_clock_turns
    FROM tmv GROUP BY player
),
toc AS (SELECT player, count(*) AS n_auto, count(*) FILTER (WHERE disc) AS n_auto_disc
        FROM tau GROUP BY player),
tpop AS (  -- the population: dropped-connection auto-plays per clocked turn, and their share
    SELECT (SELECT count(*) FILTER (WHERE disc) FROM tau)::DOUBLE
             / nullif((SELECT sum(n_clock_turns) FROM tct), 0) AS p,
           (SELECT avg(disc::INT) FROM tau) AS q
),
-- the hand at the timeout: meld distance before the auto-play against the population's hands
-- before a draw (hand_size of a draw) or a discard (one card more) at the same point of a
-- game; an abuser lets the clock run on a hand far from going out, an honest drop comes at
-- any hand. sum(dist - mean) / sqrt(sum var) over his auto-plays
thc AS (
    SELECT variant, hand_size, tb, avg(dist) AS mu, greatest(coalesce(var_samp(dist), 0), 1.0) AS v
    FROM tmv WHERE type IN ('Drew', 'Discarded') AND dist >= 0 GROUP BY ALL
),
thz AS (
    SELECT a.player, sum(a.dist - c.mu) / sqrt(sum(c.v)) AS auto_hand_z
    FROM tau a JOIN thc c USING (variant, hand_size, tb) WHERE a.dist >= 0 GROUP BY a.player
),
-- hidden-card knowledge as pooled evidence (round 3): score statistics that grow with the
-- number of decisions instead of raw means / t of a few events.
-- draws: does choosing the stock follow the hidden stock top's value, once the visible pile
-- top's value is held fixed (his own stock rate at that pile gain, shrunk to the
-- population's by 20 draws)? sum((stock - p)(sg - mean sg)) / sqrt(sum p(1-p)(sg - mean)^2)
zpk AS (
    SELECT player, pile_gain, stock_gain, (source = 'stock')::INT AS st
    FROM fraud.pickups WHERE stock_gain >= 0 AND pile_gain >= 0
),
zpop AS (SELECT pile_gain, avg(st) AS p0 FROM zpk GROUP BY pile_gain),
zsg AS (SELECT avg(stock_gain) AS m FROM zpk),
zown AS (
    SELECT z.player, z.pile_gain, (sum(z.st) + 20 * any_value(zpop.p0)) / (count(*) + 20) AS p
    FROM zpk z JOIN zpop USING (pile_gain) GROUP BY ALL
),
zst AS (
    SELECT z.player,
           sum((z.st - o.p) * (z.stock_gain - (SELECT m FROM zsg)))
             / sqrt(greatest(sum(o.p * (1 - o.p) * (z.stock_gain - (SELECT m FROM zsg)) ^ 2), 0.25))
             AS stock_z,
           count(*) AS n_stock_dec
    FROM zpk z JOIN zown o USING (player, pile_gain) GROUP BY z.player
),
-- discards: how much less the card helps the next player's hidden hand than the options
-- would (free choices with a flat public record: hc_tie_z; the other next-seat discards:
-- hc_oth_z, session 29; all options: hc_all_z), summed over his discards against the
-- population's mean and spread. The free choices and the others part every next-seat
-- discard, so hc_lr reads each once, the others at their own (smaller) shift.
ztq AS (
    SELECT player, tie_alt - gain AS x FROM fraud.discards
    WHERE "offset" = 1 AND tie_n >= 2 AND pub_flat
),
zt0 AS (SELECT avg(x) AS mu, greatest(var_samp(x), 0.05) AS v FROM ztq),
ztz AS (
    SELECT player, (sum(x) - count(*) * (SELECT mu FROM zt0)) / sqrt(count(*) * (SELECT v FROM zt0))
             AS hc_tie_z,
           count(*) AS n_tie
    FROM ztq GROUP BY player
),
zoq AS (
    SELECT player, alt_gain - gain AS x FROM fraud.discards
    WHERE "offset" = 1 AND NOT coalesce(tie_n >= 2 AND pub_flat, false)
),
zo0 AS (SELECT avg(x) AS mu, greatest(var_samp(x), 0.05) AS v FROM zoq),
zoz AS (
    SELECT player, (sum(x) - count(*) * (SELECT mu FROM zo0)) / sqrt(count(*) * (SELECT v FROM zo0))
             AS hc_oth_z,
           count(*) AS hc_oth_n
    FROM zoq GROUP BY player
),
zaq AS (SELECT player, alt_gain - gain AS x FROM fraud.discards WHERE "offset" = 1),
za0 AS (SELECT avg(x) AS mu, greatest(var_samp(x), 0.05) AS v FROM zaq),
zaz AS (
    SELECT player, (sum(x) - count(*) * (SELECT mu FROM za0)) / sqrt(count(*) * (SELECT v FROM za0))
             AS hc_all_z,
           count(*) AS n_next_disc
    FROM zaq GROUP BY player
),
-- Michigan starts: the cheater starts the suit whose sequence really runs furthest (hidden
-- owners), where an honest player can go only by what he sees: his visible run and his
-- cards in the suit. Against the starts that looked the same to him (mi_tie_z), and the
-- hidden part of the reach (reach - run) against the population's for starts with as many
-- of his cards above the run (held - run) at tables of as many seats, each such cell's
-- mean and spread (mi_reach_z), summed over his starts. Why by cell and not against his
-- own options (session 18): an honest player who starts the suit he holds most of has
-- more cards above the run, so a longer hidden reach than his other options by chance;
-- given those cards, it is chance. Seats: more hands dealt, fewer cards dead in the
-- widow, so longer sequences at bigger tables. A start with no card above the run has
-- no hidden part and is left out.
mi AS (SELECT s.player, s.reach - s.tie_reach AS xt, s.reach - s.run AS xh,
              s.held - s.run AS above, coalesce(g.n_seats, 0) AS seats, s.tie_n >= 2 AS free
       FROM fraud.starts s
       LEFT JOIN fraud.player_games g ON g.game_id = s.game_id AND g.player = s.player),
mi0 AS (
    SELECT avg(xt) FILTER (WHERE free) AS mt,
           greatest(coalesce(var_samp(xt) FILTER (WHERE free), 0), 0.05) AS vt
    FROM mi
),
mic AS (
    SELECT above, seats, avg(xh) AS mh, greatest(coalesce(var_samp(xh), 0), 0.05) AS vh
    FROM mi WHERE above > 0 GROUP BY above, seats
),
miz AS (
    SELECT player, count(*) AS n_starts,
           (sum(xt) FILTER (WHERE free) - count(*) FILTER (WHERE free) * (SELECT mt FROM mi0))
             / sqrt(greatest(count(*) FILTER (WHERE free), 1) * (SELECT vt FROM mi0)) AS mi_tie_z,
           coalesce(sum(xh - mh) FILTER (WHERE mi.above > 0)
                      / sqrt(sum(vh) FILTER (WHERE mi.above > 0)), 0) AS mi_reach_z
    FROM mi LEFT JOIN mic ON mi.above = mic.above AND mi.seats = mic.seats GROUP BY player
),
-- Michigan starts, round 4: did he choose *the* start a seeing player picks (most of his
-- own cards played before the stop, lowest card among equals: hb), against the rate at
-- which the population chose it when it looked the same way (its run and pay card against
-- his other clean starts, how many looked alike, how many he had) — an honest choice
-- depends on the look, not on the hidden reach. Cell rates shrunk to the rate for that
-- number of starts by 20 rows. Each start weighs (1 - p), what a seeing choice can add
-- over the honest rate: sum w(hb - p) / sqrt(sum w^2 p(1 - p)). (The exact score weight,
-- 1/p, let rare cells' honest outliers in on a development world; 1 and 1/sqrt(p) ranked
-- the cheaters a little lower there.)
mhq AS (
    SELECT player, hb::INT AS x, n_clean AS n, least(greatest(hb_run, -2), 2) AS dr,
           hb_pay AS dp, least(hb_same, 3) AS ns
    FROM fraud.starts WHERE n_clean >= 2
),
mhn AS (SELECT n, avg(x) AS pn FROM mhq GROUP BY n),
mhc AS (
    SELECT n, dr, dp, ns,
           least(greatest((sum(x) + 20 * any_value(pn)) / (count(*) + 20), 0.02), 0.98) AS p
    FROM mhq JOIN mhn USING (n) GROUP BY n, dr, dp, ns
),
mhz AS (
    SELECT player, sum((1 - p) * (x - p)) / sqrt(sum((1 - p) ^ 2 * p * (1 - p))) AS mi_hb_z,
           count(*) AS n_hb_starts
    FROM mhq JOIN mhc USING (n, dr, dp, ns) GROUP BY player
),
-- session 4: hidden-card evidence as a likelihood ratio. Under "cheater of intensity t" a
-- component's z is N(t * d * sqrt(n), 1) (d: its shift per decision at t = 1, n: his
-- decisions), under "honest" N(0, 1); so log LR(t) = sum over his components of
-- mu z - mu^2 / 2 with mu = t d sqrt(n), averaged (as LR) over t on a broad uniform grid
-- 0.05..3. The three z's are independent contexts (draws, discards, Michigan starts; their
-- population correlations are within +-0.1). d: the mean shift per decision of the
-- training world's cheaters (seed 1101: 0.27 stock, 0.39 free-choice discards (session 28;
-- 0.24 over all next-seat discards before), 0.49 starts), a prior
-- (models.HC_PRIOR_SHIFTS) that the supervised model replaces by its own training world's
-- estimate (models.hc_shifts, models.hc_lr_of; session 15). Why: a z
-- does not say whether 2.5 came from 30 decisions (a mild cheater) or from 300 (less than
-- any cheater would show); the LR does, and ranks thin evidence where it belongs.
hcev AS (
    SELECT player, stock_z AS z, 0.27 * sqrt(n_stock_dec) AS w FROM zst
    UNION ALL SELECT player, hc_tie_z, 0.39 * sqrt(n_tie) FROM ztz
    UNION ALL SELECT player, hc_oth_z, 0.31 * sqrt(hc_oth_n) FROM zoz
    UNION ALL SELECT player, mi_hb_z, 0.49 * sqrt(n_hb_starts) FROM mhz
),
hcll AS (
    SELECT e.player, g.t, sum(g.t * e.w * e.z - (g.t * e.w) ^ 2 / 2) AS ll
    FROM hcev e CROSS JOIN (SELECT 0.05 + i * 2.95 / 19 AS t FROM range(20) r(i)) g
    WHERE e.z IS NOT NULL GROUP BY e.player, g.t
),
hclr AS (
    SELECT player, any_value(mx) + ln(avg(exp(ll - mx))) AS hc_lr
    FROM (SELECT player, ll, max(ll) OVER (PARTITION BY player) AS mx FROM hcll) GROUP BY player
),
-- session 4: timing regularity over every move kind and variant. A person's think time
-- spreads (log-normal, slower on hard moves, pauses), a bot's barely; measured within each
-- (variant, kind) of the player, so that a kind's typical length and Michigan's card plays
-- (which have no Drew / Discarded) count alike. Votes, walk-outs and auto-plays are left
-- out (timed from an event that is not his turn's start), as are pauses past the 30 s clock.
-- Pooled variance sum(e^2) / (moves - cells), shrunk toward the population's by 3 moves.
tsq AS (
    SELECT player, ln(greatest(think_ms, 1)) - avg(ln(greatest(think_ms, 1)))
             OVER (PARTITION BY player, variant, type) AS e,
           count(*) OVER (PARTITION BY player, variant, type) AS k
    FROM fraud.moves
    WHERE seat >= 0 AND NOT auto AND think_ms < 30000
      AND type NOT IN ('PlayerLeft', 'FreshPressed', 'AutoPlayed')
),
tsp AS (  -- per player: squared deviations and degrees of freedom (a cell of k moves: k - 1)
    SELECT player, sum(e * e) AS ss, sum((k - 1)::DOUBLE / k) AS df FROM tsq GROUP BY player
),
ts0 AS (SELECT sum(ss) / nullif(sum(df), 0) AS v FROM tsp),
tsd AS (
    SELECT player, sqrt((ss + 3 * (SELECT v FROM ts0)) / (df + 3)) AS think_sd_all FROM tsp
),
co_max AS (
    SELECT c.player,
           max((c.aa + 0.5) / (c.n * r1.ra * r2.ra + 0.5)) AS auto_co_max,
           max((c.ff + 0.5) / (c.n * r1.rf * r2.rf + 0.5)) AS fresh_co_max
    FROM co_ev c JOIN evr r1 ON r1.player = c.player JOIN evr r2 ON r2.player = c.other
    GROUP BY c.player
)
SELECT res.player, res.n_games, res.win_rate, res.win_resid, res.net_per_stake,
       tim.think_sd, tim.think_sd_draw, tim.think_diff_corr, tim.think_median_log,
       tim.slow_share, tim.extra_clock_share,
       coalesce(tim.n_auto / nullif(tim.n_turns, 0), 0) AS auto_rate,
       coalesce(ses.n_disc, 0) / res.n_games AS disconnect_rate,
       res.left_rate,
       coalesce(tim.n_fresh, 0) / res.n_games AS fresh_rate,
       tim.fresh_dist - (SELECT m FROM popfresh) AS fresh_dist_rel,
       hc.hc_excess, hc.hc_excess / nullif(hc.hc_sd / sqrt(hc.hc_n), 0) AS hc_t,
       hc.hc_next_excess, pks.stock_informed, pks.pick_gain, hc.keep_gain,
       coalesce(ses.n_devices, 0) AS n_devices, coalesce(ses.n_ips, 0) AS n_ips,
       coalesce(dsh.device_sharers, 0) AS device_sharers,
       tie.hc_tie, tie.hc_tie / nullif(tie.tie_sd / sqrt(tie.hc_tie_n), 0) AS hc_tie_t,
       coalesce(tie.hc_tie_n, 0) AS hc_tie_n, tpub.hc_pub, edge.stock_edge,
       coalesce(co_max.auto_co_max, 1) AS auto_co_max, coalesce(co_max.fresh_co_max, 1) AS fresh_co_max,
       coalesce(toc.n_auto_disc, 0) / nullif(tct.n_clock_turns, 0) AS auto_disc_rate,
       CASE WHEN tct.n_clock_turns > 0  -- shrunk toward the population's share by 2 auto-plays
            THEN (coalesce(toc.n_auto_disc, 0) + 2 * tpop.q) / (coalesce(toc.n_auto, 0) + 2)
       END AS auto_disc_share,
       coalesce((coalesce(toc.n_auto_disc, 0) - tct.n_clock_turns * tpop.p)
                  / sqrt(greatest(tct.n_clock_turns * tpop.p * (1 - tpop.p), 0.25)), 0)
         AS auto_disc_z,
       coalesce(thz.auto_hand_z, 0) AS auto_hand_z,
       zst.stock_z, ztz.hc_tie_z, zaz.hc_all_z,
       (coalesce(zst.stock_z, 0) + coalesce(ztz.hc_tie_z, 0) + coalesce(mhz.mi_hb_z, 0))
         / sqrt(greatest((zst.stock_z IS NOT NULL)::INT + (ztz.hc_tie_z IS NOT NULL)::INT
                         + (mhz.mi_hb_z IS NOT NULL)::INT, 1)) AS hc_z,
       miz.mi_tie_z, miz.mi_reach_z, mhz.mi_hb_z,
       coalesce(hclr.hc_lr, 0) AS hc_lr, tsd.think_sd_all,
       coalesce(tim.n_timed, 0) AS n_timed, coalesce(hc.hc_n, 0) AS n_discards,
       coalesce(pks.n_pickups, 0) AS n_pickups, coalesce(tim.n_turns, 0) AS n_turns,
       coalesce(miz.n_starts, 0) AS n_starts,
       coalesce(tct.n_clock_turns, 0) AS n_clock_turns, coalesce(toc.n_auto_disc, 0) AS n_auto_disc,
       coalesce(zst.n_stock_dec, 0) AS n_stock_dec, coalesce(zaz.n_next_disc, 0) AS n_next_disc,
       coalesce(mhz.n_hb_starts, 0) AS n_hb_starts,
       zoz.hc_oth_z, coalesce(zoz.hc_oth_n, 0) AS hc_oth_n
FROM res
LEFT JOIN tim USING (player) LEFT JOIN hc USING (player) LEFT JOIN pks USING (player)
LEFT JOIN ses USING (player) LEFT JOIN dsh USING (player)
LEFT JOIN tie USING (player) LEFT JOIN tpub USING (player) LEFT JOIN edge USING (player)
LEFT JOIN co_max USING (player)
LEFT JOIN tct USING (player) LEFT JOIN toc USING (player) LEFT JOIN thz USING (player)
CROSS JOIN tpop
LEFT JOIN zst USING (player) LEFT JOIN ztz USING (player) LEFT JOIN zaz USING (player)
LEFT JOIN zoz USING (player)
LEFT JOIN miz USING (player) LEFT JOIN mhz USING (player)
LEFT JOIN hclr USING (player) LEFT JOIN tsd USING (player)
ORDER BY res.player
"""

_PAIR_SQL = """
WITH pg AS (SELECT *, floor(coalesce(deal_dist, 8))::INT AS dd FROM fraud.player_games),
pwin AS (SELECT n_seats, dd, avg(won::INT)::DOUBLE AS p_win FROM pg GROUP BY n_seats, dd),
pgw AS (SELECT pg.*, p_win FROM pg JOIN pwin USING (n_seats, dd)),
co AS (
    SELECT a.player AS p1, b.player AS p2, count(*) AS co_games,
           avg(a.won::INT) - avg(b.won::INT) AS win_diff
    FROM pg a JOIN pg b ON a.game_id = b.game_id AND a.player < b.player
    GROUP BY ALL
),
ph AS (SELECT player, start_ms // 3600000 AS h, count(*) AS g FROM pg GROUP BY ALL),
hs AS (SELECT start_ms // 3600000 AS h, count(*) AS tot, avg(n_seats) AS k FROM pg GROUP BY ALL),
coexp AS (
    SELECT co.p1, co.p2, sum(a.g * b.g * (hs.k - 1) / hs.tot) AS co_expected
    FROM co JOIN ph a ON a.player = co.p1 JOIN ph b ON b.player = co.p2 AND b.h = a.h
    JOIN hs ON hs.h = a.h GROUP BY ALL
),
-- feeding, directed a -> b
d AS (SELECT player, target, "offset", gain - alt_gain AS x, taken, keep_gain FROM fraud.discards),
dab AS (
    SELECT player AS a, target AS b, count(*) AS n, sum(x) AS s, sum(x * x) AS ss,
           count(*) FILTER (WHERE "offset" = 1) AS n1,
           sum(taken::INT) FILTER (WHERE "offset" = 1) AS tk1,
           sum(keep_gain) FILTER (WHERE "offset" = 1) AS kg1
    FROM d GROUP BY ALL
),
da AS (
    SELECT a, sum(n) AS n, sum(s) AS s, sum(ss) AS ss, sum(n1) AS n1, sum(tk1) AS tk1,
           sum(kg1) AS kg1
    FROM dab GROUP BY a
),
feed AS (
    SELECT x.a, x.b, x.n AS feed_n,
           x.s / x.n - (da.s - x.s) / nullif(da.n - x.n, 0) AS feed_lift,
           greatest(x.ss / x.n - (x.s / x.n) ^ 2, 0.05) AS v1,
           greatest((da.ss - x.ss) / nullif(da.n - x.n, 0)
                    - ((da.s - x.s) / nullif(da.n - x.n, 0)) ^ 2, 0.05) AS v2,
           da.n - x.n AS n_o,
           x.tk1 / nullif(x.n1, 0) - (da.tk1 - x.tk1) / nullif(da.n1 - x.n1, 0) AS take_lift,
           x.kg1 / nullif(x.n1, 0) - (da.kg1 - x.kg1) / nullif(da.n1 - x.n1, 0) AS keep_lift
    FROM dab x JOIN da USING (a)
),
feedt AS (
    SELECT a, b, feed_n, feed_lift, take_lift, keep_lift,
           feed_lift / sqrt(v1 / feed_n + v2 / greatest(n_o, 1)) AS feed_t
    FROM feed
),
-- free-choice feeding, directed a -> b: among options worth the same to a, how much
-- more the chosen card helps b than the equal options would, vs the same toward others
tq AS (
    SELECT player AS a, target AS b, "offset" = 1 AS nxt, gain - tie_alt AS x
    FROM fraud.discards WHERE tie_n >= 2
),
tab AS (
    SELECT a, b, count(*) FILTER (WHERE nxt) AS n1, sum(x) FILTER (WHERE nxt) AS s1,
           sum(x * x) FILTER (WHERE nxt) AS ss1, count(*) AS n, sum(x) AS s, sum(x * x) AS ss
    FROM tq GROUP BY ALL
),
ta AS (SELECT a, sum(n1) AS n1, sum(s1) AS s1, sum(ss1) AS ss1, sum(n) AS n, sum(s) AS s,
              sum(ss) AS ss FROM tab GROUP BY a),
tiet AS (
    SELECT x.a, x.b, x.n1 AS tie_n,
           (x.s1 / nullif(x.n1, 0) - (ta.s1 - x.s1) / nullif(ta.n1 - x.n1, 0))
             / sqrt(greatest(ta.ss1 / nullif(ta.n1, 0) - (ta.s1 / nullif(ta.n1, 0)) ^ 2, 0.05)
                    * (1 / nullif(x.n1, 0) + 1 / greatest(ta.n1 - x.n1, 1))) AS tie_t,
           (x.s / x.n - (ta.s - x.s) / nullif(ta.n - x.n, 0))
             / sqrt(greatest(ta.ss / ta.n - (ta.s / ta.n) ^ 2, 0.05)
                    * (1 / x.n + 1 / greatest(ta.n - x.n, 1))) AS tie_any_t
    FROM tab x JOIN ta USING (a)
),
-- going-out timing, directed a -> b: when a ends a round, how many points b is left
-- holding compared with the others at that table (a soft player ends rounds when his
-- partner is light, or waits)
re AS (
    SELECT game_id, seq, ender, player, points_left,
           points_left - avg(points_left) FILTER (WHERE player <> ender)
             OVER (PARTITION BY game_id, seq) AS z
    FROM fraud.round_ends WHERE ender IS NOT NULL
),
rez AS (SELECT ender AS a, player AS b, z FROM re WHERE player <> ender),
rsd AS (SELECT greatest(stddev_samp(z), 1) AS sd FROM rez),
outt AS (
    SELECT a, b, count(*) AS out_n, avg(z) / ((SELECT sd FROM rsd) / sqrt(count(*))) AS out_t
    FROM rez GROUP BY ALL
),
-- chip dumping beyond the deal: a's result per stake with b at the table vs without
pnet AS (SELECT player, sum(net / greatest(stake, 1)) AS s, count(net) AS n FROM pg GROUP BY player),
withb AS (
    SELECT a.player AS a, b.player AS b, avg(a.net / greatest(a.stake, 1)) AS m_with,
           count(a.net) AS n_with,  -- games with a result (NULL: not over, facts.py)
           avg((a.net < 0 AND b.won)::INT) AS lose_to_b
    FROM pg a JOIN pg b ON a.game_id = b.game_id AND a.player <> b.player GROUP BY ALL
),
netw AS (
    SELECT w.a, w.b,
           w.m_with - (p.s - w.m_with * w.n_with) / nullif(p.n - w.n_with, 0) AS net_with,
           w.lose_to_b AS lose_to
    FROM withb w JOIN pnet p ON p.player = w.a
),
-- timeouts and Fresh presses together, beyond both players' own rates
evg AS (SELECT game_id, player, (autoplays > 0)::INT AS a, (fresh > 0)::INT AS f FROM pg),
evr AS (SELECT player, avg(a) AS ra, avg(f) AS rf FROM evg GROUP BY player),
evc AS (
    SELECT x.player AS p1, y.player AS p2, count(*) AS n, sum(x.a * y.a) AS aa,
           sum(x.f * y.f) AS ff
    FROM evg x JOIN evg y ON x.game_id = y.game_id AND x.player < y.player GROUP BY ALL
),
evco AS (
    SELECT evc.p1, evc.p2, (aa + 0.5) / (n * r1.ra * r2.ra + 0.5) AS auto_co,
           (ff + 0.5) / (n * r1.rf * r2.rf + 0.5) AS fresh_co
    FROM evc JOIN evr r1 ON r1.player = evc.p1 JOIN evr r2 ON r2.player = evc.p2
),
pgn AS (SELECT player, count(*) AS g FROM pg GROUP BY player),
-- throwing the game toward b: a discards cards that were in his own melds (own value 2)
-- more often with b at the table than without
dk AS (SELECT DISTINCT game_id, seq, player, (keep_gain >= 2)::INT AS k FROM fraud.discards),
dka AS (SELECT player AS a, count(*) AS n, sum(k) AS s FROM dk GROUP BY player),
dkb AS (
    SELECT d.player AS a, d.target AS b, count(*) AS n, sum((d.keep_gain >= 2)::INT) AS s
    FROM fraud.discards d GROUP BY ALL
),
throw AS (
    SELECT dkb.a, dkb.b,
           dkb.s / dkb.n - (dka.s - dkb.s) / nullif(dka.n - dkb.n, 0) AS throw_with
    FROM dkb JOIN dka USING (a)
),
-- soft play, directed a -> b: a declines useful cards b discarded
sab AS (
    SELECT player AS a, from_player AS b, count(*) AS n,
           sum((source = 'discard')::INT) AS took
    FROM fraud.pickups WHERE from_player IS NOT NULL AND pile_gain > 0 GROUP BY ALL
),
sa AS (SELECT a, sum(n) AS n, sum(took) AS took FROM sab GROUP BY a),
soft AS (
    SELECT x.a, x.b, x.n AS soft_n,
           (sa.took - x.took) / nullif(sa.n - x.n, 0) - x.took / x.n AS soft_lift,
           ((sa.took - x.took) / nullif(sa.n - x.n, 0) - x.took / x.n)
             / sqrt(greatest(sa.took / sa.n * (1 - sa.took / sa.n), 0.02) * (1 / x.n + 1 / greatest(sa.n - x.n, 1)))
             AS soft_t
    FROM sab x JOIN sa USING (a)
),
-- directed chip flow beyond deal strength
fl AS (SELECT src AS a, dst AS b, sum(amount) AS amt FROM fraud.chip_flows GROUP BY ALL),
expf AS (
    SELECT a.player AS a, b.player AS b,
           sum(greatest(-a.net, 0) * b.p_win / greatest(1 - a.p_win, 0.05))
             FILTER (WHERE a.net IS NOT NULL) AS exp_amt,
           sum(greatest(-a.net, 0) ^ 2 * b.p_win * (1 - b.p_win))
             FILTER (WHERE a.net IS NOT NULL) AS var_amt,
           sum(a.stake) AS staked, avg(a.left_game::INT) AS left_with
    FROM pgw a JOIN pgw b ON a.game_id = b.game_id AND a.player <> b.player
    GROUP BY ALL
),
flow AS (
    SELECT e.a, e.b, (coalesce(fl.amt, 0) - e.exp_amt) / greatest(e.staked, 1) AS flow_excess,
           (coalesce(fl.amt, 0) - e.exp_amt) / sqrt(greatest(e.var_amt, 1)) AS flow_z,
           coalesce(fl.amt, 0) / greatest(e.staked, 1) AS flow_share, e.left_with
    FROM expf e LEFT JOIN fl USING (a, b)
),
pleft AS (SELECT player, avg(left_game::INT) AS lr FROM pg GROUP BY player),
-- shared identifiers
dev AS (SELECT DISTINCT player, device_hash FROM fraud.sessions WHERE device_hash IS NOT NULL),
ip AS (SELECT DISTINCT player, ip_hash FROM fraud.sessions WHERE ip_hash IS NOT NULL),
sdev AS (
    SELECT a.player AS p1, b.player AS p2, count(*) AS shared_devices
    FROM dev a JOIN dev b ON a.device_hash = b.device_hash AND a.player < b.player GROUP BY ALL
),
sip AS (
    SELECT a.player AS p1, b.player AS p2, count(*) AS shared_ips
    FROM ip a JOIN ip b ON a.ip_hash = b.ip_hash AND a.player < b.player GROUP BY ALL
),
-- pooled evidence (round 3): one-sample sums against the population's null, so a pair
-- that plays mostly together is not compared with a thin "toward others" baseline (the
-- two-sample t above loses power exactly when the shared games grow). The null (mean and
-- spread of a discard's excess) is taken per variant and table size: classic's excess runs
-- higher than Rummy 500's, and a pair that mostly plays classic heads-up would otherwise
-- drift up with every game together.
gm AS (SELECT DISTINCT game_id, variant, n_seats FROM fraud.player_games),
dq AS (
    SELECT d.player AS a, d.target AS b, gm.variant, gm.n_seats, d.gain - d.tie_alt AS xt,
           d.gain - d.alt_gain AS xg, d.tie_n >= 2 AS free,
           (d.keep_gain >= 2 AND d.gain >= 1)::INT AS thr  -- a card of his melds that helps b
    FROM fraud.discards d JOIN gm USING (game_id) WHERE d."offset" = 1
),
dq0 AS (
    SELECT variant, n_seats, avg(xt) FILTER (WHERE free) AS mt,
           greatest(coalesce(var_samp(xt) FILTER (WHERE free), 0), 0.05) AS vt,
           avg(xg) AS mg, greatest(coalesce(var_samp(xg), 0), 0.05) AS vg, avg(thr) AS pt
    FROM dq GROUP BY ALL
),
dzd AS (  -- a -> b (next seat): free-choice excess (tie) and all-options excess (gain)
    SELECT a, b, count(*) FILTER (WHERE free) AS nt,
           coalesce(sum(xt - mt) FILTER (WHERE free), 0) AS st,
           coalesce(sum(vt) FILTER (WHERE free), 0) AS vt,
           sum(xg - mg) AS sg, sum(vg) AS vg,
           sum(thr - pt) AS sthr, sum(pt * (1 - pt)) AS vthr
    FROM dq JOIN dq0 USING (variant, n_seats) GROUP BY ALL
),
-- the receiver's side: a takes b's discards beyond a's own take rate on *other* players'
-- discards at the same pile-top gain and variant (shrunk toward the population's rate at
-- that variant and table size by 20 draws); a score statistic sum(took - p) / sqrt(sum p(1-p))
kp AS (
    SELECT k.player AS a, k.from_player AS b, gm.variant, gm.n_seats, k.pile_gain,
           (k.source = 'discard')::INT AS took
    FROM fraud.pickups k JOIN gm USING (game_id)
    WHERE k.from_player IS NOT NULL AND k.pile_gain >= 0
),
kpop AS (SELECT variant, n_seats, pile_gain, avg(took) AS p0 FROM kp GROUP BY ALL),
kab AS (SELECT a, b, variant, pile_gain, count(*) AS n, sum(took) AS k FROM kp GROUP BY ALL),
ka AS (SELECT a, variant, pile_gain, sum(n) AS n, sum(k) AS k FROM kab GROUP BY ALL),
kexp AS (
    SELECT kp.a, kp.b, kp.took,
           (ka.k - x.k + 20 * kpop.p0) / (ka.n - x.n + 20) AS p
    FROM kp JOIN kab x USING (a, b, variant, pile_gain) JOIN ka USING (a, variant, pile_gain)
    JOIN kpop USING (variant, n_seats, pile_gain)
),
kzd AS (SELECT a, b, sum(took - p) AS s, sum(p * (1 - p)) AS v FROM kexp GROUP BY ALL),
-- results beyond the deal in shared games: a's expected wins minus his wins, as a z; and
-- games a walked out of with b seated against the population's leaving rate at that variant
-- and table size (a dumper hands a heads-up pot over by leaving), as a z
lrate AS (SELECT variant, n_seats, avg(left_game::INT) AS p0 FROM pg GROUP BY ALL),
lzd AS (
    SELECT a.player AS a, b.player AS b,
           sum(a.p_win - a.won::INT)
             / sqrt(greatest(sum(a.p_win * (1 - a.p_win)) FILTER (WHERE a.won IS NOT NULL), 0.25))
             AS lose_z,
           (sum(a.left_game::INT) - sum(r.p0)) / sqrt(greatest(sum(r.p0 * (1 - r.p0)), 0.25)) AS left_z,
           count(*) FILTER (WHERE a.n_seats = 2) AS hu_games
    FROM pgw a JOIN pgw b ON a.game_id = b.game_id AND a.player <> b.player
    JOIN lrate r ON r.variant = a.variant AND r.n_seats = a.n_seats GROUP BY ALL
),
-- Rummies held back, directed a -> b (classic, session 12): at a's decisions where he could
-- have declared Rummy (discards.out_held: 1 he discarded instead, 0 he went out), his holds
-- with b at the table (hold) and with b within two cards of going out himself (near: soft
-- play's "delay going out"), against a's own hold rate at his other such decisions, shrunk
-- toward the population's rate by 10 decisions (a weak player misses Rummies anywhere);
-- a score statistic sum(held - p) / sqrt(sum p(1-p))
ho AS (
    SELECT game_id, seq, player AS a, target AS b, out_held AS h, target_dist <= 2 AS near
    FROM fraud.discards WHERE out_held IS NOT NULL
),
ho1 AS (SELECT DISTINCT game_id, seq, a, h FROM ho),
hpop AS (SELECT coalesce(avg(h), 0.05) AS p0 FROM ho1),
hoa AS (SELECT a, count(*) AS n, sum(h) AS k FROM ho1 GROUP BY ALL),
hoab AS (
    SELECT a, b, count(*) AS n, sum(h) AS k, count(*) FILTER (WHERE near) AS nn,
           coalesce(sum(h) FILTER (WHERE near), 0) AS kn
    FROM ho GROUP BY ALL
),
hzd AS (
    SELECT a, b, n AS hold_n, nn AS hold_near_n,
           (k - n * p) / sqrt(greatest(n * p * (1 - p), 0.25)) AS hold_z,
           (kn - nn * pn) / sqrt(greatest(nn * pn * (1 - pn), 0.25)) AS hold_near_z
    FROM (SELECT x.*, (hoa.k - x.k + 10 * p0) / (hoa.n - x.n + 10) AS p,
                 (hoa.k - x.kn + 10 * p0) / (hoa.n - x.nn + 10) AS pn
          FROM hoab x JOIN hoa USING (a) CROSS JOIN hpop)
),
-- chip dumping, directed a (dumper) -> b (receiver): the dumper's levers, each against the
-- population's null or the receiver's own behaviour toward third parties — a walks out of
-- games with b seated (left), feeds b at a cost to himself (his discards' help to b's hidden
-- hand over all his options: gain) and b takes a's discards beyond b's own take rate on
-- other players' discards (take) and, in classic, a holds back Rummies with b seated (hold,
-- session 12: a thrown game is not won) — summed over sqrt(4) (Stouffer); the stronger
-- direction is kept. One pooled z because dumping pairs are few: a learner cannot weigh four
-- signals from a handful of training pairs, the mechanism's known behaviour can
dmp AS (
    SELECT least(l.a, l.b) AS p1, greatest(l.a, l.b) AS p2,
           max((coalesce(l.left_z, 0) + coalesce(z.sg / sqrt(greatest(z.vg, 0.25)), 0)
                + coalesce(k.s / sqrt(greatest(k.v, 0.25)), 0) + coalesce(h.hold_z, 0))
               / sqrt(4)) AS dump_z
    FROM lzd l LEFT JOIN dzd z ON z.a = l.a AND z.b = l.b
    LEFT JOIN kzd k ON k.a = l.b AND k.b = l.a
    LEFT JOIN hzd h ON h.a = l.a AND h.b = l.b
    GROUP BY ALL
),
ev3h AS (  -- Rummies held back: the stronger direction, and both directions' decisions
    SELECT least(a, b) AS p1, greatest(a, b) AS p2, max(hold_z) AS hold_z,
           max(hold_near_z) AS hold_near_z, sum(hold_n)::BIGINT AS hold_n
    FROM hzd GROUP BY ALL
),
ev3 AS (  -- both directions of each pair, pooled (colluders feed each other) and the stronger
    SELECT least(a, b) AS p1, greatest(a, b) AS p2,
           sum(st) / sqrt(greatest(sum(vt), 0.25)) AS tie_z,
           max(st / sqrt(greatest(vt, 0.25))) AS tie_z_dir,
           sum(sg) / sqrt(greatest(sum(vg), 0.25)) AS gain_z,
           max(sthr / sqrt(greatest(vthr, 0.25))) AS throw_z
    FROM dzd GROUP BY ALL
),
ev3k AS (
    SELECT least(a, b) AS p1, greatest(a, b) AS p2,
           sum(s) / sqrt(greatest(sum(v), 0.25)) AS take_z,
           max(s / sqrt(greatest(v, 0.25))) AS take_z_dir
    FROM kzd GROUP BY ALL
),
ev3l AS (
    SELECT least(a, b) AS p1, greatest(a, b) AS p2, max(lose_z) AS lose_z,
           max(left_z) AS left_z, max(hu_games) AS hu_games
    FROM lzd GROUP BY ALL
),
pairs AS (
    SELECT p1, p2 FROM co UNION SELECT p1, p2 FROM sdev UNION SELECT p1, p2 FROM sip
),
dir AS (  -- both directions of each pair, then the stronger one kept
    SELECT pairs.p1, pairs.p2,
           greatest(coalesce(f1.feed_t, 0), coalesce(f2.feed_t, 0)) AS feed_t,
           greatest(coalesce(f1.feed_lift, 0), coalesce(f2.feed_lift, 0)) AS feed_lift,
           coalesce(f1.feed_n, 0) + coalesce(f2.feed_n, 0) AS feed_n,
           greatest(coalesce(f1.take_lift, 0), coalesce(f2.take_lift, 0)) AS take_lift,
           greatest(coalesce(f1.keep_lift, 0), coalesce(f2.keep_lift, 0)) AS keep_lift,
           greatest(coalesce(s1.soft_t, 0), coalesce(s2.soft_t, 0)) AS soft_t,
           greatest(coalesce(s1.soft_lift, 0), coalesce(s2.soft_lift, 0)) AS soft_lift,
           coalesce(s1.soft_n, 0) + coalesce(s2.soft_n, 0) AS soft_n,
           greatest(coalesce(w1.flow_excess, 0), coalesce(w2.flow_excess, 0)) AS flow_excess,
           abs(coalesce(w1.flow_share, 0) - coalesce(w2.flow_share, 0)) AS flow_net,
           greatest(coalesce(w1.flow_z, 0), coalesce(w2.flow_z, 0)) AS flow_z,
           greatest(coalesce(w1.left_with - l1.lr, 0), coalesce(w2.left_with - l2.lr, 0)) AS left_with,
           greatest(coalesce(t1.tie_t, 0), coalesce(t2.tie_t, 0)) AS tie_t,
           coalesce(t1.tie_n, 0) + coalesce(t2.tie_n, 0) AS tie_n,
           greatest(coalesce(t1.tie_any_t, 0), coalesce(t2.tie_any_t, 0)) AS tie_any_t,
           greatest(coalesce(-o1.out_t, 0), coalesce(-o2.out_t, 0)) AS out_t,
           coalesce(o1.out_n, 0) + coalesce(o2.out_n, 0) AS out_n,
           greatest(coalesce(-n1.net_with, 0), coalesce(-n2.net_with, 0)) AS net_with,
           greatest(coalesce(n1.lose_to, 0), coalesce(n2.lose_to, 0)) AS lose_to,
           greatest(coalesce(h1.throw_with, 0), coalesce(h2.throw_with, 0)) AS throw_with
    FROM pairs
    LEFT JOIN throw h1 ON h1.a = pairs.p1 AND h1.b = pairs.p2
    LEFT JOIN throw h2 ON h2.a = pairs.p2 AND h2.b = pairs.p1
    LEFT JOIN tiet t1 ON t1.a = pairs.p1 AND t1.b = pairs.p2
    LEFT JOIN tiet t2 ON t2.a = pairs.p2 AND t2.b = pairs.p1
    LEFT JOIN outt o1 ON o1.a = pairs.p1 AND o1.b = pairs.p2
    LEFT JOIN outt o2 ON o2.a = pairs.p2 AND o2.b = pairs.p1
    LEFT JOIN netw n1 ON n1.a = pairs.p1 AND n1.b = pairs.p2
    LEFT JOIN netw n2 ON n2.a = pairs.p2 AND n2.b = pairs.p1
    LEFT JOIN feedt f1 ON f1.a = pairs.p1 AND f1.b = pairs.p2
    LEFT JOIN feedt f2 ON f2.a = pairs.p2 AND f2.b = pairs.p1
    LEFT JOIN soft s1 ON s1.a = pairs.p1 AND s1.b = pairs.p2
    LEFT JOIN soft s2 ON s2.a = pairs.p2 AND s2.b = pairs.p1
    LEFT JOIN flow w1 ON w1.a = pairs.p1 AND w1.b = pairs.p2
    LEFT JOIN flow w2 ON w2.a = pairs.p2 AND w2.b = pairs.p1
    LEFT JOIN pleft l1 ON l1.player = pairs.p1
    LEFT JOIN pleft l2 ON l2.player = pairs.p2
)
SELECT dir.p1, dir.p2,
       coalesce(co.co_games, 0) AS co_games,
       (coalesce(co.co_games, 0) + 1) / (coalesce(coexp.co_expected, 0) + 1) AS co_lift,
       dir.feed_t, dir.feed_lift, dir.feed_n, dir.take_lift, dir.keep_lift,
       dir.soft_t, dir.soft_lift, dir.soft_n, dir.flow_excess, dir.flow_net, dir.flow_z,
       dir.left_with,
       coalesce(sdev.shared_devices, 0) AS shared_devices,
       coalesce(sip.shared_ips, 0) AS shared_ips,
       abs(coalesce(co.win_diff, 0)) AS win_with,
       dir.tie_t, dir.tie_n, dir.tie_any_t, dir.out_t, dir.out_n, dir.net_with, dir.lose_to,
       coalesce(evco.auto_co, 1) AS auto_co, coalesce(evco.fresh_co, 1) AS fresh_co,
       coalesce(co.co_games, 0) / least(g1.g, g2.g) AS co_share, dir.throw_with,
       coalesce(ev3.tie_z, 0) AS tie_z, coalesce(ev3.tie_z_dir, 0) AS tie_z_dir,
       coalesce(ev3.gain_z, 0) AS gain_z, coalesce(ev3k.take_z, 0) AS take_z,
       coalesce(ev3k.take_z_dir, 0) AS take_z_dir,
       (coalesce(ev3.tie_z, 0) + coalesce(ev3k.take_z, 0)) / sqrt(2) AS collude_z,
       coalesce(ev3l.hu_games, 0) AS hu_games, ev3l.lose_z, ev3l.left_z,
       coalesce(ev3.throw_z, 0) AS throw_z, coalesce(dmp.dump_z, 0) AS dump_z,
       coalesce(ev3h.hold_z, 0) AS hold_z, coalesce(ev3h.hold_near_z, 0) AS hold_near_z,
       coalesce(ev3h.hold_n, 0) AS hold_n
FROM dir
LEFT JOIN co USING (p1, p2) LEFT JOIN coexp USING (p1, p2) LEFT JOIN evco USING (p1, p2)
LEFT JOIN ev3 USING (p1, p2) LEFT JOIN ev3k USING (p1, p2)
LEFT JOIN ev3l USING (p1, p2) LEFT JOIN dmp USING (p1, p2) LEFT JOIN ev3h USING (p1, p2)
LEFT JOIN pgn g1 ON g1.player = dir.p1 LEFT JOIN pgn g2 ON g2.player = dir.p2
LEFT JOIN sdev USING (p1, p2) LEFT JOIN sip USING (p1, p2)
ORDER BY dir.p1, dir.p2
"""


def _clean(tbl: object) -> pl.DataFrame:
    """Polars frame with NaN (an undefined statistic, e.g. a correlation of a constant)
    turned into null, so "no evidence" is one thing everywhere."""
    df = pl.from_arrow(tbl)  # type: ignore[arg-type]
    assert isinstance(df, pl.DataFrame)
    return df.with_columns(pl.col(pl.Float64).fill_nan(None))


@contextmanager
def _one_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the feature SQL on one DuckDB thread. Why: a parallel SUM or AVG of doubles
    adds in the order the threads finish, so the last bits of a feature (and of every
    score computed from it) could differ between two scans of the same store; one thread
    makes them byte-identical. The features are a few seconds of a 100k-game scan."""
    (threads,) = con.execute("SELECT current_setting('threads')").fetchone()  # type: ignore[misc]
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        # in a transaction a failed statement aborted, DuckDB refuses this too: keep the
        # first error (the caller's rollback follows; fraud.scan.publish_scan resets it)
        with suppress(duckdb.TransactionException):
            con.execute(f"SET threads = {int(threads)}")


#: the timing signals read below a second (spreads of log think time, its correlation with
#: difficulty, its median): unknown, not measured, when the log's clock cannot show them
FINE_TIMING = ("think_sd", "think_sd_draw", "think_diff_corr", "think_median_log", "think_sd_all")


def fine_clock(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the moves' timestamps can show sub-second think times: not when every
    think time is a whole number of seconds. A platform whose clock ticks in whole seconds
    (every ``ts`` at ``.000``), or that stamps a game's events alike (every think time 0),
    logs a 0.4 s and a 0.9 s move the same: the log spread of such think times measures
    the clock, not the player (an honest world read as 6 unusual players, or 21 bots, by
    the built-in model). On a millisecond clock a few hundred moves all at whole seconds
    do not happen."""
    row = con.execute("SELECT bool_and(think_ms % 1000 = 0) FROM fraud.moves "
                      "WHERE seat >= 0").fetchone()
    return row is None or not row[0]  # no moves: nothing to null


def player_features(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per player: :data:`PLAYER_FEATURES` plus evidence counts; the sub-second
    timing signals null when the log's clock cannot show them (:func:`fine_clock`)."""
    with _one_thread(con):
        df = _clean(con.sql(_PLAYER_SQL).to_arrow_table())
    if not fine_clock(con):
        df = df.with_columns([pl.lit(None, dtype=df.schema[c]).alias(c) for c in FINE_TIMING
                              if c in df.columns])
    return df


def pair_features(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per unordered pair (``p1 < p2``) that co-played or shares an identifier."""
    with _one_thread(con):
        return _clean(con.sql(_PAIR_SQL).to_arrow_table())


__all__ = ["FEATURES_VERSION", "PAIR_FEATURES", "PLAYER_FEATURES", "pair_features", "player_features"]
