"""Initial snapshot: every captured table read in one database snapshot, as `op: r` events.

The slot is created with EXPORT_SNAPSHOT; a coordinator connection adopts that snapshot and exports it to
reader threads (capture/snapshot_readers.py), which read tables in primary-key chunks with COPY
(capture/snapshot_plan.py). Rows are the output functions' text, what pgoutput sends, so snapshot and
streaming share one set of converters. This thread converts and emits them in table order and, within a
table, in key order, with Debezium's `source.snapshot` markers, so the rows are exactly the state at the
slot's consistent point and streaming from there neither loses nor repeats a change.

Progress (the last emitted row's key) is checkpointed every `offset.flush.interval.ms`, after the sink
flushed. A restart continues after that key. The exported snapshot died with the process that held it, so
the remaining rows are read in a new snapshot: newer than the consistent point, which is still correct
because streaming starts at the consistent point and replays every later change after them (a row may
appear in its newer version first, then the older changes, then the newest again; the final state is exact).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import psycopg

from pgcdc.capture.position import SnapshotProgress
from pgcdc.capture.snapshot_plan import TablePlan, chunks, describe, split_points
from pgcdc.capture.snapshot_progress import ProgressReporter, SnapshotMetrics, TableProgress
from pgcdc.capture.snapshot_readers import ChunkReaders, ChunkRows, begin_snapshot
from pgcdc.envelope.source import DEBEZIUM_VERSION
from pgcdc.lsn import format_lsn
from pgcdc.sink import Sink

log = logging.getLogger(__name__)


def marker(first_table: bool, first_row: bool, last_row: bool) -> str:
    """Debezium's source.snapshot value for a row that is not the snapshot's very last one (that is `last`:
    Debezium re-marks the last record it buffered when the snapshot completes, whichever table it is in)."""
    if first_table and first_row:
        return "first"
    if first_row:
        return "first_in_data_collection"
    if last_row:
        return "last_in_data_collection"
    return "true"


class Snapshot:
    """Reads `TablePlan`s in order and emits records with Debezium's `source.snapshot` markers."""

    def __init__(self, *, sink: Sink, topic_prefix: str, database: str, lsn: int,
                 headers: list[tuple[str, bytes]] | None = None,
                 checkpoint: Callable[[SnapshotProgress], None] | None = None, flush_interval_s: float = 1.0,
                 stop: threading.Event | None = None, metrics: SnapshotMetrics | None = None,
                 reporter: ProgressReporter | None = None) -> None:
        self.sink = sink
        self.prefix = topic_prefix
        self.db = database
        self.lsn = lsn
        self.headers = headers or []
        self.checkpoint = checkpoint
        self.flush_interval = flush_interval_s
        self.stop = stop or threading.Event()
        self.metrics = metrics or SnapshotMetrics()
        self.reporter = reporter or ProgressReporter(self.metrics, terminal=False)
        self.events = 0
        self.xid = 0
        self.ts_us = 0
        # The cursor: every table up to `_done` is emitted; `_partial` was emitted up to key `_key`.
        self._done: tuple[str, str] | None = None
        self._partial: tuple[str, str] | None = None
        self._key: tuple[str, ...] | None = None
        self._resumed_rows = 0

    def progress(self) -> SnapshotProgress:
        return SnapshotProgress(self.lsn, self.xid, self.ts_us, self._done, self._partial, self._key,
                                self._resumed_rows + self.events)

    def run(self, connect: Callable[[], psycopg.Connection], snapshot_name: str | None, plans: list[TablePlan], *,
            resume: SnapshotProgress | None = None, threads: int = 1, chunk_rows: int = 100_000,
            fetch_size: int = 10_240, lock_timeout_ms: int = 10_000) -> int | None:
        """Emit every row of `plans` (all tables, in order). Returns the snapshot's xid, or None if stopped
        (progress checkpointed)."""
        todo = self._resume(plans, resume)
        coord = connect()
        try:
            begin_snapshot(coord, snapshot_name, lock_timeout_ms)
            row = coord.execute(
                "SELECT txid_current_if_assigned(), txid_snapshot_xmin(txid_current_snapshot()), "
                "pg_export_snapshot()").fetchone()
            assert row is not None
            if resume is None or not resume.xid:
                self.xid, self.ts_us = int(row[0] or row[1]), time.time_ns() // 1000
            else:  # the records of one snapshot keep one txId and time, across restarts
                self.xid, self.ts_us = resume.xid, resume.ts_us
            for plan in todo:
                describe(coord, plan)
                if plan.after is not None and not plan.chunked:
                    plan.after = None  # no usable key any more: the table is read again from its start
                name = f"{plan.schema}.{plan.table}"
                self.metrics.tables[name] = TableProgress(name, plan.estimate)
            self.reporter.start()
            readers = ChunkReaders(connect, row[2], threads, fetch_size, lock_timeout_ms)
            try:
                finished = self._emit_all(coord, readers, todo, chunk_rows, threads)
            finally:
                readers.close()
                self.reporter.close()
            coord.execute("COMMIT")
        finally:
            coord.close()
        return self.xid if finished else None

    def _resume(self, plans: list[TablePlan], resume: SnapshotProgress | None) -> list[TablePlan]:
        if plans:
            plans[0].first = True
        if resume is None:
            return plans
        self._done, self._partial, self._key = resume.done, resume.table, resume.key
        self._resumed_rows = self.metrics.resumed_rows = resume.rows
        todo = []
        for plan in plans:
            if resume.done is not None and plan.name <= resume.done:
                continue
            if plan.name == resume.table:
                plan.after = resume.key
            if resume.rows:
                plan.first = False
            todo.append(plan)
        skipped = len(plans) - len(todo)
        where = f"{resume.table[0]}.{resume.table[1]} after key {list(resume.key)}" if resume.table and resume.key \
            else f"{resume.table[0]}.{resume.table[1]} from its start" if resume.table else "the next table"
        log.info("resuming the initial snapshot: %d record(s) emitted before, %d table(s) complete, continuing "
                 "with %s; the exported snapshot is gone, so the remaining rows are read in a new one and "
                 "streaming from %s replays every change since", resume.rows, skipped, where, format_lsn(self.lsn))
        return todo

    def _chunk_stream(self, coord: psycopg.Connection, plans: list[TablePlan], chunk_rows: int
                      ) -> Iterator[ChunkRows]:
        for plan in plans:
            plan.events = plan.build()
            columns = plan.events.names
            for chunk in chunks(plan, split_points(coord, plan, chunk_rows)):
                yield ChunkRows(chunk, columns)

    def _emit_all(self, coord: psycopg.Connection, readers: ChunkReaders, plans: list[TablePlan],
                  chunk_rows: int, threads: int) -> bool:
        order = {id(p): i for i, p in enumerate(plans)}
        prev_done = self._done
        source_chunks = self._chunk_stream(coord, plans, chunk_rows)
        ahead: deque[ChunkRows] = deque()

        def fill() -> None:
            while len(ahead) < threads + 1:
                nxt = next(source_chunks, None)
                if nxt is None:
                    return
                readers.submit(nxt)
                ahead.append(nxt)

        lsn, xid, ts_us = self.lsn, self.xid, self.ts_us
        stop, checkpoint, interval = self.stop, self.checkpoint, self.flush_interval
        next_flush = time.monotonic() + interval
        send, headers = self.sink.send, self.headers
        base_source = {
            "version": DEBEZIUM_VERSION, "connector": "postgresql", "name": self.prefix, "ts_ms": ts_us // 1000,
            "snapshot": None, "db": self.db, "sequence": f'[null,"{lsn}"]', "ts_us": ts_us,
            "ts_ns": ts_us * 1000, "schema": None, "table": None, "txId": xid, "lsn": lsn,
            "xmin": None, "origin": None, "origin_lsn": None,
        }
        # The record held back until the next one shows whether it ended its table: (plan, after, first row,
        # key text, table ended).
        pending: list[Any] | None = None

        def emit(p: list[Any], mark: str) -> None:
            plan, after, _, key, _ = p
            t = plan.events
            source = dict(base_source)
            source["snapshot"] = mark
            source["schema"] = plan.schema
            source["table"] = plan.table
            now_ns = time.time_ns()
            payload = {"before": None, "after": after, "source": source, "transaction": None, "op": "r",
                       "ts_ms": now_ns // 1_000_000, "ts_us": now_ns // 1000, "ts_ns": now_ns}
            send(t.topic, t.key(after), t.value(payload), headers)
            self.events += 1
            if plan.name != self._partial:
                i = order[id(plan)]
                self._done = plans[i - 1].name if i else prev_done
                self._partial = plan.name
            self._key = key

        fill()
        while ahead:
            rows = ahead.popleft()
            chunk = rows.chunk
            plan = chunk.plan
            name = f"{plan.schema}.{plan.table}"
            t = plan.events
            assert t is not None
            convert = t.row
            pk_idx = [t.names.index(c) for c in plan.pk] if plan.chunked else None
            if chunk.index == 0:
                self.reporter.table_started(name)
            first_row = chunk.index == 0 and plan.after is None
            for batch in rows:
                for values in batch:
                    after = convert(values, lsn)
                    if pending is not None:
                        emit(pending, marker(pending[0].first, pending[2], pending[4] or pending[0] is not plan))
                    key = tuple(values[i] for i in pk_idx) if pk_idx is not None else None
                    pending = [plan, after, first_row, key, False]
                    first_row = False
                self.reporter.add(name, len(batch))
                if stop.is_set() or (checkpoint is not None and time.monotonic() >= next_flush):
                    if checkpoint is not None:
                        checkpoint(self.progress())
                    next_flush = time.monotonic() + interval
                    if stop.is_set():
                        log.info("snapshot stopped at %s after %d record(s); a restart continues from here",
                                 name, self.events)
                        return False
            if chunk.last:
                if pending is not None and pending[0] is plan:
                    pending[4] = True
                self.reporter.table_done(name)
            fill()
        if pending is not None:
            emit(pending, "last")
        return True
