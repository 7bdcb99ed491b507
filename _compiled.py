"""The modules mypyc compiles (setup.py), and the guard that keeps a compiled module
from ever running code other than its source.

The build compiles :data:`MODULES` as one group and records the SHA-256 of each source in
``native.json`` beside them. At import (``rummyguard/__init__.py``) the compiled modules
are used only if every one of them is there and every source still has its recorded
hash; otherwise all of them run as plain Python (a compiled module and a plain one
cannot subclass each other's classes, so it is all or none). So an edited source takes
effect at once (slower, with a warning, until the next ``make``), a partial build is
never half used, and ``RUMMYGUARD_PURE=1`` runs the sources whatever was built: the
reference the compiled build is tested against (tests/test_compiled.py).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: the compiled modules, relative to the package: the per-event work of a replay (not
#: ``replay.rules.poker``: its public functions check what callers pass them, numpy
#: integers included, which a compiled module's type checks would refuse first), and
#: ``fraud.handeval``, the meld distances and card gains the scan's facts compute for
#: every discard and move (a third of a scan's time as plain Python)
MODULES: tuple[str, ...] = (
    "events.hashing",
    "events.timestamps",
    "replay.findings",
    "replay.variant",
    "replay.engine",
    "replay.rules.melds",
    "replay.rules.table",
    "replay.rules.classic",
    "replay.rules.r500",
    "replay.rules.liverpool",
    "replay.rules.michigan",
    "fraud.handeval",
)
#: the build's record of what it compiled: module -> SHA-256 of its source
MANIFEST = "native.json"
#: "compiled", "plain Python" (nothing was built) or "plain Python: <why>"
STATUS = "plain Python"


def module_base(root: Path, name: str) -> Path:
    """Where module ``name`` lives under ``root`` (the package directory), less its
    suffix: ``.py`` for the source, an extension suffix for the compiled module."""
    return root / name.replace(".", "/")


def source_hashes(root: Path) -> dict[str, str]:
    """module -> SHA-256 of its source under ``root`` (the package directory)."""
    return {
        name: hashlib.sha256(module_base(root, name).with_suffix(".py").read_bytes()).hexdigest()
        for name in MODULES
    }


def _built(root: Path, name: str) -> bool:
    base = str(module_base(root, name))
    return any(Path(base + suffix).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _why_plain(root: Path) -> str | None:
    """None if the compiled build may be used; else why not ("" = nothing was built)."""
    built = [name for name in MODULES if _built(root, name)]
    if not built:
        return ""
    if os.environ.get("RUMMYGUARD_PURE"):
        return "RUMMYGUARD_PURE is set"
    if len(built) < len(MODULES):
        missing = sorted(set(MODULES) - set(built))
        return f"the build is partial (not compiled: {', '.join(missing)})"
    try:
        recorded = json.loads((root / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return f"{MANIFEST} is missing or unreadable"
    changed = [name for name, digest in source_hashes(root).items() if recorded.get(name) != digest]
    if changed:
        return f"changed since the build: {', '.join(changed)} (run `make` to rebuild)"
    return None


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules' Python sources ahead of their extension modules."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def install(package: str, root: Path) -> str:
    """Decide between the compiled modules and their sources, before any is imported;
    returns (and sets) :data:`STATUS`."""
    global STATUS
    why = _why_plain(root)
    if why is None:
        STATUS = "compiled"
        return STATUS
    if why:
        STATUS = f"plain Python: {why}"
        sources = {f"{package}.{name}": module_base(root, name).with_suffix(".py") for name in MODULES}
        sys.meta_path.insert(0, _SourceFinder(sources))
        if not os.environ.get("RUMMYGUARD_PURE"):
            warnings.warn(f"rummyguard's compiled engine is not used: {why}", RuntimeWarning,
                          stacklevel=3)
    return STATUS
