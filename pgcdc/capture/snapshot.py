"""Initial snapshot: every captured table read in one database snapshot, as `op: r` events.

The slot is created with EXPORT_SNAPSHOT; a coordinator connection adopts that snapshot and exports it to
reader threads (capture/snapshot_readers.py), which read tables in primary-key chunks with COPY
(capture/snapshot_plan.py). Rows are the output functions' text, what pgoutput sends, so snapshot and
streaming share one set of converters. This thread converts and emits them in table order and, within a
table, in key order, with Debezium's `source.snapshot` markers, so the rows are exactly the state at the
slot's consistent point and streaming from there neither loses nor repeats a change. Conversion works on
small slices of rows at a time (capture/snapshot_records.py): per row, the loop only fills a template and
hands the record to the sink.

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
from typing import TYPE_CHECKING, Any

import psycopg

from pgcdc.capture.failures import OnFailure
from pgcdc.capture.position import SnapshotProgress
from pgcdc.capture.snapshot_plan import TablePlan, chunks, describe, row_counts, sort_by_row_count, split_points
from pgcdc.capture.snapshot_progress import ProgressReporter, SnapshotMetrics, TableProgress
from pgcdc.capture.snapshot_readers import ChunkReaders, ChunkRows, begin_snapshot
from pgcdc.capture.snapshot_records import TableRecords
from pgcdc.errors import ValueConversionError
from pgcdc.lsn import format_lsn
from pgcdc.sink import Sink

if TYPE_CHECKING:
    from pgcdc.notifications.snapshots import InitialSnapshotNotices, TableChunks

log = logging.getLogger(__name__)

# Rows converted and sent together: a batch from the readers is rendered in slices this small, so a slice's
# rows, dicts and record bytes stay in the CPU cache between converting and sending (measured: 64-row slices
# about twice as fast as whole 10,240-row batches).
RENDER_ROWS = 64


def marker(first_table: bool, first_row: bool, last_row: bool) -> str:
    """Debezium's source.snapshot value for a row that is not the snapshot's very last one (that is `last`:
    Debezium re-marks the last record it buffered when the snapshot completes, whichever table it is in)."""
    if first_table and first_row:
        return "first"
    # A table's only row is its last before its first (measured on 3.6: a one-row table that is not the
    # snapshot's first writes last_in_data_collection).
    if last_row:
        return "last_in_data_collection"
    if first_row:
        return "first_in_data_collection"
    return "true"


class Snapshot:
    """Reads `TablePlan`s in order and emits records with Debezium's `source.snapshot` markers."""

    def __init__(self, *, sink: Sink, topic_prefix: str, database: str, lsn: int,
                 headers: list[tuple[str, bytes]] | None = None,
                 checkpoint: Callable[[SnapshotProgress], None] | None = None, flush_interval_s: float = 1.0,
                 stop: threading.Event | None = None, metrics: SnapshotMetrics | None = None,
                 reporter: ProgressReporter | None = None, parts: Callable[[str, bytes], Any] | None = None,
                 on_failure: OnFailure | None = None, notices: InitialSnapshotNotices | None = None) -> None:
        self.sink = sink
        self.notices = notices  # notification.enabled.channels: Debezium's notifications (pgcdc/notifications)
        self.on_failure = on_failure  # event.processing.failure.handling.mode; None: a failing row stops
        # The converting sink's senders of records as their parts (converters/sink.py EventSend), or None.
        self.parts = parts
        # source.xmin of the records: none in an initial snapshot; a blocking snapshot's records carry the
        # stream's (xmin.fetch.interval.ms), as Debezium's offset context does.
        self.xmin: int | None = None
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
        self._table_rows = 0  # records of `_partial` handed to the sink, those before a restart included
        self._order: dict[int, int] = {}
        self._plans: list[TablePlan] = []
        self._prev_done: tuple[str, str] | None = None
        self._counts: dict[int, int] = {}  # exact row counts by plan id, where Debezium's chunked snapshot counts

    def progress(self) -> SnapshotProgress:
        return SnapshotProgress(self.lsn, self.xid, self.ts_us, self._done, self._partial, self._key,
                                self._resumed_rows + self.events, self._table_rows)

    def run(self, connect: Callable[[], psycopg.Connection], snapshot_name: str | None, plans: list[TablePlan], *,
            resume: SnapshotProgress | None = None, threads: int = 1, chunk_rows: int = 100_000,
            fetch_size: int = 10_240, lock_timeout_ms: int = 10_000, row_count_order: str | None = None
            ) -> int | None:
        """Emit every row of `plans` (all tables, in order; `row_count_order`: sorted by their row counts first).
        Returns the snapshot's xid, or None if stopped (progress checkpointed)."""
        notices = self.notices
        if notices is None:
            return self._run(connect, snapshot_name, plans, resume, threads, chunk_rows, fetch_size,
                             lock_timeout_ms, row_count_order)
        notices.started()
        try:
            xid = self._run(connect, snapshot_name, plans, resume, threads, chunk_rows, fetch_size,
                            lock_timeout_ms, row_count_order)
        except BaseException:
            try:  # Debezium: the snapshot did not complete (an error, or interrupted)
                notices.aborted()
            except Exception:  # the sink may be what failed: the snapshot's own error is the one to report
                log.debug("the ABORTED notification could not be sent", exc_info=True)
            raise
        if xid is None:
            notices.aborted()
        else:
            notices.completed()
        return xid

    def _run(self, connect: Callable[[], psycopg.Connection], snapshot_name: str | None, plans: list[TablePlan],
             resume: SnapshotProgress | None, threads: int, chunk_rows: int, fetch_size: int, lock_timeout_ms: int,
             row_count_order: str | None) -> int | None:
        coord = connect()
        try:
            begin_snapshot(coord, snapshot_name, lock_timeout_ms)
            progress = resume
            chunk_notices = self.notices is not None and self.notices.chunking is not None
            self._counts = row_counts(coord, plans) if row_count_order is not None or chunk_notices else {}
            if row_count_order is not None:
                plans = sort_by_row_count(plans, self._counts, row_count_order)
                if resume is not None and (resume.done is not None or resume.table is not None):
                    # The stored progress names tables in their name order; Debezium starts such a snapshot
                    # over, and so does pgcdc (with the same txId and time).
                    log.info("the interrupted initial snapshot starts again from its first table: its tables "
                             "are read in row-count order (snapshot.tables.order.by.row.count)")
                    progress = None
            todo = self._resume(plans, progress)
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
            # Read by this thread, rows come in slices the size it renders: each slice is converted while its
            # rows are still in the CPU cache (a 10,240-row batch is not: 7% more CPU per row, measured).
            # Reader threads hand rows over in `fetch_size` batches: each hand-over costs a queue put and get.
            readers = ChunkReaders(connect, row[2], threads, min(fetch_size, RENDER_ROWS) if threads <= 1
                                   else fetch_size, lock_timeout_ms)
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
        if resume.table is not None and resume.key is not None:  # continued after its key: its rows so far count
            self._table_rows = resume.table_rows
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
            plan.events = events = plan.build()
            plan.records = rec = TableRecords(events, prefix=self.prefix, database=self.db, lsn=self.lsn,
                                              xid=self.xid, ts_us=self.ts_us, xmin=self.xmin)
            if self.parts is not None and rec.templates is not None:
                rec.parts = self.parts(rec.topic, events.value_wrap.prefix)
                native = rec.native() if rec.parts is not None else []
                if native:  # the rows as Avro writes them: no Java text of a double, no base64
                    rec.parts.native(native)
            plan.pk_index = tuple(events.names.index(c) for c in plan.pk) if plan.chunked else None
            columns = events.names
            for chunk in chunks(plan, split_points(coord, plan, chunk_rows)):
                yield ChunkRows(chunk, columns)

    def _emit_all(self, coord: psycopg.Connection, readers: ChunkReaders, plans: list[TablePlan],
                  chunk_rows: int, threads: int) -> bool:
        self._order = {id(p): i for i, p in enumerate(plans)}
        self._plans, self._prev_done = plans, self._done
        source_chunks = self._chunk_stream(coord, plans, chunk_rows)
        ahead: deque[ChunkRows] = deque()

        def fill() -> None:
            while len(ahead) < threads + 1:
                nxt = next(source_chunks, None)
                if nxt is None:
                    return
                readers.submit(nxt)
                ahead.append(nxt)

        stop, checkpoint, interval = self.stop, self.checkpoint, self.flush_interval
        next_flush = time.monotonic() + interval
        send, headers = self.sink.send, self.headers
        time_ns = time.time_ns
        # The record held back until the next one shows whether it ended its table (`ended`): (table, after and
        # key as `TableRecords.render` gave them (JSON, or the row and the key's fields for `parts`), first row of
        # its table, primary key text).
        pending: tuple[TablePlan, Any, Any, bool, tuple[str, ...] | None] | None = None
        ended = False
        notices = self.notices
        # rows of the current table read (a notification's total_rows_scanned), those emitted before a restart
        # included: Debezium, which starts a snapshot over, reads every row of the table
        table_rows = 0
        cut: set[int] = set()  # tables whose last row was left out: no record of theirs ends them
        marks: TableChunks | None = None  # where Debezium's chunks of the current table end (its notifications)

        def emit_pending(mark: str) -> None:
            p_plan, after, key, _, pk = pending  # type: ignore[misc]
            rec = p_plan.records
            assert rec is not None
            if rec.parts is not None:
                rec.parts.read(key, headers, after, rec.sources[mark], mark)
            else:
                send(rec.topic, key, rec.value(after, mark), headers)
            self.events += 1
            self._at(p_plan, pk, 1)

        fill()
        while ahead:
            rows = ahead.popleft()
            chunk = rows.chunk
            plan = chunk.plan
            name = f"{plan.schema}.{plan.table}"
            rec = plan.records
            assert rec is not None
            topic = rec.topic
            pk_idx = plan.pk_index
            template = rec.templates["true"] if rec.templates is not None else None
            parts = rec.parts
            if chunk.index == 0:
                self.reporter.table_started(name)
                # the cursor's table is this one only when a resumed run starts it (the previous table's last
                # record, held back, still names that table otherwise)
                table_rows = self._table_rows if plan.name == self._partial else 0
                if notices is not None:  # before the previous table's held-back last record, as Debezium
                    notices.table_started(name)
                    if notices.chunking is not None:
                        marks = notices.table_chunks(name, self._counts.get(id(plan), 0), plan.chunked, table_rows)
            first_row = chunk.index == 0 and plan.after is None
            tail_left_out = False  # the chunk's last row left out (event.processing.failure.handling.mode)
            for batch in rows:
                for part in (marks.parts(batch, RENDER_ROWS) if marks is not None else
                             (batch,) if len(batch) <= RENDER_ROWS else
                             [batch[lo:lo + RENDER_ROWS] for lo in range(0, len(batch), RENDER_ROWS)]):
                    tail_left_out = False
                    try:
                        afters, keys = rec.render(part)
                    except ValueConversionError:  # event.processing.failure.handling.mode (capture/failures.py)
                        if self.on_failure is None:
                            raise
                        kept = rec.writable(part, self.on_failure)
                        # Debezium marks rows by their place in the table as read: with its first (last) row
                        # left out, no record of the table is first_in_data_collection (last_in_data_collection).
                        first_row = first_row and bool(kept) and kept[0] is part[0]
                        tail_left_out = not kept or kept[-1] is not part[-1]
                        part = kept
                        if not part:
                            continue
                        afters, keys = rec.render(part)
                    if pending is not None:
                        p_plan, _, _, p_first, _ = pending
                        emit_pending(marker(p_plan.first, p_first,
                                            (ended or p_plan is not plan) and id(p_plan) not in cut))
                    n = len(part) - 1
                    if n:
                        start = 0
                        if first_row:  # the table's first record: its marker is not "true"
                            mark = marker(plan.first, True, False)
                            if parts is not None:
                                parts.read(keys[0], headers, afters[0], rec.sources[mark], mark)
                            else:
                                send(topic, keys[0], rec.value(afters[0], mark), headers)
                            start = 1
                        if parts is not None:
                            read, source = parts.read, rec.sources["true"]
                            for i in range(start, n):
                                read(keys[i], headers, afters[i], source, "true")
                        elif template is not None:
                            for i in range(start, n):
                                now = time_ns()
                                send(topic, keys[i], template % (afters[i], now // 1_000_000, now // 1000, now),
                                     headers)
                        else:
                            for i in range(start, n):
                                send(topic, keys[i], rec.value(afters[i], "true"), headers)
                        self.events += n
                        self._at(plan, tuple(part[n - 1][i] for i in pk_idx) if pk_idx is not None else None, n)
                    pending = (plan, afters[n], keys[n], first_row and n == 0,
                               tuple(part[n][i] for i in pk_idx) if pk_idx is not None else None)
                    ended = False
                    first_row = False
                self.reporter.add(name, len(batch))
                table_rows += len(batch)
                if stop.is_set() or (checkpoint is not None and time.monotonic() >= next_flush):
                    if checkpoint is not None:
                        checkpoint(self.progress())
                    next_flush = time.monotonic() + interval
                    if stop.is_set():
                        log.info("snapshot stopped at %s after %d record(s); a restart continues from here",
                                 name, self.events)
                        return False
            if chunk.last:
                if tail_left_out:
                    cut.add(id(plan))
                elif pending is not None and pending[0] is plan:
                    ended = True
                self.reporter.table_done(name)
                if notices is not None:
                    if marks is not None:
                        marks.finish()
                        marks = None
                    notices.table_done(name, table_rows)
            fill()
        if pending is not None:
            emit_pending("last")
        return True

    def _at(self, plan: TablePlan, key: tuple[str, ...] | None, records: int) -> None:
        """Records up to `key` of `plan`'s table are handed to the sink, `records` more of them: the cursor
        `progress()` reports."""
        if plan.name != self._partial:
            i = self._order[id(plan)]
            self._done = self._plans[i - 1].name if i else self._prev_done
            self._partial = plan.name
            self._table_rows = 0
        self._key = key
        self._table_rows += records
