"""``rummyguard flags``: list the flags the last scan wrote."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import DbOption, db_path, fail, print_json


def flags(
    db: Path | None = DbOption,
    top: int = typer.Option(20, "--top", help="How many flags, strongest first."),
    mechanism: str | None = typer.Option(None, "--mechanism", help="Only flags of this mechanism.",
                                         show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
) -> None:
    """List flags (subject, score, likely mechanism, top signals, evidence to replay)."""
    import polars as pl

    from ..events.views import QueryError, connect_readonly
    from .scan_cmd import _flag_rows, _print_flags

    try:
        con = connect_readonly(db_path(db))
    except QueryError as exc:
        fail(str(exc))
    try:
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'fraud' "
                          "AND table_name = 'flags'").fetchall()[0][0]
        if not has:
            fail("no flags in this store: run `rummyguard scan` first")
        where = "WHERE mechanism = ?" if mechanism else ""
        params: list[object] = [mechanism] if mechanism else []
        cur = con.execute(f"SELECT * FROM fraud.flags {where} ORDER BY flag_id LIMIT ?",
                          [*params, top])
        rows = cur.fetchall()
        columns = [d[0] for d in cur.description]
        total = con.execute(f"SELECT count(*) FROM fraud.flags {where}", params).fetchall()[0][0]
    finally:
        con.close()
    df = pl.DataFrame(rows, schema=columns, orient="row")
    if as_json:
        print_json({"total": total, "flags": _flag_rows(df)})
        return
    if df.height == 0:
        print("no flags")
        return
    _print_flags(df)
