"""Blocking snapshots: an `execute-snapshot` signal with `type: blocking`.

Streaming waits while the tables are read in one new database snapshot, as an initial snapshot's records
(markers first/true/last; `lsn`, `txId` and `sequence` of the signal; measured on Debezium 3.6). Streaming then
goes on after the signal: changes committed after it are replayed after the rows, so folding stays exact.
Nothing is stored while it runs: a restart replays the signal and reads the tables again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import psycopg

from pgcdc.capture.failures import OnFailure
from pgcdc.capture.position import SnapshotProgress
from pgcdc.capture.snapshot import Snapshot
from pgcdc.capture.snapshot_plan import TablePlan
from pgcdc.envelope.table import TableEvents
from pgcdc.sink import Sink

if TYPE_CHECKING:
    from pgcdc.notifications.snapshots import InitialSnapshotNotices

log = logging.getLogger(__name__)


class _SignalSnapshot(Snapshot):
    """The initial snapshot's reader with the signal's LSN, xid and time (given as a resume point that
    continues nothing: every table from its start, the first marked `first`)."""

    def _resume(self, plans: list[TablePlan], resume: SnapshotProgress | None) -> list[TablePlan]:
        if plans:
            plans[0].first = True
        return plans


def run_blocking_snapshot(tables: list[tuple[str, str, str | None]], *, connect: Callable[[], psycopg.Connection],
                          build: Callable[[str, str], TableEvents | None], sink: Sink, topic_prefix: str,
                          database: str, headers: list[tuple[str, bytes]], at: tuple[int, int],
                          chunk_rows: int, xmin: int | None = None, row_count_order: str | None = None,
                          on_failure: OnFailure | None = None,
                          notices: Callable[[list[str]], InitialSnapshotNotices] | None = None) -> None:
    """Read `tables` ((schema, table, the signal's filter or None)) for the signal at `at` (LSN, xid);
    `notices`: the notifications of a snapshot of those tables (notification.enabled.channels)."""
    plans = []
    for schema, table, condition in tables:
        events = build(schema, table)
        if events is None:
            continue
        # A blocking snapshot takes the condition's `filter` as the table's whole SELECT statement
        # (Debezium 3.6 runs it as given: a bare condition fails there with a syntax error, measured).
        override = condition.strip().rstrip(";") if condition else None
        plans.append(TablePlan(schema, table, lambda events=events: events, override=override))
    if not plans:
        return
    lsn, xid = at
    snapshot = _SignalSnapshot(sink=sink, topic_prefix=topic_prefix, database=database, lsn=lsn, headers=headers,
                               on_failure=on_failure,
                               notices=notices([f"{p.schema}.{p.table}" for p in plans]) if notices else None)
    snapshot.xmin = xmin  # the stream's source.xmin when the signal came (measured on Debezium 3.6.3)
    snapshot.run(connect, None, plans, resume=SnapshotProgress(lsn, xid, time.time_ns() // 1000, None, None, None, 0),
                 chunk_rows=chunk_rows, row_count_order=row_count_order)
    log.info("blocking snapshot done: %d record(s)", snapshot.events)
