"""The built-in model: the supervised detectors, trained on a simulated world that ships
with rummyguard, so that ``rummyguard scan`` works out of the box.

Why: a risk analyst's first nightly scan should use the supervised models of issue 8
(trained on simulated worlds), not the unsupervised detector alone, and a fresh install
has no world of its own to train on. A pickled model would tie the package to one
scikit-learn build (joblib files do not load across versions), so what ships is the
*training data* — the player and pair feature tables of one simulated training world and
its acted positives (fraud/builtin/, about 1.5 MB) — and the model is fitted from them on
first use (about 15 seconds, once), then cached:

- cache: ``$RUMMYGUARD_CACHE``, else ``$XDG_CACHE_HOME/rummyguard``, else
  ``~/.cache/rummyguard``; the file name carries a key of the bundle's bytes, the model
  format, the scikit-learn version and the source of fraud/models.py, so any change to
  one of them fits again instead of reusing a stale model;
- two processes that need it at once fit it once: the second waits on a lock file and
  then reads the first one's result;
- an unwritable cache is not an error: the model is fitted in memory and a note says so.

The bundle is built by ``benchmarks/detection/build_builtin.py`` from a simulated world
(seed 1101, 16,000 games, 3,200 accounts, 6 % fraud: the training world of DETECTION.md
rounds 6-15). It was rebuilt in the eighth session from the same seed after the
simulator's audit removed two tells (a shared device was only ever a multi-account's; a
dumping pair's Rummy 500 tables were always tournaments) and the facts' audit changed
what the features measure (FEATURES_VERSION 8), and again in the ninth after the simulator
learned soft play's "delay going out": round 11's held-out figures are that model's. The
twelfth session rebuilt it from the same world for FEATURES_VERSION 9 (Rummies held back);
a four times larger training world (64,000 games) was tried on a development world and not
kept: it did no better there. Round 12's held-out figures (world 6262) are that model's
(DETECTION.md, round 12). The fifteenth session rebuilt it from the same world for
FEATURES_VERSION 10 (the evidence counts behind ``hc_lr``, whose shifts the model now fits);
round 13's figures (world 8585) are that model's. The sixteenth session rebuilt it for
FEATURES_VERSION 11 (Michigan look-alike starts match the suit held); round 14's figures
(world 4747) are that model's. The eighteenth session rebuilt it for FEATURES_VERSION 12
(a Michigan start's hidden reach against starts with as many cards above the run); round
15's figures (world 5858) are that model's; rounds 16-17 fitted the same bundle (with
the learner changes they record). The twenty-fifth session rebuilt it from the same seed
after the simulator's accounts were renumbered (a seeded permutation, audit 54), which
reseats every world: round 18's figures (world 7801) are that model's. The twenty-eighth
session rebuilt it from the same seed for FEATURES_VERSION 13 (``hc_lr`` reads free-choice
discards only): round 19's figures (world 8303) are this model's. Its feature tables
are computed by fraud/features.py; :data:`~rummyguard.fraud.features.FEATURES_VERSION` is recorded in the
bundle, and a bundle of another version is refused (bump the version when a feature's
definition changes, then rebuild the bundle; ``tests/test_builtin_model.py`` holds the two
together).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import polars as pl
import sklearn

from .features import FEATURES_VERSION
from .models import MODEL_VERSION, FraudModel, ModelError, load_model

#: the shipped training data (package data of rummyguard.fraud)
BUNDLE = Path(__file__).parent / "builtin"
BUNDLE_FILES = ("players.parquet", "pairs.parquet", "training.json")
#: the ``--model`` values that are not file paths
BUILTIN, NONE = "builtin", "none"


class BundleError(ModelError):
    """The shipped training data is missing, damaged or of another feature version."""


def cache_dir() -> Path:
    """Where the fitted built-in model is kept (see the module docstring)."""
    if os.environ.get("RUMMYGUARD_CACHE"):
        return Path(os.environ["RUMMYGUARD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rummyguard"


def bundle_key(bundle: Path = BUNDLE) -> str:
    """What the fitted model depends on, hashed: the bundle's bytes, the model format,
    the scikit-learn version and the code that fits (fraud/models.py, and
    fraud/fast_binning.py, whose bin edges the boosting learners split on)."""
    h = hashlib.sha256()
    for name in BUNDLE_FILES:
        try:
            h.update((bundle / name).read_bytes())
        except OSError as exc:
            raise BundleError(f"the built-in training data is incomplete: {exc}") from None
    h.update(f"{MODEL_VERSION}|{sklearn.__version__}|".encode())
    for code in ("models.py", "fast_binning.py"):
        h.update((Path(__file__).parent / code).read_bytes())
    return h.hexdigest()[:16]


def read_bundle(bundle: Path = BUNDLE) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    """The shipped feature tables and training description, checked against this code."""
    try:
        meta = orjson.loads((bundle / "training.json").read_bytes())
        players = pl.read_parquet(bundle / "players.parquet")
        pairs = pl.read_parquet(bundle / "pairs.parquet")
    except (OSError, orjson.JSONDecodeError, pl.exceptions.PolarsError) as exc:
        raise BundleError(f"the built-in training data cannot be read: {exc}") from None
    if meta.get("features_version") != FEATURES_VERSION:
        raise BundleError(
            f"the built-in training data has features version {meta.get('features_version')}, "
            f"this rummyguard computes version {FEATURES_VERSION}; rebuild it "
            "(benchmarks/detection/build_builtin.py)")
    return players, pairs, meta


def fit_builtin(bundle: Path = BUNDLE) -> FraudModel:
    """Fit the supervised and unsupervised detectors on the shipped training world,
    exactly as ``rummyguard eval`` fits on a training world (its acted cases only)."""
    players, pairs, meta = read_bundle(bundle)
    player_pos = {m: set(v) for m, v in meta["player_pos"].items()}
    pair_pos = {m: {(a, b) for a, b in v} for m, v in meta["pair_pos"].items()}
    model = FraudModel().fit(
        players, pairs, player_pos, pair_pos,
        ignore_players=set(meta["ignore_players"]),
        ignore_pairs={(a, b) for a, b in meta["ignore_pairs"]})
    model.trained_on["world"] = {"seed": meta["world"]["simulated"].get("seed"), **meta["world"]}
    model.trained_on["builtin"] = {"key": bundle_key(bundle), "features_version": FEATURES_VERSION}
    return model


def builtin_model(*, note: Callable[[str], None] | None = None,
                  bundle: Path = BUNDLE) -> FraudModel:
    """The built-in model: from the cache when it is there and current, else fitted now
    (``note`` is told, once, that this takes a minute) and cached for next time."""
    key = bundle_key(bundle)
    try:
        path = cache_dir() / f"builtin-model-{key}.joblib"
        cached = _load_cached(path)
        if cached is not None:
            return cached
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_suffix(".lock"), "a+b")  # noqa: SIM115 (held across the fit)
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home directory to put it in
        if note is not None:
            note(f"cannot cache the built-in model ({exc}); fitting it in memory (about 15 seconds)")
        return fit_builtin(bundle)
    with lock:
        _lock(lock, note)  # another process fitting it: wait, then read its file
        cached = _load_cached(path)
        if cached is not None:
            return cached
        if note is not None:
            note(f"fitting the built-in model on its simulated training world (about 15 seconds, "
                 f"once; cached in {path.parent})")
        model = fit_builtin(bundle)
        _save_atomic(model, path, note)
    return model


def _save_atomic(model: FraudModel, path: Path, note: Callable[[str], None] | None) -> None:
    """Write the model so that a reader sees no file or the whole file."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".builtin-", suffix=".joblib")
        os.close(fd)
        model.save(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        if note is not None:
            note(f"could not cache the built-in model ({exc}); it will be fitted again next time")
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _lock(lock: Any, note: Callable[[str], None] | None) -> None:
    """Hold the cache's lock file; say so when another process holds it (it is fitting
    the model: this one waits, then reads its file). A file system without locks: go on
    unlocked (at worst both processes fit, and the atomic write keeps the file whole)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if note is not None:
            note("waiting for another process that is fitting the built-in model")
        with contextlib.suppress(OSError):
            fcntl.flock(lock, fcntl.LOCK_EX)
    except OSError:
        pass


def _load_cached(path: Path) -> FraudModel | None:
    try:
        if not path.is_file():
            return None
        return load_model(path)
    except (ModelError, OSError):
        return None  # missing, unreadable, damaged or foreign: fit again and replace it


class ChosenModel(NamedTuple):
    """What a ``--model`` value resolved to."""

    model: FraudModel | None  # None: the unsupervised detector alone
    value: str  # "builtin", "none" or the file's path (machine-readable)
    label: str  # for people: "built-in model", "unsupervised only", "model PATH"


def resolve_model(value: str | None, *, note: Callable[[str], None] | None = None) -> ChosenModel:
    """A ``--model`` value -> the model to score with.

    ``builtin`` (the default; ``$RUMMYGUARD_MODEL`` changes the default), ``none``, or a
    path to a model saved by ``rummyguard eval --save-model``. Raises :class:`ModelError`
    with a one-line reason when the value cannot be used."""
    if value is None:
        value = os.environ.get("RUMMYGUARD_MODEL") or BUILTIN
        if value not in (BUILTIN, NONE) and not Path(value).exists():  # say where it came from
            raise ModelError(f"no model file at {value} (from $RUMMYGUARD_MODEL)")
    if not value.strip():  # Path("") is ".", the working folder: say what was wrong
        raise ModelError("--model is empty: give 'builtin', 'none' or a model file")
    if value == NONE:
        return ChosenModel(None, NONE, "unsupervised only")
    if value == BUILTIN:
        return ChosenModel(builtin_model(note=note), BUILTIN, "built-in model")
    return ChosenModel(load_model(value), value, f"model {value}")
