"""Session 15, a risk analyst's walk through the CLI (persona test): three messages that
named the wrong thing. Each is one line on stderr with exit code 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rummyguard.cli.app import app

EXAMPLE = Path(__file__).parent / "data" / "spec" / "classic-3p.jsonl"


def _store(tmp_path: Path) -> str:
    db = tmp_path / "s.duckdb"
    assert CliRunner().invoke(app, ["ingest", str(EXAMPLE), "--db", str(db), "--no-progress"]).exit_code == 0
    return str(db)


def _err(args: list[str], env: dict[str, str], cwd: Path, monkeypatch: object) -> str:
    monkeypatch.chdir(cwd)  # type: ignore[attr-defined]
    out = CliRunner().invoke(app, args, env=env)
    assert out.exit_code == 2, (out.exit_code, out.stdout, out.stderr)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


def test_an_empty_store_variable_means_the_default_store(tmp_path: Path, monkeypatch: object) -> None:
    """``RUMMYGUARD_DB= rummyguard flags`` said "no store at ." (the empty path is the
    working folder); an empty variable is an unset one."""
    line = _err(["flags"], {"RUMMYGUARD_DB": ""}, tmp_path, monkeypatch)
    assert "no store at rummyguard.duckdb" in line, line


def test_a_bad_model_variable_is_named(tmp_path: Path, monkeypatch: object) -> None:
    """``RUMMYGUARD_MODEL=bogus rummyguard scan`` said "no model file at bogus", leaving the
    analyst to find where "bogus" came from."""
    line = _err(["scan", "--db", _store(tmp_path)], {"RUMMYGUARD_MODEL": "bogus"},
                tmp_path, monkeypatch)
    assert "bogus" in line and "$RUMMYGUARD_MODEL" in line, line


def test_a_file_that_is_no_model_says_what_a_model_is(tmp_path: Path, monkeypatch: object) -> None:
    labels = tmp_path / "labels.json"
    labels.write_text('{"mechanisms": []}', encoding="utf-8")
    line = _err(["scan", "--db", _store(tmp_path), "--model", str(labels)], {},
                tmp_path, monkeypatch)
    assert "is not a rummyguard model" in line and "--save-model" in line, line


def test_scan_parquet_refuses_a_folder_of_other_files(tmp_path: Path, monkeypatch: object) -> None:
    """``scan --parquet DIR`` wrote its fact files into an export folder (breaking its Hive
    layout for DuckDB and Polars) or beside unrelated files. A folder holding anything but
    the facts an earlier scan wrote is refused before the scan runs; that folder itself is
    rewritten."""
    db = _store(tmp_path)
    busy = tmp_path / "busy"
    (busy / "variant=classic").mkdir(parents=True)
    line = _err(["scan", "--db", db, "--model", "none", "--no-progress", "--parquet", str(busy)],
                {}, tmp_path, monkeypatch)
    assert "holds other files (variant=classic)" in line, line
    assert [p.name for p in busy.iterdir()] == ["variant=classic"]  # nothing written
    facts = tmp_path / "facts"
    for _ in range(2):  # the nightly case: the same folder again
        out = CliRunner().invoke(app, ["scan", "--db", db, "--model", "none", "--no-progress",
                                       "--parquet", str(facts)])
        assert out.exit_code == 0, out.stderr
    assert {p.suffix for p in facts.iterdir()} == {".parquet"}


def test_replay_refuses_files_and_a_store_together(tmp_path: Path, monkeypatch: object) -> None:
    """``replay GAME FILES --db S`` read FILES and ignored the store without a word (session
    16): the support agent could believe he saw the stored game. One or the other."""
    db = _store(tmp_path)
    line = _err(["replay", "example-classic", str(EXAMPLE), "--db", db], {}, tmp_path, monkeypatch)
    assert "FILES or --db, not both" in line, line
    ok = CliRunner().invoke(app, ["replay", "example-classic", "--db", db, "--json"])
    assert ok.exit_code == 0, ok.output
