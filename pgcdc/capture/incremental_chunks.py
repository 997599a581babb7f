"""The queries of an incremental snapshot: a table read in primary-key order, one bounded chunk at a time.

A chunk is `key > last emitted key AND key <= the table's maximum key when the snapshot began` (plus the
signal's `additional-conditions`), ordered by the key and limited to `incremental.snapshot.chunk.size` rows.
Rows come back as the text of PostgreSQL's output functions (COPY), the form pgoutput sends, so one set of
converters serves both. A `surrogate-key` in the signal replaces the primary key for chunking only.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from pgcdc.capture.snapshot_plan import TablePlan, _bound
from pgcdc.envelope.table import TableEvents


class ChunkTable:
    """The table being read: its plan (key columns and types) and where its key columns sit in a row."""

    def __init__(self, plan: TablePlan, events: TableEvents, pk: tuple[str, ...], condition: str | None) -> None:
        self.plan = plan
        self.events = events
        self.pk = pk  # the primary key: what a buffered row is known by (a surrogate key only chunks)
        self.condition = condition
        self.pk_idx = tuple(events.names.index(c) for c in pk)
        self.chunk_idx = tuple(events.names.index(c) for c in plan.pk)


def surrogate_type(conn: psycopg.Connection, schema: str, table: str, column: str) -> str | None:
    """The SQL type of `column` (a signal's surrogate key), or None when the table has no such column."""
    row = conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass "
        "AND attname = %s AND NOT attisdropped",
        (sql.Identifier(schema, table).as_string(conn), column)).fetchone()
    return None if row is None else str(row[0])


def _where(t: ChunkTable, lo: tuple[str, ...] | None, hi: tuple[str, ...] | None) -> sql.Composable:
    key = sql.SQL("({})").format(sql.SQL(", ").join(sql.Identifier(c) for c in t.plan.pk))
    parts: list[sql.Composable] = []
    if lo is not None:
        parts.append(sql.SQL("{} > {}").format(key, _bound(t.plan, lo)))
    if hi is not None:
        parts.append(sql.SQL("{} <= {}").format(key, _bound(t.plan, hi)))
    if t.condition:
        parts.append(sql.SQL("({})").format(sql.SQL(t.condition)))  # type: ignore[arg-type]
    return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(parts) if parts else sql.SQL("")


def _order(t: ChunkTable, desc: bool = False) -> sql.Composable:
    d = sql.SQL(" DESC") if desc else sql.SQL("")
    return sql.SQL(", ").join(sql.SQL("{}{}").format(sql.Identifier(c), d) for c in t.plan.pk)


def max_key(conn: psycopg.Connection, t: ChunkTable) -> tuple[str, ...] | None:
    """The largest chunking key (as text) among the rows the signal's condition selects; None: no rows."""
    # Aliased: ORDER BY a plain name would sort by the text output column of that name.
    cols = sql.SQL(", ").join(sql.SQL("{}::text AS {}").format(sql.Identifier(c), sql.Identifier(f"pgcdc_k{i}"))
                              for i, c in enumerate(t.plan.pk))
    row = conn.execute(sql.SQL("SELECT {} FROM {}{} ORDER BY {} LIMIT 1").format(
        cols, sql.Identifier(*t.plan.name), _where(t, None, None), _order(t, True))).fetchone()
    return tuple(str(v) for v in row) if row is not None else None


def select_chunk(conn: psycopg.Connection, t: ChunkTable, after: tuple[str, ...] | None,
                 upto: tuple[str, ...] | None, limit: int) -> list[tuple[Any, ...]]:
    """The next chunk: up to `limit` rows with a key above `after` and at most `upto`, as output-function text."""
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in t.events.names)
    query = sql.SQL("COPY (SELECT {} FROM {}{} ORDER BY {} LIMIT {}) TO STDOUT").format(
        cols, sql.Identifier(*t.plan.name), _where(t, after, upto), _order(t), sql.Literal(limit))
    with conn.cursor() as cur, cur.copy(query) as copy:
        return list(copy.rows())
