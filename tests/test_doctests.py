"""Every example in a docstring runs: the docs cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import rummyguard
from rummyguard._compiled import MODULES as COMPILED_MODULES

ROOT = Path(rummyguard.__file__).parent


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="rummyguard."):
        if info.name.split(".")[1] not in {"events", "replay", "sim", "fraud", "cli"}:
            continue
        rel = info.name.split(".")[1:]
        path = ROOT.joinpath(*rel)
        source = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        if source.is_file() and ">>>" in source.read_text(encoding="utf-8"):
            names.append(info.name)
    return sorted(names)


MODULES = _modules_with_examples()
#: a compiled module's functions carry no examples to run: those run on the sources
_PARAMS = [pytest.param(name, marks=pytest.mark.pure_source)
           if name.removeprefix("rummyguard.") in COMPILED_MODULES else name for name in MODULES]


def test_examples_are_found() -> None:
    # the modules known to carry examples; a walk that finds none would pass vacuously
    assert {"rummyguard.events.cards", "rummyguard.events.hashing",
            "rummyguard.events.gcpause", "rummyguard.replay.rules.melds"} <= set(MODULES)


@pytest.mark.parametrize("name", _PARAMS)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 or name.endswith("__init__")
    assert result.failed == 0
