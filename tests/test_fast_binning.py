"""fraud/fast_binning.py: the one-pass weighted bin edges equal scikit-learn's, bit for bit,
and a class-weighted boosting fit with them is the same model."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.ensemble._hist_gradient_boosting import binning

from rummyguard.fraud import fast_binning
from rummyguard.fraud.fast_binning import (
    KNOWN_SOURCES,
    find_binning_thresholds,
    weighted_percentiles,
)

RECOGNISED = fast_binning._source_digest(fast_binning._ORIGINAL) in KNOWN_SOURCES
needs_known = pytest.mark.skipif(
    not RECOGNISED, reason="this scikit-learn's binning is not the one fast_binning reproduces: "
    "its own code runs (install() returns False)")


@pytest.fixture
def scikit_learns_own() -> Iterator[None]:
    fast_binning.uninstall()
    try:
        yield
    finally:
        fast_binning.install()


def _column(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=n)
    if kind == 1:  # many ties, as counts and rounded z's have
        return np.round(rng.normal(size=n) * 40)
    if kind == 2:  # missing values ("no evidence")
        x = rng.exponential(size=n)
        x[rng.random(n) < 0.3] = np.nan
        return x
    return np.where(rng.random(n) < 0.6, 0.0, rng.standard_t(3, size=n))  # a spike at 0


def _balanced(y: np.ndarray) -> np.ndarray:
    n, k = len(y), max(int(y.sum()), 1)
    return np.where(y, n / (2 * k), n / (2 * (n - k)))


@needs_known
@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(260, 3000), kind=st.integers(0, 3),
       zero_weights=st.booleans(), max_bins=st.sampled_from([255, 64, 16]))
def test_edges_are_scikit_learns_bit_for_bit(seed: int, n: int, kind: int, zero_weights: bool,
                                            max_bins: int) -> None:
    rng = np.random.default_rng(seed)
    x = _column(rng, n, kind)
    w = _balanced(rng.random(n) < 0.02)
    if zero_weights:
        w[rng.random(n) < 0.1] = 0.0
    ours = find_binning_thresholds(x.copy(), max_bins, w.copy())
    theirs = fast_binning._ORIGINAL(x.copy(), max_bins, w.copy())
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    # unweighted and few-distinct-value columns take scikit-learn's own branches
    np.testing.assert_array_equal(find_binning_thresholds(x.copy(), max_bins),
                                  fast_binning._ORIGINAL(x.copy(), max_bins))


def test_weighted_percentiles_are_the_averaged_inverted_cdf() -> None:
    values = np.array([4.0, 1.0, 3.0, 2.0])
    # unit weights: numpy's own "averaged_inverted_cdf"
    ranks = np.array([10.0, 25.0, 50.0, 75.0, 99.0])
    np.testing.assert_array_equal(
        weighted_percentiles(values, np.ones(4), ranks),
        np.percentile(values, ranks, method="averaged_inverted_cdf"))
    # a heavy value pulls every rank up to it
    assert list(weighted_percentiles(values, np.array([97.0, 1.0, 1.0, 1.0]), ranks)) == [
        4.0, 4.0, 4.0, 4.0, 4.0]


@needs_known
def test_a_class_weighted_fit_is_the_same_model(scikit_learns_own: None) -> None:
    rng = np.random.default_rng(7)
    n = 3000
    x = np.column_stack([_column(rng, n, k % 4) for k in range(6)])
    y = (np.nan_to_num(x[:, 0]) + 0.5 * np.nan_to_num(x[:, 2]) + rng.normal(size=n)) > 2.6

    def fit() -> np.ndarray:
        model = HistGradientBoostingClassifier(max_iter=40, class_weight="balanced",
                                               random_state=0).fit(x, y)
        return model.predict_proba(x)

    assert binning._find_binning_thresholds is fast_binning._ORIGINAL
    theirs = fit()
    assert fast_binning.install()
    assert binning._find_binning_thresholds is find_binning_thresholds
    ours = fit()
    np.testing.assert_array_equal(ours, theirs)


@needs_known
def test_the_models_module_installs_it() -> None:
    import rummyguard.fraud.models  # noqa: F401  (installs on import)

    assert binning._find_binning_thresholds is find_binning_thresholds
    assert fast_binning.install()  # idempotent


def test_an_unknown_scikit_learn_keeps_its_own_code(monkeypatch: pytest.MonkeyPatch,
                                                    scikit_learns_own: None) -> None:
    monkeypatch.setattr(fast_binning, "KNOWN_SOURCES", frozenset({"0" * 64}))
    assert fast_binning.install() is False
    assert binning._find_binning_thresholds is fast_binning._ORIGINAL
