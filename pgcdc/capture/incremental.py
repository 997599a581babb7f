"""Incremental snapshots (Debezium's DBLog-style watermarks) driven by rows inserted into the signal table.

An `execute-snapshot` signal queues tables. Each table is read in primary-key chunks, one chunk per window:
a `snapshot-window-open` row is inserted into the signal table, the chunk is selected (in its own
transaction, after the open row committed), and a `snapshot-window-close` row is inserted. The chunk's rows
wait in a buffer. When the replication stream reaches the open row, every change to the table being read
drops the buffered row with its key (the change is at least as new as what the SELECT saw); when it reaches
the close row, what remains of the buffer is emitted as `op: r` records with `source.snapshot:
incremental`, and the next chunk is read. Changes committed before the open row are older than the SELECT
and come before the `r` records; changes after the close row are newer and come after them: folding the
stream gives the table's state (Debezium 3.6 behaves the same, measured with the oracle: record order, the
watermark rows and their `data`, `sequence` equal to the close row's, `lsn` and `txId` null).

The cursor (tables left, the key the current table was emitted up to) moves only when a window closes and
is stored with the streaming offset (IncrementalProgress); after a restart the current table is read again
from that key in a new window. Watermark rows of an older window (replayed after a restart) are ignored.

This module holds that state and decides when things happen; what a signal does to it is in
capture/incremental_signals.py, what a signal asks for is read in capture/signals.py, and a chunk's table,
database snapshot, query and records are made in capture/incremental_chunks.py.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from pgcdc.capture.failures import OnFailure
from pgcdc.capture.blocking import run_blocking_snapshot
from pgcdc.capture.incremental_chunks import (ChunkTable, chunk_row, chunk_snapshot, chunk_table, emit_chunk, max_key,
                                              select_chunk)
from pgcdc.capture.incremental_signals import CLOSE, OPEN, SnapshotSignals
from pgcdc.capture.position import IncrementalProgress
from pgcdc.capture.signals import Collection, java_instant, table_of, table_signal
from pgcdc.errors import ValueConversionError
from pgcdc.envelope.table import TableEvents
from pgcdc.protocol import messages as m
from pgcdc.sink import Sink

if TYPE_CHECKING:
    from pgcdc.notifications.snapshots import IncrementalSnapshotNotices

log = logging.getLogger(__name__)


class IncrementalSnapshot(SnapshotSignals):
    """The signal table's reader and the incremental snapshot's state, driven from ChangeCapture."""

    def __init__(self, *, connect: Callable[[], psycopg.Connection], signal_table: str, chunk_size: int,
                 build: Callable[[str, str], TableEvents | None], captured: Callable[[], list[tuple[str, str]]],
                 sink: Sink, topic_prefix: str, database: str, headers: list[tuple[str, bytes]],
                 progress: IncrementalProgress | None = None, read_only: bool = False,
                 table_order: Callable[[str], Any] = lambda name: name, channels: list[Any] | None = None,
                 on_failure: OnFailure | None = None, insert_delete: bool = False,
                 notices: IncrementalSnapshotNotices | None = None) -> None:
        self._connect = connect
        self.notices = notices  # notification.enabled.channels: Debezium's notifications (pgcdc/notifications)
        self.table_rows = 0  # rows of the current table read in this run (a notification's total_rows_scanned)
        self._skip_status = "EMPTY"  # why _table() found nothing to read, in Debezium's words
        # incremental.snapshot.watermarking.strategy=insert_delete: a window closes by deleting its open row
        # (Debezium's DeleteWindowCloser); a signal row's delete in the stream is then its window's close.
        self.insert_delete = insert_delete
        self.on_failure = on_failure  # event.processing.failure.handling.mode (capture/failures.py)
        self.read_only = read_only
        self.table_order = table_order  # a blocking snapshot's table order
        self.channels = channels or []  # KafkaSignals / FileSignals
        # read.only: the chunk's database snapshot (xmin, xmax, in-progress xids; 64-bit) and the WAL insert
        # position read with it, instead of watermark rows.
        self.snap: tuple[int, int, frozenset[int]] | None = None
        self.high_lsn = 0
        self._conn: psycopg.Connection | None = None
        schema, _, table = signal_table.rpartition(".")
        self.signal_name = (schema or "public", table)
        self.chunk_size = chunk_size
        self.build = build
        self.captured = captured
        self.sink = sink
        self.prefix = topic_prefix
        self.db = database
        self.headers = headers
        # Durable state (IncrementalProgress).
        self.correlation_id: str | None = None
        self.collections: list[Collection] = []
        self.key: tuple[str, ...] | None = None  # the first collection was emitted up to this key
        self.max_key: tuple[str, ...] | None = None
        self.paused = False
        if progress is not None:
            self.correlation_id = progress.correlation_id
            self.collections = list(progress.collections)
            self.key, self.max_key, self.paused = progress.key, progress.max_key, progress.paused
        # The window in flight.
        self.window: str | None = None
        self.window_open = False
        self.buffer: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.read_key: tuple[str, ...] | None = None
        self.current: ChunkTable | None = None
        self.current_name: tuple[str, str] | None = None
        # Relation oid -> what it is to us: the signal table (column positions) or a table's name.
        self.signal_oid: int | None = None
        self.signal_cols: tuple[int, int, int] = (0, 1, 2)
        self.names: dict[int, tuple[str, str]] = {}
        self.columns: dict[int, list[str]] = {}
        self._blocking: list[tuple[str, str | None]] = []  # a blocking snapshot to run after the signal's record
        self.stream_xmin: Callable[[], int | None] = lambda: None  # the stream's source.xmin (ChangeCapture.xmin)
        self.row_count_order: str | None = None  # a blocking snapshot's table order (config.snapshot_row_count_order)
        self._at = (0, 0)  # (LSN, xid) of the signal being handled
        self.key_positions: dict[int, tuple[int, ...]] = {}
        self.rows = 0
        self._next_after_emit = False

    # -- state ------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self.collections)

    def offset_fields(self) -> tuple[tuple[str, Any], ...]:
        if not self.collections:
            return ()
        types = self.current.plan.pk_types if self.current is not None else ()
        return IncrementalProgress(self.correlation_id, tuple(self.collections), self.key, self.max_key,
                                   self.paused, types).to_fields()

    def start(self) -> None:
        """After (re)start: continue a snapshot the offsets say is under way."""
        if self.collections:
            log.info("incremental snapshot resumed: %s, %s", self._names(),
                     f"after key {list(self.key)}" if self.key else "from the first table's start")
            if not self.paused:
                self.read_chunk()

    def poll_channels(self, lsn: int = 0, xid: int = 0) -> None:
        """Signals from the Kafka topic and the file (capture/signals.py), between transactions; `lsn` and `xid`
        are the stream's position, for a blocking snapshot's records."""
        for channel in self.channels:
            signals = channel.poll()
            for sig_id, kind, data in signals:
                self._at = (lsn, xid)
                self._signal(sig_id, kind, data, "")
                self.after_signal()
            if signals:
                channel.commit()

    def close(self) -> None:
        for channel in self.channels:
            channel.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _db(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = self._connect()
            self._conn.autocommit = True
        return self._conn

    # -- stream hooks -----------------------------------------------------------------------------------
    def relation(self, rel: m.Relation) -> None:
        ns = rel.namespace or "pg_catalog"
        names = [c.name for c in rel.columns]
        if (ns, rel.name) == self.signal_name:
            self.signal_oid = rel.oid
            try:
                self.signal_cols = (names.index("id"), names.index("type"), names.index("data"))
            except ValueError:
                self.signal_cols = (0, 1, 2)  # Debezium reads the first three columns by position
        self.names[rel.oid] = (ns, rel.name)
        self.columns[rel.oid] = names
        self.key_positions.pop(rel.oid, None)

    def change(self, oid: int, new: tuple[m.Value, ...] | None, old: tuple[m.Value, ...] | None,
               sequence: str, xid: int = 0, lsn: int = 0, insert: bool = True) -> None:
        """A row change in the stream (before its record is emitted): a signal, or a change that makes a
        buffered snapshot row stale."""
        if oid == self.signal_oid:
            if insert and new is not None:  # signals are inserted rows
                self._at = (lsn, xid)
                self._signal(*table_signal(new, self.signal_cols), sequence)
                self._read_next()
            elif self.insert_delete and new is None and old is not None:
                # SignalRecord.buildSignalRecordFromChangeEventSource: a deleted row is a snapshot-window-close
                # whose id is the row's with "open" made "close".
                sig_id, _, data = table_signal(old, self.signal_cols)
                if sig_id is not None:
                    self._at = (lsn, xid)
                    self._signal(sig_id.replace("open", "close"), CLOSE, data, sequence)
                    self._read_next()
            return
        if not (self.buffer and self.names.get(oid) == self.current_name and self.current is not None):
            return
        if not self.window_open and self._visible(xid):
            return  # committed before the chunk's snapshot: the buffered row already includes it
        pos = self.key_positions.get(oid)
        if pos is None:
            cols = self.columns.get(oid, [])
            try:
                pos = tuple(cols.index(c) for c in self.current.pk)
            except ValueError:
                return
            self.key_positions[oid] = pos
        for tup in (old, new):
            if tup is not None:
                self.buffer.pop(tuple(tup[i] for i in pos), None)

    def _read_next(self) -> None:
        """The next chunk read while the signal (or the window's close) is handled, before the signal row's own
        record, as Debezium reads it (measured: its notifications of that chunk come before that record); the
        chunk's watermark rows and records come later in the stream either way."""
        if self._next_after_emit:
            self._next_after_emit = False
            if not self.paused:
                self.read_chunk()

    @property
    def pending(self) -> bool:
        return self._next_after_emit or bool(self._blocking)

    def after_signal(self) -> None:
        """Once the signal row's own record is emitted: the blocking snapshot it asked for (Debezium's order);
        and for a signal without a record of its own (the kafka and file channels), the next chunk."""
        if self._blocking:
            names, self._blocking = self._blocking, []
            captured = self.captured()
            tables = [(*table_of(name, captured), condition) for name, condition in names]
            run_blocking_snapshot(tables, connect=self._connect, build=self.build, sink=self.sink,
                                  topic_prefix=self.prefix, database=self.db, headers=self.headers, at=self._at,
                                  chunk_rows=max(self.chunk_size, 10_000), xmin=self.stream_xmin(),
                                  row_count_order=self.row_count_order, on_failure=self.on_failure,
                                  notices=self.notices.blocking if self.notices is not None else None)
        if self._next_after_emit:
            self._next_after_emit = False
            if not self.paused:
                self.read_chunk()

    def _visible(self, xid: int) -> bool:
        """Was transaction `xid` (32 bits, from pgoutput) committed in the chunk's snapshot? (PostgreSQL's
        XidInMVCCSnapshot: below xmin, or below xmax and not in progress.)"""
        if self.snap is None:
            return True
        xmin, xmax, xip = self.snap
        diff = (xid - xmin) & 0xFFFFFFFF  # widen to 64 bits next to xmin: xids live within 2^31 of each other
        full = xmin + (diff - (1 << 32) if diff >= 1 << 31 else diff)
        return full < xmin or (full < xmax and full not in xip)

    def position(self, lsn: int) -> None:
        """read.only: the stream is at `lsn` between transactions (a Begin's commit LSN, or an idle server's
        position). Once past the WAL position read with the chunk's snapshot, every transaction visible in
        that snapshot was emitted: the buffer is emitted and the next chunk read."""
        if self.read_only and self.window_open and lsn >= self.high_lsn:
            self._close_window(self._sequence_at(lsn))
            if not self.paused:
                self._next_after_emit = False
                self.read_chunk()

    def _sequence_at(self, lsn: int) -> str:
        return f'[null,"{lsn}"]'

    # -- windows ----------------------------------------------------------------------------------------
    def _close_window(self, sequence: str) -> None:
        """Emit what is left of the buffer (Debezium emits it before the close row's own record)."""
        if self.current is not None:
            self.rows += emit_chunk(self.current, self.buffer.values(), self.sink, self.prefix, self.db, sequence,
                                    self.headers)
            self.key = self.read_key
        self.window, self.window_open, self.buffer, self.snap = None, False, {}, None
        self._next_after_emit = not self.read_only

    def read_chunk(self) -> None:
        """Open a window, read the next chunk into the buffer, close the window (Debezium's order)."""
        if not self.collections or self.window is not None:
            return
        conn = self._db()
        if self.read_only:
            self._read(conn)
            if self.collections:
                self.window, self.window_open = str(uuid.uuid4()), True
            return
        window = str(uuid.uuid4())
        opened = java_instant(time.time_ns())
        self._insert(conn, f"{window}-open", OPEN, json.dumps({"openWindowTimestamp": opened}))
        self.window, self.window_open = window, False
        self._read(conn)
        if self.insert_delete:
            conn.execute(sql.SQL("DELETE FROM {} WHERE id = %s").format(sql.Identifier(*self.signal_name)),
                         (f"{window}-open",))
            return
        closed = java_instant(time.time_ns())
        self._insert(conn, f"{window}-close", CLOSE,
                     json.dumps({"openWindowTimestamp": opened, "closeWindowTimestamp": closed}))

    def _read(self, conn: psycopg.Connection) -> None:
        """The next chunk into the buffer, in one REPEATABLE READ transaction that first reads its snapshot
        (pg_current_snapshot()) and the WAL insert position.

        The snapshot decides which streamed changes make a buffered row stale: those of transactions it does
        not see. Watermark rows alone are not enough in PostgreSQL: a transaction whose commit record precedes
        the open row can still be invisible to the SELECT (it leaves the proc array only after its commit
        record is flushed), and its change, streamed before the open row, is newer than the buffered row.
        read.only: there are no watermark rows; the window closes once the stream passes the WAL position
        (`position`)."""
        self.buffer = {}
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            self.snap, self.high_lsn = chunk_snapshot(conn)
            while self.collections:
                t = self._table(conn)
                if t is None:  # gone, empty, or without a key: next table
                    self._table_done(self._skip_status)
                    continue
                rows = select_chunk(conn, t, self.read_key, self.max_key, self.chunk_size)
                if rows:
                    for values in rows:
                        try:
                            row = chunk_row(t.events, values, self.high_lsn)
                        except ValueConversionError as exc:  # left out, or the connector stops (the default)
                            if self.on_failure is None:
                                raise
                            self.on_failure(exc)
                            continue
                        self.buffer[tuple(values[i] for i in t.pk_idx)] = row
                    self.read_key = tuple(str(rows[-1][i]) for i in t.chunk_idx)
                    self.table_rows += len(rows)
                    if self.notices is not None:
                        self.notices.in_progress(self.correlation_id, self._names(), self.max_key or (),
                                                 self.read_key, t.plan.pk_value_types)
                    break
                log.info("incremental snapshot of %s.%s done", *t.plan.name)
                self._table_done("SUCCEEDED")
        finally:
            conn.execute("COMMIT")
        if not self.collections:
            log.info("incremental snapshot finished: %d record(s)", self.rows)

    def _table_done(self, status: str) -> None:
        """The first collection is read (`status`: Debezium's TableScanCompletionStatus); on to the next."""
        if self.notices is not None:
            self.notices.table_done(self.correlation_id, self._names(), self.table_rows, status)
        self.table_rows = 0
        self.collections.pop(0)
        self.key = self.max_key = self.read_key = None
        self.current = self.current_name = None
        if not self.collections:
            if self.notices is not None:
                self.notices.completed(self.correlation_id)
            self.correlation_id = None

    def _insert(self, conn: psycopg.Connection, sig_id: str, kind: str, data: str) -> None:
        conn.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s, %s)").format(sql.Identifier(*self.signal_name)),
                     (sig_id, kind, data))

    def _table(self, conn: psycopg.Connection) -> ChunkTable | None:
        name, condition, surrogate = self.collections[0]
        if self.current is not None and self.current_name is not None and ".".join(self.current_name) == name:
            return self.current  # the table being read: no catalog query per chunk
        schema, table = table_of(name, self.captured())
        events = self.build(schema, table)
        if events is None:
            log.warning("incremental snapshot: table %s is not captured or no longer exists; skipped", name)
            self._skip_status = "UNKNOWN_SCHEMA"
            return None
        t = chunk_table(conn, schema, table, events, condition, surrogate)
        if t is None:
            self._skip_status = "NO_PRIMARY_KEY"
            return None
        if self.max_key is None:
            self.max_key = max_key(conn, t)
            if self.max_key is None:
                self._skip_status = "EMPTY"
                log.info("incremental snapshot of %s: no rows", name)
                return None
            log.info("incremental snapshot of %s up to key %s", name, list(self.max_key))
        self.current, self.current_name = t, (schema, table)
        self.read_key = self.key
        return t

