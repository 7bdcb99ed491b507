"""Build step: the replay engine's modules compiled to C extensions with mypyc.

Everything else about the package is in pyproject.toml. The modules in
``rummyguard/_compiled.py``'s ``MODULES`` (the engine, the four variants, the meld logic,
hashing and timestamps: the per-event work of ``rummyguard verify``; and the fraud facts'
hand evaluator, the per-discard work of ``rummyguard scan``) are compiled from
their own typed Python source by mypyc (part of mypy), a well-kept compiler; nothing is
hand-written in C. The sources stay the reference: ``RUMMYGUARD_PURE=1`` runs them as
plain Python, and a source edited after the build is run as plain Python until the next
build (``rummyguard/__init__.py``), so a compiled module is never stale.

The build is optional. With ``RUMMYGUARD_PURE=1`` set at install time, or when mypyc or
a C compiler fails, the package installs as plain Python (about 1.2x slower replay;
benchmarks/RESULTS.md); the install log (pip -v) and `rummyguard --version` say so.

mypy names a module after its path, and this repository's root *is* the package
``rummyguard`` (pyproject.toml's package-dir), so mypyc is given a copy of the package's
Python files in ``build/mypyc-src/rummyguard/`` (the compiled modules' tracebacks point
there).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from _compiled import MANIFEST, MODULES, module_base, source_hashes  # noqa: E402  (shared with the guard)

sys.path.pop(0)


def _warn(message: str) -> None:
    print(f"rummyguard: {message}; installing the engine as plain Python", file=sys.stderr)


def _clear_old_build() -> None:
    """Remove what an earlier in-place build left (before an in-place build only: a wheel
    built from this tree leaves the tree's own build alone): a module this build fails to
    compile must not keep an old extension beside a manifest that vouches for its source."""
    (ROOT / MANIFEST).unlink(missing_ok=True)
    for name in (*MODULES, "native__mypyc"):
        base = module_base(ROOT, name)
        for old in base.parent.glob(base.name + ".*.so"):
            old.unlink()


#: the package's directories (pyproject.toml's packages), relative to the root
_PACKAGES = ("events", "replay", "replay/rules", "sim", "fraud", "cli")

#: the setup.py commands that build (pip's build hooks run setup.py for metadata too,
#: which must not compile anything), and those that build into this tree
_BUILDS = {"bdist_wheel", "editable_wheel", "build", "build_ext", "develop", "install"}
_IN_PLACE = {"editable_wheel", "develop", "--inplace", "-i"}
#: module -> SHA-256 of the source compiled (the manifest, written beside the build)
_COMPILED: dict[str, str] = {}


def _extensions() -> list:
    if not _BUILDS & set(sys.argv[1:]):
        return []
    if _IN_PLACE & set(sys.argv[1:]):
        _clear_old_build()
    if os.environ.get("RUMMYGUARD_PURE"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as exc:
        _warn(f"mypyc is not available ({exc})")
        return []
    # a copy of the package's Python files (not a link: a link to the root inside the
    # root is a loop for anything that walks the tree)
    copy = ROOT / "build" / "mypyc-src" / "rummyguard"
    shutil.rmtree(copy, ignore_errors=True)
    for package in ("", *_PACKAGES):
        (copy / package).mkdir(parents=True, exist_ok=True)
        for source in (ROOT / package).glob("*.py"):
            shutil.copy2(source, copy / package / source.name)
    here = os.getcwd()
    os.chdir(ROOT)  # mypy reads its settings ([tool.mypy]) from here
    try:
        paths = [str(module_base(copy.relative_to(ROOT), m).with_suffix(".py")) for m in MODULES]
        extensions = mypycify(paths, opt_level="3", group_name="rummyguard.native")
        _COMPILED.update(source_hashes(copy))
        return extensions
    except (Exception, SystemExit) as exc:  # mypy reports a type error by SystemExit
        _warn(f"mypyc could not compile the engine ({exc!r})")
        return []
    finally:
        os.chdir(here)


def _manifest_bytes(hashes: dict[str, str]) -> bytes:
    """The manifest's bytes (the build environment has only the build requirements)."""
    import json

    return (json.dumps(hashes, indent=1, sort_keys=True) + "\n").encode()


class OptionalBuildExt(build_ext):
    """A C compiler that fails leaves the plain-Python package, not a failed install."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # one compiler per core: the modules build independently
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            _warn(f"the C build failed ({exc!r})")
            return
        # the manifest goes where the extensions went: the wheel's tree, and this tree too
        # when the build is in place (an editable install)
        targets = [Path(self.build_lib) / "rummyguard"]
        if self.inplace or getattr(self, "editable_mode", False):
            targets.append(ROOT)
        for target in targets:
            target.mkdir(parents=True, exist_ok=True)
            (target / MANIFEST).write_bytes(_manifest_bytes(_COMPILED))

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:
            _warn(f"{ext.name} did not build ({exc!r})")


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
