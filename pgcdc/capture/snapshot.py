"""Initial snapshot: every captured table read inside the slot's exported snapshot, as `op: r` events.

The slot is created with EXPORT_SNAPSHOT; a second connection adopts that snapshot (SET TRANSACTION
SNAPSHOT) and reads each table, so the rows are exactly the state at the slot's consistent point and
streaming from that point neither loses nor repeats a change. Rows are read with COPY in text format: the
same output-function text pgoutput sends, so snapshot and streaming share one set of converters.
This is the single-threaded first version (issue: parallel, resumable snapshots).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import sql

from pgcdc.envelope.source import DEBEZIUM_VERSION
from pgcdc.envelope.table import TableEvents
from pgcdc.sink import Sink

log = logging.getLogger(__name__)

def _rows(conn: psycopg.Connection, schema: str, table: str, columns: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
    """Rows as the output functions' text (what pgoutput sends), read with COPY: no per-row round trips and
    no casts (a `::text` cast is not always the output function: booleans cast to 'true', not 't')."""
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    query = sql.SQL("COPY (SELECT {} FROM {}) TO STDOUT").format(cols, sql.Identifier(schema, table))
    with conn.cursor() as cur, cur.copy(query) as copy:
        yield from copy.rows()


def marker(first_table: bool, last_table: bool, first_row: bool, last_row: bool) -> str:
    """Debezium's source.snapshot value for a row, from its place among tables and within its table."""
    if last_table and last_row:
        return "last"
    if first_table and first_row:
        return "first"
    if first_row:
        return "first_in_data_collection"
    if last_row:
        return "last_in_data_collection"
    return "true"


class Snapshot:
    """Reads tables in (schema, table) order and emits records with Debezium's `source.snapshot` markers."""

    def __init__(self, *, sink: Sink, topic_prefix: str, database: str, lsn: int, headers: list[tuple[str, bytes]]
                 | None = None) -> None:
        self.sink = sink
        self.prefix = topic_prefix
        self.db = database
        self.lsn = lsn
        self.headers = headers or []
        self.events = 0

    def run(self, conn: psycopg.Connection, snapshot_name: str | None,
            tables: list[tuple[str, str, Callable[[], TableEvents]]]) -> int:
        """Emit every row of `tables` (schema, table, events-builder). Returns the snapshot's xid."""
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        if snapshot_name:
            conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot_name)))
        row = conn.execute("SELECT txid_current_if_assigned(), txid_snapshot_xmin(txid_current_snapshot())").fetchone()
        assert row is not None
        xid = int(row[0] or row[1])
        ts_us = time.time_ns() // 1000
        last_table = len(tables) - 1
        for index, (schema, table, build) in enumerate(tables):
            t = build()
            started = time.monotonic()
            count = 0
            pending: dict[str, Any] | None = None
            for values in _rows(conn, schema, table, t.names):
                if pending is not None:
                    self._emit(t, pending, marker(index == 0, False, count == 1, False), xid, ts_us)
                pending = t.row(values, self.lsn)
                count += 1
            if pending is not None:
                self._emit(t, pending, marker(index == 0, index == last_table, count == 1, True), xid, ts_us)
            log.info("snapshot of %s.%s: %d rows in %.1f s (%d/%d tables)", schema, table, count,
                     time.monotonic() - started, index + 1, len(tables))
        conn.execute("COMMIT")
        return xid

    def _emit(self, t: TableEvents, after: dict[str, Any], snapshot: str, xid: int, ts_us: int) -> None:
        now_ns = time.time_ns()
        source = {
            "version": DEBEZIUM_VERSION, "connector": "postgresql", "name": self.prefix, "ts_ms": ts_us // 1000,
            "snapshot": snapshot, "db": self.db, "sequence": f'[null,"{self.lsn}"]', "ts_us": ts_us,
            "ts_ns": ts_us * 1000, "schema": t.schema, "table": t.table, "txId": xid, "lsn": self.lsn,
            "xmin": None, "origin": None, "origin_lsn": None,
        }
        payload = {"before": None, "after": after, "source": source, "transaction": None, "op": "r",
                   "ts_ms": now_ns // 1_000_000, "ts_us": now_ns // 1000, "ts_ns": now_ns}
        self.sink.send(t.topic, t.key(after), t.value(payload), self.headers)
        self.events += 1
