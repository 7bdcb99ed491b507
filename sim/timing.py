"""Think times: how long a simulated player takes over a move.

Human think times are roughly log-normal; people are slower on harder decisions
(more options, a hand close to going out), get slower as a session wears on
(fatigue), and now and then pause for a long time (a phone call) — long enough,
sometimes, that the platform's clock runs out (classic CL-TIMER) and the turn is
auto-played. A bot is the opposite: a narrow spread around its median, no link to
difficulty, no fatigue, no pauses. The fraud scan's timing features (regularity, the
correlation with difficulty) are built to tell the two apart, so both are modelled
with the same parameters and only the values differ.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

#: per move kind, a multiplier on the player's median think time
KIND_FACTOR = {
    "Drew": 0.55,
    "Discarded": 1.0,
    "DeclaredRummy": 1.6,
    "Melded": 1.2,
    "LaidDown": 1.6,
    "LaidOff": 0.8,
    "JokerSwapped": 1.1,
    "Bought": 0.45,
    "RummyCalled": 0.6,
    "WidowBought": 1.3,
    "CardPlayed": 0.5,
    "PokerHandDeclared": 1.8,
    "FreshPressed": 0.5,
    "PlayerLeft": 0.4,
}


@dataclass(frozen=True, slots=True)
class TimingProfile:
    """One player's think-time model (all times in ms)."""

    median_ms: float = 3500.0
    sigma: float = 0.55  # log-normal spread (bots ~0.06)
    difficulty_gain: float = 0.9  # how much slower at difficulty 1 vs 0 (x (1 + gain))
    fatigue_per_hour: float = 0.12  # slower by this share per hour of session
    pause_prob: float = 0.012  # share of moves with a long pause
    pause_median_ms: float = 40_000.0
    min_ms: int = 350

    @property
    def is_regular(self) -> bool:
        return self.sigma < 0.15


def bot_timing(rng: random.Random) -> TimingProfile:
    """A bot: fast, regular, blind to difficulty and to the hour."""
    return TimingProfile(
        median_ms=rng.uniform(1600, 3200), sigma=rng.uniform(0.04, 0.09), difficulty_gain=0.0,
        fatigue_per_hour=0.0, pause_prob=0.0, min_ms=600,
    )


def human_timing(rng: random.Random, skill: float) -> TimingProfile:
    """A person: strong players are a little quicker and think harder on hard moves."""
    return TimingProfile(
        median_ms=rng.lognormvariate(math.log(3600 - 900 * skill), 0.25),
        sigma=rng.uniform(0.42, 0.7),
        difficulty_gain=rng.uniform(0.5, 1.3) * (0.7 + 0.6 * skill),
        fatigue_per_hour=rng.uniform(0.05, 0.25),
        pause_prob=rng.uniform(0.004, 0.02),
    )


def think_ms(profile: TimingProfile, rng: random.Random, kind: str, difficulty: float,
             session_ms: int, tilt: float = 0.0) -> int:
    """One think time. ``difficulty`` in 0..1; ``session_ms`` how long the player has
    been at it; ``tilt`` in 0..1 makes a tilting player rush."""
    median = profile.median_ms * KIND_FACTOR.get(kind, 1.0)
    median *= 1.0 + profile.difficulty_gain * difficulty
    median *= 1.0 + profile.fatigue_per_hour * (session_ms / 3_600_000.0)
    median *= 1.0 - 0.45 * tilt
    t = rng.lognormvariate(math.log(median), profile.sigma)
    if profile.pause_prob and rng.random() < profile.pause_prob:
        t += rng.lognormvariate(math.log(profile.pause_median_ms), 0.8)
    return max(profile.min_ms, int(t))


__all__ = ["KIND_FACTOR", "TimingProfile", "bot_timing", "human_timing", "think_ms"]
