"""``rummyguard flags``: list the flags the last scan wrote.

Filters combine (AND): ``--mechanism`` (one of the mechanisms, or ``unusual``: an anomaly
no mechanism's signature explains; a name that is neither is an error, not an empty
list), ``--kind`` (player / pair / ring), ``--source`` (model: a mechanism's probability;
anomaly: unusual behaviour, after a scan with a model the players beyond the training
world's honest evidence tail; graph: a ring) and ``--player`` (flags whose subject
includes that account). ``--top`` counts after filtering; ``total`` in ``--json`` is the number
of flags matching the filters.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .common import DbOption, db_path, fail, print_json

KINDS = ("player", "pair", "ring")
SOURCES = ("model", "anomaly", "graph")


def flags(
    db: Path | None = DbOption,
    top: int = typer.Option(20, "--top", min=0, help="How many flags, strongest first."),
    mechanism: str | None = typer.Option(None, "--mechanism", help="Only flags of this mechanism.",
                                         show_default=False),
    kind: str | None = typer.Option(None, "--kind", help="Only flags of this subject kind: "
                                    "player, pair or ring.", show_default=False),
    source: str | None = typer.Option(None, "--source", help="Only flags from this source: model "
                                      "(a mechanism's probability), anomaly (unusual behaviour) or "
                                      "graph (rings).", show_default=False),
    player: str | None = typer.Option(None, "--player", help="Only flags whose subject includes "
                                      "this player.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
) -> None:
    """List flags (subject, score, likely mechanism, top signals, evidence to replay)."""
    import polars as pl

    from ..events.views import QueryError, connect_readonly
    from ..fraud.flags import UNUSUAL
    from ..fraud.models import MECHANISMS
    from .scan_cmd import _flag_rows, _print_flags

    if kind is not None and kind not in KINDS:
        fail(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if source is not None and source not in SOURCES:
        fail(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    try:
        con = connect_readonly(db_path(db))
    except QueryError as exc:
        fail(str(exc))
    try:
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'fraud' "
                          "AND table_name = 'flags'").fetchall()[0][0]
        if not has:
            fail("no flags in this store: run `rummyguard scan` first")
        if mechanism is not None:
            stored = {r[0] for r in con.execute("SELECT DISTINCT mechanism FROM fraud.flags").fetchall()}
            known = sorted(set(MECHANISMS) | {UNUSUAL} | stored)
            if mechanism not in known:
                fail(f"unknown mechanism {mechanism!r}: one of {', '.join(known)}")
        conds, params = [], []
        if mechanism is not None:
            conds.append("mechanism = ?")
            params.append(mechanism)
        if kind is not None:
            conds.append("subject_kind = ?")
            params.append(kind)
        if source is not None:
            conds.append("source = ?")
            params.append(source)
        if player is not None:
            conds.append("list_contains(players, ?)")
            params.append(player)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
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
        print(f"no flags shown of {total} (--top 0)" if total else "no flags")
        return
    _print_flags(df)
