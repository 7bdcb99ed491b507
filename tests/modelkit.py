"""Helpers for tests that fit :class:`rummyguard.fraud.models.FraudModel` on synthetic
feature tables."""

from __future__ import annotations

from typing import Any

import numpy as np


def coarse(data: dict[str, Any]) -> dict[str, Any]:
    """Synthetic feature columns on a 0.1 grid.

    Why: with class weights set, scikit-learn's gradient boosting bins a column of more
    than ``max_bins`` (255) distinct values through a weighted percentile per threshold,
    a Python loop of about half a millisecond each: a fit on a few hundred rows of
    continuous noise took 30-50 s. On a 0.1 grid a standard-normal column has well under
    255 values, so it is binned at its midpoints; a grid this fine moves no positive
    across the separations these tests build (shifts of 2.5 and more)."""
    return {c: np.round(np.asarray(v, dtype=float), 1) for c, v in data.items()}
