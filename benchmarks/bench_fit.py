"""Model fit benchmark: the built-in model fitted from its shipped training tables, with
scikit-learn's own weighted binning and with fraud/fast_binning.py's, in one process.

Measures, back to back (``--repeat`` times each, the order alternating so both see the
same load):

- ``fit_sklearn_s``: :meth:`FraudModel.fit` on the bundle's tables (2,409 players, 10,275
  pairs; every learner, its cross-validated choice, the calibration) with scikit-learn's
  ``_find_binning_thresholds`` (one weighted-percentile call per bin edge);
- ``fit_fast_s``: the same fit with :func:`rummyguard.fraud.fast_binning.find_binning_thresholds`;
- ``speedup``: the ratio of the medians;
- ``identical``: whether the two fits score the training tables to the same bits (players
  and pairs) and record the same ``trained_on``.

Prints one JSON document. Usage: ``python benchmarks/bench_fit.py [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from typing import Any

import sklearn

from rummyguard.fraud import fast_binning
from rummyguard.fraud.builtin import read_bundle
from rummyguard.fraud.models import FraudModel

try:
    from ._machine import cpu_model
except ImportError:  # run as a script
    from _machine import cpu_model  # type: ignore[no-redef]


def _fit(tables: tuple[Any, ...]) -> tuple[FraudModel, float]:
    players, pairs, meta = tables
    start = time.perf_counter()
    model = FraudModel().fit(
        players, pairs,
        {m: set(v) for m, v in meta["player_pos"].items()},
        {m: {(a, b) for a, b in v} for m, v in meta["pair_pos"].items()},
        ignore_players=set(meta["ignore_players"]),
        ignore_pairs={(a, b) for a, b in meta["ignore_pairs"]})
    return model, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    tables = read_bundle()
    if not fast_binning.install():
        sys.exit("this scikit-learn's binning is not the one fast_binning reproduces")
    times: dict[str, list[float]] = {"sklearn": [], "fast": []}
    models: dict[str, FraudModel] = {}
    for i in range(args.repeat):
        for which in (("sklearn", "fast") if i % 2 == 0 else ("fast", "sklearn")):
            if which == "sklearn":
                fast_binning.uninstall()
            try:
                models[which], seconds = _fit(tables)
            finally:
                fast_binning.install()
            times[which].append(seconds)
    players, pairs, _ = tables
    a_players, a_pairs = models["sklearn"].predict(players, pairs)
    b_players, b_pairs = models["fast"].predict(players, pairs)
    slow, fast = statistics.median(times["sklearn"]), statistics.median(times["fast"])
    print(json.dumps({
        "players": players.height, "pairs": pairs.height, "repeat": args.repeat,
        "fit_sklearn_s": [round(t, 2) for t in times["sklearn"]],
        "fit_fast_s": [round(t, 2) for t in times["fast"]],
        "speedup": round(slow / fast, 2),
        "identical": bool(a_players.equals(b_players) and a_pairs.equals(b_pairs)
                          and models["sklearn"].trained_on == models["fast"].trained_on),
        "scikit_learn": sklearn.__version__, "python": platform.python_version(),
        "cpu": cpu_model(),
    }, indent=2))


if __name__ == "__main__":
    main()
