"""Audit 50: every command given bad input or a bad environment (README "Errors a user can
cause (a missing or unreadable file, an unusable store, an unknown game, a refused query)
are one line on stderr with exit code 2, never a traceback"; "a bad line is quarantined
with its reason, never dropped").

The 17 defects this audit found, each pinned by a test below that failed before its fix:
a store of an older schema and another program's tables under our names (now refused
before anything is written: ``events/store.py`` ``_schema_mismatch``); a Parquet ``raw``
column of numbers or structs (a traceback, or 5 NUL bytes for the value 5); a quarantined
seq past 32 bits in the replay tables (now BIGINT); ``demo --keep`` on a folder;
``eval --save-facts`` onto a file; ``simulate --db`` into another program's DuckDB file;
non-UTF-8 file and store names; a store called ``information_schema``; ``simulate --out``
onto a FIFO (it was replaced by a regular file); ``eval`` given a JSON object that is not a
labels file (it scored a world without fraud) or a Parquet log; a full disk under
``replay --html``, ``simulate --out``, ``ingest`` and ``eval --save-model`` (outputs are
now written whole or not at all; ``cli/entry.py`` turns a full disk or a damaged store
file into one line); a damaged store file; ``scan --parquet`` into a non-UTF-8 folder."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

RG = str(Path(sys.executable).with_name("rummyguard"))
SPEC_LOG = Path(__file__).parent / "data" / "spec" / "classic-3p.jsonl"


def rg(*args: object, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RG, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 2, (r.returncode, r.stderr[-800:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr[-1500:]
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- a store from an older rummyguard (before store.events.ts_text, commit de1f61d) ------

@pytest.fixture()
def older_store(tmp_path: Path) -> Path:
    db = tmp_path / "old.duckdb"
    assert rg("ingest", SPEC_LOG, "--db", db, "--no-progress").returncode == 0
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE store.events DROP COLUMN ts_text")  # as the first release made it
    con.close()
    return db


@pytest.mark.parametrize("args", [["verify", "--no-progress"], ["verify-log"], ["checkpoint"],
                                  ["ingest", str(SPEC_LOG), "--no-progress"],
                                  ["scan", "--model", "none", "--no-progress", "--workers", "0"]],
                         ids=["verify", "verify-log", "checkpoint", "ingest", "scan"])
def test_a_store_of_an_older_schema_is_one_line(older_store: Path, args: list[str]) -> None:
    one_line_error(rg(*args, "--db", older_store))


# --- a DuckDB file of another program that uses our table names -------------------------

def test_a_duckdb_file_with_our_table_names_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE SCHEMA store")
    con.execute("CREATE TABLE store.meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("CREATE TABLE store.events (x INTEGER)")
    con.execute("INSERT INTO store.events VALUES (1)")
    con.close()
    before = digest(db)
    r = rg("verify", "--db", db, "--no-progress")
    assert digest(db) == before, "the other program's file was written to"
    one_line_error(r)


# --- Parquet input whose `raw` column is not text or binary ------------------------------

def test_parquet_raw_column_of_floats_is_not_a_traceback(tmp_path: Path) -> None:
    src = tmp_path / "raw-float.parquet"
    pq.write_table(pa.table({"raw": [1.5, 2.5]}), src)
    db = tmp_path / "s.duckdb"
    r = rg("ingest", src, "--db", db, "--no-progress")
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode in (1, 2), r.returncode
    if r.returncode == 1:  # quarantined: then every row is accounted for
        assert "read 2 = stored 0 + duplicates 0 + quarantined 2" in r.stdout, r.stdout


def test_parquet_raw_column_of_integers_keeps_what_the_row_held(tmp_path: Path) -> None:
    src = tmp_path / "raw-int.parquet"
    pq.write_table(pa.table({"raw": [5]}), src)
    db = tmp_path / "s.duckdb"
    r = rg("ingest", src, "--db", db, "--no-progress")
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    if r.returncode == 2:  # refused whole: fine
        return
    con = duckdb.connect(str(db), read_only=True)
    raws = [bytes(b) for (b,) in con.execute("SELECT raw_bytes FROM store.quarantine").fetchall()]
    con.close()
    assert raws and all(b"5" in raw for raw in raws), raws


# --- a quarantined line whose seq does not fit 32 bits -----------------------------------

def test_verify_of_a_store_with_a_quarantined_seq_past_32_bits(tmp_path: Path) -> None:
    import json

    event = json.loads(SPEC_LOG.read_text().splitlines()[0])
    event.update(game_id="g-big", event_id="e-big", seq=2**31)
    log = tmp_path / "big.jsonl"
    log.write_text(json.dumps(event) + "\n")
    db = tmp_path / "s.duckdb"
    ingest = rg("ingest", log, "--db", db, "--no-progress")
    assert ingest.returncode == 1 and "quarantined 1" in ingest.stdout, ingest.stdout
    from_file = rg("verify", log, "--json")
    assert from_file.returncode == 1, from_file.stderr[-800:]  # a finding: the invalid line
    r = rg("verify", "--db", db, "--no-progress", "--json")
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 1, (r.returncode, r.stderr[-800:])


# --- demo --keep on an unusable store ---------------------------------------------------

def test_demo_keep_on_a_folder_as_the_store_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "folder1"
    folder.mkdir()
    r = rg("demo", "--db", folder, "--keep", "--games", 10, "--model", "none",
           "--out", tmp_path / "out")
    assert "store" in one_line_error(r).replace(str(folder), "F")


# --- eval --save-facts onto a file ------------------------------------------------------

def test_eval_save_facts_onto_a_file_is_one_line(tmp_path: Path) -> None:
    log, labels = tmp_path / "w.jsonl", tmp_path / "l.json"
    assert rg("simulate", "--games", 4, "--seed", 5, "--out", log, "--labels", labels,
              "--no-progress").returncode == 0
    target = tmp_path / "facts.txt"
    target.write_text("mine\n")
    r = rg("eval", "--test", log, "--test-labels", labels, "--model", "builtin",
           "--save-facts", target, "--no-lomo", "--boots", 0, "--workers", 0)
    assert target.read_text() == "mine\n"
    assert "--save-facts" in one_line_error(r)


# --- simulate --db onto another program's DuckDB file -----------------------------------

def _foreign(path: Path, *tables: str) -> Path:
    con = duckdb.connect(str(path))
    for table in tables:
        con.execute(f"CREATE TABLE {table} (x INTEGER)")
    con.close()
    return path


def test_simulate_into_a_foreign_duckdb_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    db = _foreign(tmp_path / "theirs.duckdb", "t")
    before = digest(db)
    r = rg("simulate", "--games", 2, "--seed", 1, "--db", db, "--no-progress")
    assert digest(db) == before, "another program's database was written to"
    assert "not a rummyguard store" in one_line_error(r)


def test_simulate_into_a_foreign_duckdb_with_an_events_table_is_one_line(tmp_path: Path) -> None:
    db = _foreign(tmp_path / "theirs.duckdb", "events", "games")
    one_line_error(rg("simulate", "--games", 2, "--seed", 1, "--db", db, "--no-progress"))


# --- file names that are not UTF-8 (a Latin-1 file system, an old export) --------------

def test_ingest_of_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    import os

    log = tmp_path / os.fsdecode(b"bad\xffname.jsonl")
    log.write_bytes(SPEC_LOG.read_bytes())
    assert rg("verify", log).returncode == 0
    r = rg("ingest", log, "--db", tmp_path / "s.duckdb", "--no-progress")
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 0 or len(r.stderr.strip().splitlines()) == 1, r.stderr[-1500:]


def test_a_store_path_that_is_not_utf8_is_one_line_or_works(tmp_path: Path) -> None:
    import os

    db = tmp_path / os.fsdecode(b"db\xff.duckdb")
    r = rg("ingest", SPEC_LOG, "--db", db, "--no-progress")
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 0 or len(r.stderr.strip().splitlines()) == 1, r.stderr[-1500:]


# --- a store file named after a DuckDB system schema ------------------------------------

def test_a_store_named_information_schema_is_refused_or_usable(tmp_path: Path) -> None:
    db = tmp_path / "information_schema.duckdb"
    r = rg("ingest", SPEC_LOG, "--db", db, "--no-progress")
    if r.returncode == 2:  # refused up front, as store.duckdb is: fine
        one_line_error(r)
        return
    assert r.returncode == 0, r.stderr[-800:]
    q = rg("sql", "--db", db, "-f", "csv", "select count(*) from events")
    assert "Traceback" not in q.stderr, q.stderr[-1500:]
    assert q.returncode == 0 and q.stdout.splitlines()[1] == "27", (q.stdout, q.stderr[-500:])


# --- simulate --out onto a pipe (a FIFO; /dev/stdout is the everyday case) --------------

def _through_fifo(fifo: Path, *args: object, timeout: int = 300) -> bytes:
    """Run ``rummyguard *args`` (which names ``fifo`` as its output) with a reader on the
    named pipe; what came through it. Fails if the command failed or replaced the pipe."""
    import os
    import stat
    import threading

    os.mkfifo(fifo)
    received: list[bytes] = []

    def read_all() -> None:  # blocks until the writer opens the pipe, reads to its end
        with open(fifo, "rb") as stream:
            received.append(stream.read())

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    r = rg(*args, timeout=timeout)
    reader.join(timeout=10)
    if reader.is_alive():  # the command never opened the pipe: release the reader
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
    assert r.returncode == 0, r.stderr[-800:]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert received and received[0], "nothing came through the pipe"
    return received[0]


def test_simulate_out_to_a_fifo_writes_through_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    data = _through_fifo(fifo, "simulate", "--games", 1, "--seed", 1, "--out", fifo, "--no-progress")
    assert data.startswith(b"{")


# --- eval --test-labels naming a JSON object that is not a labels file ------------------

def test_eval_refuses_a_json_object_that_is_not_a_labels_file(tmp_path: Path) -> None:
    import json

    log, labels = tmp_path / "w.jsonl", tmp_path / "l.json"
    assert rg("simulate", "--games", 4, "--seed", 5, "--out", log, "--labels", labels,
              "--no-progress").returncode == 0
    manifest = tmp_path / "manifest.json"  # what `unzip bundle.zip` leaves beside the log
    manifest.write_text(json.dumps({"format": "rummyguard.dispute-bundle", "version": 1,
                                    "game_id": "t000000-00", "members": {}}))
    r = rg("eval", "--test", log, "--test-labels", manifest, "--model", "builtin",
           "--no-lomo", "--boots", 0, "--workers", 0)
    assert "labels" in one_line_error(r).replace(str(manifest), "F")  # not the test's folder


# --- eval --test naming a Parquet event log (what ingest/verify/replay read) ------------

def test_eval_of_a_parquet_event_log_works_or_says_parquet(tmp_path: Path) -> None:
    log, labels = tmp_path / "w.jsonl", tmp_path / "l.json"
    assert rg("simulate", "--games", 4, "--seed", 5, "--out", log, "--labels", labels,
              "--no-progress").returncode == 0
    events = tmp_path / "world-events"  # a Parquet file; no .parquet in its name
    pq.write_table(pa.table({"raw": log.read_text().splitlines()}), events)
    assert rg("verify", events).returncode in (0, 1)
    r = rg("eval", "--test", events, "--test-labels", labels, "--model", "builtin",
           "--no-lomo", "--boots", 0, "--workers", 0)
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    if r.returncode != 0:
        line = one_line_error(r).replace(str(events), "F")  # the test's folder says parquet
        assert "parquet" in line.lower(), r.stderr


# --- a disk that fills up while an output file is written -------------------------------

def _small_files(limit: int = 65536):
    """preexec_fn: files of this process may not grow past ``limit`` bytes (EFBIG, as a full
    disk gives ENOSPC: the same OSError path), without root or a tmpfs."""
    import resource
    import signal

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def rg_small_files(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RG, *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_small_files())


@pytest.fixture(scope="module")
def spec_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("a50store") / "s.duckdb"
    assert rg("ingest", SPEC_LOG, "--db", db, "--no-progress").returncode == 0
    return db


def test_replay_html_on_a_full_disk_leaves_no_half_page(spec_store: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    page.write_text("the earlier page\n")
    r = rg_small_files("replay", "example-classic", "--db", spec_store, "--html", page)
    assert "cannot write" in one_line_error(r)
    assert page.read_text() == "the earlier page\n", f"{page.stat().st_size} bytes of a half page"


def test_simulate_out_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    r = rg_small_files("simulate", "--games", 30, "--seed", 1, "--out", out, "--no-progress")
    assert "--out" in one_line_error(r)
    assert not out.exists() and not (tmp_path / "w.jsonl.part").exists()



def test_ingest_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    log, db = tmp_path / "w.jsonl", tmp_path / "s.duckdb"
    assert rg("simulate", "--games", 12, "--seed", 3, "--out", log, "--no-progress"
              ).returncode == 0
    r = subprocess.run([RG, "ingest", str(log), "--db", str(db), "--no-progress",
                        "--batch-lines", "500"], capture_output=True, text=True, timeout=300,
                       preexec_fn=_small_files(500_000))
    one_line_error(r)


def test_eval_save_model_on_a_full_disk_keeps_the_earlier_model(tmp_path: Path) -> None:
    worlds = []
    for seed in (3, 4):
        log, labels = tmp_path / f"w{seed}.jsonl", tmp_path / f"l{seed}.json"
        assert rg("simulate", "--games", 12, "--seed", seed, "--out", log, "--labels", labels,
                  "--no-progress").returncode == 0
        worlds.append((log, labels))
    (train, train_labels), (test, test_labels) = worlds
    model = tmp_path / "m.joblib"
    args = ["eval", "--train", train, "--train-labels", train_labels, "--test", test,
            "--test-labels", test_labels, "--save-model", model, "--no-lomo", "--boots", 0,
            "--workers", 0]
    assert rg(*args).returncode == 0
    before = digest(model)
    r = subprocess.run([RG, *map(str, args)], capture_output=True, text=True, timeout=300,
                       preexec_fn=_small_files(8192))
    assert "--save-model" in one_line_error(r)
    assert digest(model) == before, f"the earlier model is now {model.stat().st_size} bytes"


# --- a damaged store file (a bad block: disk, copy or backup damage) --------------------

@pytest.fixture(scope="module")
def damaged_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("a50damaged")
    log, db = d / "w.jsonl", d / "s.duckdb"
    assert rg("simulate", "--games", 12, "--seed", 3, "--out", log, "--no-progress"
              ).returncode == 0
    assert rg("ingest", log, "--db", db, "--no-progress").returncode == 0
    with db.open("r+b") as f:  # 40 kB of garbage in the data blocks past the header
        f.seek(300_000)
        f.write(b"\xde\xad" * 20_000)
    r = rg("sql", "--db", db, "select count(*) from events")
    assert r.returncode == 2 and "Corrupt database file" in r.stderr, r.stderr  # sql: one line
    return db


@pytest.mark.parametrize("args", [["verify", "--no-progress"], ["verify-log"],
                                  ["replay", "t000000-00"],
                                  ["ingest", str(SPEC_LOG), "--no-progress"]],
                         ids=["verify", "verify-log", "replay", "ingest"])
def test_a_damaged_store_is_one_line(damaged_store: Path, tmp_path: Path,
                                     args: list[str]) -> None:
    db = tmp_path / "s.duckdb"
    db.write_bytes(damaged_store.read_bytes())
    assert "Corrupt" in one_line_error(rg(*args, "--db", db))


def test_scan_parquet_into_a_folder_whose_name_is_not_utf8(spec_store: Path,
                                                           tmp_path: Path) -> None:
    import os

    db = tmp_path / "s.duckdb"
    db.write_bytes(spec_store.read_bytes())
    folder = tmp_path / os.fsdecode(b"facts\xff")
    r = rg("scan", "--db", db, "--model", "none", "--no-progress", "--workers", 0,
           "--parquet", folder)
    assert "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 0 or len(r.stderr.strip().splitlines()) == 1, r.stderr[-1500:]


# --- left open by audit 50, fixed in session 24 -----------------------------------------

def test_schema_out_on_a_full_disk_leaves_no_half_schema(tmp_path: Path) -> None:
    """Each schema file is whole or absent (the largest, GameCreated.v1, is ~3.9 kB)."""
    import json

    out = tmp_path / "schemas"
    out.mkdir()
    earlier = out / "GameCreated.v1.schema.json"
    earlier.write_text('{"earlier": true}')
    r = subprocess.run([RG, "schema", "--out", str(out)], capture_output=True, text=True,
                       timeout=120, preexec_fn=_small_files(2048))
    assert "cannot write" in one_line_error(r)
    assert earlier.read_text() == '{"earlier": true}', "the earlier schema was cut"
    written = sorted(out.iterdir())
    assert all(p.name.endswith(".schema.json") for p in written), written  # no .part left
    for path in written:
        json.loads(path.read_text())  # a half file would not parse


def test_dispute_bundle_into_a_fifo_writes_through_it(tmp_path: Path) -> None:
    """``dispute --bundle`` onto a named pipe streams the zip through it (it used to rename a
    regular file over the pipe: the reader got nothing)."""
    import io
    import zipfile

    db = tmp_path / "s.duckdb"
    assert rg("ingest", SPEC_LOG, "--db", db, "--no-progress").returncode == 0
    assert rg("checkpoint", "--db", db).returncode == 0
    fifo = tmp_path / "bundle.pipe"
    data = _through_fifo(fifo, "dispute", "example-classic", "--db", db, "--bundle", fifo)
    with zipfile.ZipFile(io.BytesIO(data)) as bundle:
        assert "manifest.json" in bundle.namelist()


def test_fact_parquet_on_a_full_disk_keeps_the_earlier_file(tmp_path: Path) -> None:
    """``scan --parquet`` / ``eval --save-facts`` write each fact file whole
    (``fraud.pipeline.write_parquet``): a disk that fills up midway keeps the earlier file
    readable, instead of leaving a truncated Parquet file."""
    earlier = pa.table({"x": [1, 2, 3]})
    pq.write_table(earlier, tmp_path / "moves.parquet")
    script = (
        "import sys, numpy as np, pyarrow as pa\n"
        "from rummyguard.fraud.pipeline import write_parquet\n"
        "big = pa.table({'x': np.random.default_rng(0).integers(0, 2**62, 400_000)})\n"
        "try:\n"
        "    write_parquet({'moves': big}, sys.argv[1])\n"
        "except OSError:\n"
        "    sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                       text=True, timeout=120, preexec_fn=_small_files(200_000))
    assert r.returncode == 3, (r.returncode, r.stderr[-800:])
    assert pq.read_table(tmp_path / "moves.parquet").equals(earlier)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["moves.parquet"]
