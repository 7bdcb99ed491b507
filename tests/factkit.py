"""Hand-built fraud fact stores for tests: the given rows, every other table empty."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from rummyguard.fraud.facts import SCHEMAS
from rummyguard.fraud.pipeline import memory_db


def facts_db(**rows: list[dict[str, Any]]) -> duckdb.DuckDBPyConnection:
    """An in-memory store of ``fraud.*`` tables: the given rows, every other table empty."""
    tables = {}
    for name, schema in SCHEMAS.items():
        data = rows.get(name, [])
        tables[name] = pa.table({f.name: pa.array([r.get(f.name) for r in data], f.type)
                                 for f in schema}, schema=schema)
    return memory_db(tables)
