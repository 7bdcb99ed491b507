"""Weighted bin edges for scikit-learn's gradient boosting, computed in one pass.

Why this module exists: every learner here is class-weighted (fraud is rare), and with
sample weights this scikit-learn bins each column of more than 255 distinct values through
254 separate calls of its weighted percentile, each re-sorting the column. On the built-in
model's training tables that was 69 of an 83 s fit (``benchmarks/bench_fit.py``). The edges
below are the same numbers computed at once: the column is sorted once, the weighted CDF
summed once in the same order, and all 254 ranks looked up together with the very
operations scikit-learn applies to each rank. The result is bit-identical, so a fitted
model is identical too (tests/test_fast_binning.py compares both on random columns with
ties, missing values and zero weights, and compares whole fits).

:func:`install` swaps scikit-learn's ``_find_binning_thresholds`` for
:func:`find_binning_thresholds` only when the installed function is the one this was
written against (its source's SHA-256 in :data:`KNOWN_SOURCES`); any other version keeps
its own, slower, code. The function is adapted from scikit-learn (BSD-3-Clause,
``sklearn/ensemble/_hist_gradient_boosting/binning.py``, 1.9).
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.ensemble._hist_gradient_boosting import binning as _binning

#: SHA-256 of ``inspect.getsource(binning._find_binning_thresholds)`` of the scikit-learn
#: releases whose weighted binning :func:`find_binning_thresholds` reproduces
KNOWN_SOURCES = frozenset({
    "ab2729a3fe8c8742e42cc69268f51f6289202fe845f486d4e8d0e0a606c3fa51",  # 1.9.1
})

_ORIGINAL = _binning._find_binning_thresholds


def _source_digest(func: Any) -> str:
    try:
        return hashlib.sha256(inspect.getsource(func).encode()).hexdigest()
    except (OSError, TypeError):  # no source (a frozen or compiled install): not ours to judge
        return ""


def weighted_percentiles(values: np.ndarray, weights: np.ndarray,
                         ranks: np.ndarray) -> np.ndarray:
    """scikit-learn's ``_weighted_percentile(values, weights, rank, average=True)`` for
    every rank at once, for a 1-D column with positive weights and no NaN (what the
    binning passes it): the "averaged inverted CDF" of the weighted sample.

    >>> weighted_percentiles(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4), np.array([50.0]))
    array([2.5])
    """
    array = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    weight = np.asarray(weights, dtype=np.float64).reshape(-1, 1)
    # the same sort (numpy's default, as scikit-learn's ``stable=False``) and the same
    # running sum in the same order: ties keep the order scikit-learn gives them, and the
    # CDF its exact last bits
    sorted_idx = np.argsort(array, axis=0)
    weight_cdf = np.cumsum(np.take_along_axis(weight, sorted_idx, axis=0).T, axis=1)[0]
    adjusted = np.asarray(ranks, dtype=np.float64) / 100 * weight_cdf[-1]
    zero = adjusted == 0
    adjusted[zero] = np.nextafter(adjusted[zero], adjusted[zero] + 1)
    max_idx = len(weight_cdf) - 1
    at = np.clip(np.searchsorted(weight_cdf, adjusted), 0, max_idx)
    above = (weight_cdf[at] - adjusted) > np.finfo(np.float64).eps
    nxt = np.clip(at + 1, 0, max_idx)
    low = array[sorted_idx[at, 0], 0]
    high = array[sorted_idx[nxt, 0], 0]
    return np.where(above, low, (low + high) / 2)


def find_binning_thresholds(col_data: np.ndarray, max_bins: int,
                            sample_weight: np.ndarray | None = None) -> np.ndarray:
    """scikit-learn's ``_find_binning_thresholds``, with the weighted edges from
    :func:`weighted_percentiles` (one pass) instead of one call per edge."""
    missing_mask = np.isnan(col_data)
    any_missing = missing_mask.any()
    if any_missing:
        col_data = col_data[~missing_mask]
    if sample_weight is not None:
        if any_missing:
            sample_weight = sample_weight[~missing_mask]
        nnz_sw = sample_weight != 0
        col_data = col_data[nnz_sw]
        sample_weight = sample_weight[nnz_sw]
    sort_idx = np.argsort(col_data)
    col_data = col_data[sort_idx]
    if sample_weight is not None:
        sample_weight = sample_weight[sort_idx]
    distinct_values = np.unique(col_data).astype(_binning.X_DTYPE)
    if len(distinct_values) == 1:
        return np.asarray([])
    percentiles = np.linspace(0, 100, num=max_bins + 1)[1:-1]
    if len(distinct_values) <= max_bins:
        bin_thresholds = sliding_window_view(distinct_values, 2).mean(axis=1)
    elif sample_weight is None:
        bin_thresholds = np.percentile(col_data, percentiles, method="averaged_inverted_cdf")
    else:
        bin_thresholds = weighted_percentiles(col_data, sample_weight, percentiles)
    unique_bin_values = np.unique(bin_thresholds)
    if unique_bin_values.shape[0] != bin_thresholds.shape[0]:
        bin_thresholds = unique_bin_values
    np.clip(bin_thresholds, a_min=None, a_max=_binning.ALMOST_INF, out=bin_thresholds)
    return bin_thresholds


def install() -> bool:
    """Use :func:`find_binning_thresholds` in scikit-learn's binning if the installed
    scikit-learn is one it reproduces; returns whether it is in use. Idempotent."""
    if _binning._find_binning_thresholds is find_binning_thresholds:
        return True
    if _source_digest(_ORIGINAL) not in KNOWN_SOURCES:
        return False
    _binning._find_binning_thresholds = find_binning_thresholds
    return True


def uninstall() -> None:
    """Put scikit-learn's own function back (tests compare the two)."""
    _binning._find_binning_thresholds = _ORIGINAL


__all__ = ["KNOWN_SOURCES", "find_binning_thresholds", "install", "uninstall",
           "weighted_percentiles"]
