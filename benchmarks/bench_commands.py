"""Wall, CPU and peak memory of each command the support agent and the analysts run, on a
seeded store: the scale audit's harness.

A store of N simulated games (seeded; all four variants; built once with ``rummyguard
simulate --db`` and then reused, cached under benchmarks/_work/) is given, one command
at a time, to:

- the support agent: ``replay GAME --db`` of the first, middle and last game (a single-game
  command must cost the same whatever the store's size), ``--at SEQ --as PLAYER``,
  ``--json`` and ``--html``;
- the risk analyst: ``verify-log``, ``verify --json``, ``scan --json``, ``flags``;
- the data analyst: the README's five analyst queries through ``rummyguard sql``, a
  count, a column dump as CSV, ``export --parquet`` and the same again with ``--overwrite``.

Each command is a child process of this one, timed by ``os.wait4``: wall seconds, CPU
seconds (user + system, the child and every process it waited for, as ``/usr/bin/time``
counts them) and peak RSS (the largest single process, not a sum). On a shared machine
other jobs inflate the wall figure, not the CPU one; compare two sizes by CPU and RSS
(``--games 2000`` and ``--games 20000``: x10 data should cost about x10, a single-game
command about x1). Files a command leaves beside the store are listed.

Prints one JSON document. Usage:
``python -m benchmarks.bench_commands [--games 2000] [--seed 808] [--only replay,verify-log]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._machine import cpu_model

WORK = Path(__file__).parent / "_work"
README = Path(__file__).parent.parent / "README.md"


def store(games: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The benchmark's store: N games of a seeded world, simulated into a store once and
    then reused (a partial build is never taken for a store: it is built under another
    name and renamed when complete)."""
    WORK.mkdir(exist_ok=True)
    path = WORK / f"commands-{games}-{seed}.duckdb"
    if path.exists():
        return path, {"built": False}
    part = WORK / f"commands-{games}-{seed}-building.duckdb"
    part.unlink(missing_ok=True)
    build = _timed([*_cli(), "simulate", "--games", str(games), "--seed", str(seed),
                    "--db", str(part), "--no-progress"])
    if build["exit_code"] != 0:
        raise SystemExit(f"simulate failed: {build['stderr_tail']}")
    part.rename(path)
    return path, {"built": True, "simulate": build}


def _cli() -> list[str]:
    return [sys.executable, "-m", "rummyguard.cli"]


def _timed(argv: list[str], cwd: Path | None = None) -> dict[str, Any]:
    """Run ``argv`` to completion; its wall, CPU (user, system) seconds and peak RSS."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE, cwd=cwd)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": proc.returncode,
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "user_s": round(usage.ru_utime, 3),
        "sys_s": round(usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
        "stderr_tail": err.decode("utf-8", "replace")[-300:].strip(),
    }


def analyst_queries() -> list[str]:
    """The README's analyst queries (between its analyst-queries markers)."""
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- analyst-queries -->", 1)[1].split("<!-- /analyst-queries -->", 1)[0]
    return [" ".join(line for line in q.splitlines() if not line.strip().startswith("--"))
            for q in re.findall(r"```sql\n(.*?)```", block, re.S)]


def commands(db: Path, out: Path) -> list[tuple[str, list[str]]]:
    """(name, arguments) of every command measured, on the store ``db``; ``out`` is a
    scratch folder for the page and the export."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        ids = [r[0] for r in con.execute(
            "SELECT game_id FROM store.games_chain ORDER BY game_id").fetchall()]
        middle = ids[len(ids) // 2]
        player = con.execute("SELECT payload->'seats'->>0 FROM store.events WHERE game_id = ? "
                             "AND type = 'GameCreated'", [middle]).fetchall()[0][0]
    finally:
        con.close()
    d = ["--db", str(db)]
    runs: list[tuple[str, list[str]]] = [
        ("replay first game", ["replay", ids[0], *d]),
        ("replay middle game", ["replay", middle, *d]),
        ("replay last game", ["replay", ids[-1], *d]),
        ("replay --at --as", ["replay", middle, *d, "--at", "20", "--as", player]),
        ("replay --json", ["replay", middle, *d, "--json"]),
        ("replay --html", ["replay", middle, *d, "--html", str(out / "game.html")]),
        ("verify-log", ["verify-log", *d]),
        ("verify", ["verify", *d, "--json"]),
        ("scan", ["scan", *d, "--json"]),
        ("scan again", ["scan", *d, "--json"]),
        ("flags", ["flags", *d]),
    ]
    runs += [(f"sql README query {k}", ["sql", *d, q]) for k, q in enumerate(analyst_queries(), 1)]
    runs += [
        ("sql count(*)", ["sql", *d, "SELECT count(*) FROM events"]),
        ("sql dump csv", ["sql", *d, "-f", "csv", "SELECT game_id, seq, type, actor FROM events"]),
        ("export --parquet", ["export", *d, "--parquet", str(out / "parquet")]),
        ("export --overwrite", ["export", *d, "--parquet", str(out / "parquet"), "--overwrite"]),
    ]
    return runs


def measure(db: Path, only: set[str] | None) -> dict[str, Any]:
    """Every command once, in order (verify and scan write the tables flags and the
    SQL views read); with the files each left beside the store."""
    out = WORK / f"{db.stem}-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    results: dict[str, Any] = {}
    try:
        for name, args in commands(db, out):
            if only and not any(name.startswith(prefix) for prefix in only):
                continue
            before = set(os.listdir(db.parent))
            result = _timed([*_cli(), *args])
            result["args"] = [a.replace(str(db), "STORE").replace(str(out), "OUT") for a in args]
            result["left_beside_store"] = sorted(set(os.listdir(db.parent)) - before)
            if result["exit_code"] not in (0, 1):  # 1: verify found findings, a valid answer
                result["error"] = result["stderr_tail"]
            del result["stderr_tail"]
            results[name] = result
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return results


def facts(db: Path) -> dict[str, Any]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        games, events = con.execute(
            "SELECT (SELECT count(*) FROM store.games_chain), count(*) FROM store.events"
        ).fetchall()[0]
    finally:
        con.close()
    return {"games": games, "events": events, "file_mb": round(db.stat().st_size / 2**20, 1)}


def machine() -> dict[str, Any]:
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // 1024
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "processor": cpu_model(), "memory_mb": mem,
            "python": platform.python_version(), "duckdb": duckdb.__version__,
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=808)
    ap.add_argument("--only", default="", help="comma-separated command name prefixes "
                    "(e.g. 'replay,verify-log'); default: all")
    args = ap.parse_args()
    db, built = store(args.games, args.seed)
    only = {p.strip() for p in args.only.split(",") if p.strip()} or None
    report: dict[str, Any] = {
        "command": f"python -m benchmarks.bench_commands --games {args.games} --seed {args.seed}"
                   + (f" --only {args.only}" if args.only else ""),
        "machine": machine(),
        "store": {**facts(db), **built},
    }
    report["commands"] = measure(db, only)
    report["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
