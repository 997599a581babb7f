"""The chunks of an incremental snapshot: a table read in primary-key order, one bounded chunk at a time, and
the records a window emits. When a chunk is read and emitted is capture/incremental.py's to decide.

The key is the primary key's columns, or a table without one is read by the unique index it is keyed by when
its columns are NOT NULL. A chunk is `key > last emitted key AND key <= the table's maximum key when the snapshot
began` (plus the signal's `additional-conditions`), ordered by the key and limited to
`incremental.snapshot.chunk.size` rows. Rows come back as the text of PostgreSQL's output functions (COPY), the
form pgoutput sends, so one set of converters serves both. A `surrogate-key` in the signal replaces the key for
chunking only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from pgcdc.capture.snapshot_plan import TablePlan, _bound, describe, value_types
from pgcdc.envelope.source import DEBEZIUM_VERSION
from pgcdc.envelope.table import TableEvents
from pgcdc.errors import ConversionError
from pgcdc.lsn import format_lsn
from pgcdc.source.catalog import Catalog
from pgcdc.sink import Sink

log = logging.getLogger(__name__)


class ChunkTable:
    """The table being read: its plan (key columns and types) and where its key columns sit in a row."""

    def __init__(self, plan: TablePlan, events: TableEvents, pk: tuple[str, ...], condition: str | None) -> None:
        self.plan = plan
        self.events = events
        self.pk = pk  # the primary key: what a buffered row is known by (a surrogate key only chunks)
        self.condition = condition
        self.pk_idx = tuple(events.names.index(c) for c in pk)
        self.chunk_idx = tuple(events.names.index(c) for c in plan.pk)


def chunk_table(conn: psycopg.Connection, schema: str, table: str, events: TableEvents, condition: str | None,
                surrogate: str | None) -> ChunkTable | None:
    """The table described for chunking (by its primary key, or by the signal's surrogate key), or None
    (logged) when it has neither."""
    name = f"{schema}.{table}"
    plan = TablePlan(schema, table, lambda: events)
    describe(conn, plan)
    if not plan.pk and not surrogate:
        plan.pk, plan.pk_types = unique_key(conn, schema, table)
        plan.pk_value_types = value_types(conn, plan.pk_types)
    pk = plan.pk
    if surrogate:
        type_name = surrogate_type(conn, schema, table, surrogate)
        if type_name is None:
            log.warning("incremental snapshot: surrogate key %r is not a column of %s; skipped", surrogate, name)
            return None
        plan.pk, plan.pk_types = (surrogate,), (type_name,)
        plan.pk_value_types = value_types(conn, plan.pk_types)
    if not plan.pk or any(c not in events.names for c in (*plan.pk, *pk)):
        log.warning("incremental snapshot: %s has no primary key (or it is not in the events); set "
                    "surrogate-key in the signal; skipped", name)
        return None
    return ChunkTable(plan, events, pk or plan.pk, condition)


def unique_key(conn: psycopg.Connection, schema: str, table: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(columns, SQL types) of the unique index keying a table without a primary key (source/catalog.py), to
    chunk by; empty when there is none or a column of it allows NULL. Debezium chunks by such an index too, but
    `key > NULL` ends its reading at the first NULL key: with NULLs it read one of them and missed the rest
    (measured), so pgcdc does not chunk by a nullable index (a `surrogate-key` can)."""
    catalog = Catalog(conn)
    oid = catalog.table_oid(schema, table)
    info = catalog.table(oid) if oid is not None else None
    if info is None or not info.key:
        return (), ()
    columns = {c.name: c for c in info.columns}
    if not all(c in columns and columns[c].not_null for c in info.key):
        log.warning("incremental snapshot: %s.%s is keyed by a unique index whose columns allow NULL (%s): rows "
                    "with NULL there cannot be chunked by it", schema, table, ", ".join(info.key))
        return (), ()
    return info.key, tuple(columns[c].type_name for c in info.key)


def surrogate_type(conn: psycopg.Connection, schema: str, table: str, column: str) -> str | None:
    """The SQL type of `column` (a signal's surrogate key), or None when the table has no such column."""
    row = conn.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass "
        "AND attname = %s AND NOT attisdropped",
        (sql.Identifier(schema, table).as_string(conn), column)).fetchone()
    return None if row is None else str(row[0])


def chunk_snapshot(conn: psycopg.Connection) -> tuple[tuple[int, int, frozenset[int]], int]:
    """The open transaction's snapshot (xmin, xmax, in-progress xids; 64-bit) and the WAL insert position."""
    # (txid_current_snapshot() before PostgreSQL 13: the same xmin:xmax:xip text of 64-bit ids)
    snapshot = "pg_current_snapshot" if conn.info.server_version >= 130000 else "txid_current_snapshot"
    row = conn.execute(f"SELECT {snapshot}()::text, pg_current_wal_insert_lsn() - '0/0'").fetchone()
    assert row is not None
    xmin, xmax, xip = str(row[0]).split(":")
    return (int(xmin), int(xmax), frozenset(int(x) for x in xip.split(",") if x)), int(row[1])


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


def emit_chunk(t: ChunkTable, rows: Iterable[dict[str, Any]], sink: Sink, topic_prefix: str, database: str,
               sequence: str, headers: list[tuple[str, bytes]]) -> int:
    """`rows` (what is left of a window's buffer) as `op: r` records with `source.snapshot: incremental`, the
    window's `sequence` and no `lsn` or `txId` (Debezium 3.6, measured); returns how many were sent."""
    now_ns = time.time_ns()
    ts_us = now_ns // 1000
    source = {"version": DEBEZIUM_VERSION, "connector": "postgresql", "name": topic_prefix,
              "ts_ms": ts_us // 1000, "snapshot": "incremental", "db": database, "sequence": sequence,
              "ts_us": ts_us, "ts_ns": ts_us * 1000, "schema": t.plan.schema, "table": t.plan.table,
              "txId": None, "lsn": None, "xmin": None, "origin": None, "origin_lsn": None}
    ev = t.events
    n = 0
    for after in rows:
        now_ns = time.time_ns()
        payload = {"before": None, "after": after, "source": source, "transaction": None, "op": "r",
                   "ts_ms": now_ns // 1_000_000, "ts_us": now_ns // 1000, "ts_ns": now_ns}
        sink.send(ev.topic, ev.key(after), ev.value(payload), headers)
        n += 1
    return n


def chunk_row(events: TableEvents, values: Sequence[Any], lsn: int) -> dict[str, Any]:
    """A chunk row's record value (`lsn`: where the chunk was read). A value that does not convert stops the
    connector with one line naming the column, the value, the row's key and the chunk: a chunk row has no LSN
    of its own."""
    try:
        return events.row(values, lsn)
    except ConversionError:
        where = events.located(values, f"in the incremental snapshot's chunk read at LSN {format_lsn(lsn)}")
        found = events.failing_value(values, lsn, where)
        if found is None:
            raise
        raise found from None
