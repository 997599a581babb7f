"""What Debezium 3.6 notifies about snapshots (InitialSnapshotNotificationService and
IncrementalSnapshotNotificationService), built from what pgcdc's snapshot code knows at a table, chunk or window.

Every notification's additional data has `connector_name` (topic.prefix, Debezium's logical name); Debezium puts
the other entries in a HashMap copied from a `Map.of`, and so does this module (capture/java_order.py).
An initial snapshot's notifications have random UUIDs for ids; an incremental snapshot's have the id of the
signal that started it (its correlation id), a random UUID when there is none.

Initial snapshot (measured): STARTED; per table IN_PROGRESS (`current_collection_in_progress`, and
`data_collections`: the tables read, in a Java HashSet's order) before its first record and
TABLE_SCAN_COMPLETED (`scanned_collection`, `total_rows_scanned`, `status` SUCCEEDED, and `data_collections`:
the captured tables in Debezium's order, the signal table among them) after its rows were read; COMPLETED after
the last record, or ABORTED when the snapshot stopped or failed. A start that reads no snapshot sends SKIPPED.
A blocking snapshot sends the same, its tables the signal's. Debezium's chunked snapshot (snapshot.max.threads or
its multiplier above 1) adds, per chunk of a table's rows in key order, TABLE_CHUNK_IN_PROGRESS
(`current_collection_in_progress`, `chunk_index`, `total_chunks`, `total_rows_scanned`: the table's rows in the
chunks before) and TABLE_CHUNK_COMPLETED (`scanned_collection`, `data_collections` as TABLE_SCAN_COMPLETED's,
`chunk_index`, `total_chunks`, `status`), placed as its one-thread run places them.

Incremental snapshot (measured): STARTED (`data_collections`) when a signal starts one; IN_PROGRESS
(`data_collections`, `current_collection_in_progress`, `maximum_key`, `last_processed_key`: the key values'
PostgreSQL text, which Java's toString equals for integers and text, joined by commas) per chunk read;
TABLE_SCAN_COMPLETED (`data_collections`, `scanned_collection`, `total_rows_scanned`, `status`: SUCCEEDED, EMPTY,
NO_PRIMARY_KEY, UNKNOWN_SCHEMA) per table; COMPLETED after the last; PAUSED, RESUMED (`data_collections`) and
ABORTED (`data_collections`: the tables a stop-snapshot removed) on those signals. `data_collections` lists the
tables still to be read, the current one first.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from pgcdc.capture.java_order import java_hashmap_copy_order, java_hashset_copy_order
from pgcdc.notifications import Notification, Notifier
from pgcdc.pgtypes.java_float import double_text, float32_text, to_float32

INITIAL = "Initial Snapshot"
INCREMENTAL = "Incremental Snapshot"


def build(notifier: Notifier, aggregate_type: str, kind: str, data: dict[str, str],
          notification_id: str | None = None) -> Notification:
    """A notification of `kind` with `data` (in Debezium's Map.of argument order) and connector_name."""
    full = {**data, "connector_name": notifier.connector_name}
    ordered = {k: full[k] for k in java_hashmap_copy_order(list(data), ["connector_name"])}
    return Notification(notification_id or str(uuid.uuid4()), aggregate_type, kind, ordered,
                        time.time_ns() // 1_000_000)


class InitialSnapshotNotices:
    """An initial snapshot's notifications. `snapshotted`: the tables it reads (`schema.table`, in reading
    order); `captured`: Debezium's captured tables, in its order (`captured_order`); `chunking`:
    (snapshot.max.threads, its multiplier) when Debezium's snapshot is chunked (config's `snapshot_chunking`)."""

    def __init__(self, notifier: Notifier, snapshotted: Iterable[str], captured: Iterable[str],
                 chunking: tuple[int, int] | None = None) -> None:
        self.notifier = notifier
        self.reading = ",".join(java_hashset_copy_order(list(snapshotted)))
        self.captured = ",".join(captured)
        self.chunking = chunking

    def _send(self, kind: str, data: dict[str, str] | None = None) -> None:
        self.notifier.notify(build(self.notifier, INITIAL, kind, data or {}))

    def started(self) -> None:
        self._send("STARTED")

    def table_started(self, table: str) -> None:
        self._send("IN_PROGRESS", {"current_collection_in_progress": table, "data_collections": self.reading})

    def table_done(self, table: str, rows: int) -> None:
        self._send("TABLE_SCAN_COMPLETED", {"scanned_collection": table, "data_collections": self.captured,
                                            "total_rows_scanned": str(rows), "status": "SUCCEEDED"})

    def chunk_started(self, table: str, index: int, total: int, rows: int) -> None:
        self._send("TABLE_CHUNK_IN_PROGRESS", {"current_collection_in_progress": table, "chunk_index": str(index),
                                               "total_chunks": str(total), "total_rows_scanned": str(rows)})

    def chunk_done(self, table: str, index: int, total: int) -> None:
        self._send("TABLE_CHUNK_COMPLETED", {"scanned_collection": table, "data_collections": self.captured,
                                             "chunk_index": str(index), "total_chunks": str(total),
                                             "status": "SUCCEEDED"})

    def table_chunks(self, table: str, rows: int, keyed: bool, rows_before: int) -> TableChunks:
        """A table of `rows` rows (`keyed`: by a primary key, read without a select override) starts, or
        continues after `rows_before` rows: its chunks' notifications (`chunking` is set)."""
        assert self.chunking is not None
        return TableChunks(self, table, *debezium_chunks(rows, keyed, *self.chunking), rows_before)

    def completed(self) -> None:
        self._send("COMPLETED")

    def aborted(self) -> None:
        self._send("ABORTED")


def debezium_chunks(rows: int, keyed: bool, threads: int, multiplier: int) -> tuple[int, int]:
    """(chunks, rows in each chunk but the last) of a table in Debezium 3.6's chunked snapshot
    (RelationalSnapshotChangeEventSource.calculateChunkCount, ChunkBoundaryCalculator): one chunk without a
    key or rows; else threads × multiplier chunks at most, each of rows ÷ chunks rows in key order (the key at
    each multiple of that offset starts a chunk), the last taking the rest."""
    if not keyed or rows <= 0:
        return 1, 0
    desired = threads * multiplier
    per_chunk = max(1, rows // desired)
    total = min(desired, max(1, rows // per_chunk))
    size = rows // total
    return (total, size) if total > 1 else (1, 0)


class TableChunks:
    """Where Debezium's chunks of one table end among its rows, notified as its one-thread chunked snapshot does:
    TABLE_CHUNK_IN_PROGRESS (the rows of the chunks before) as a chunk starts, TABLE_CHUNK_COMPLETED once its
    rows were read, before its last record (held back by Debezium's snapshot receiver) is written."""

    def __init__(self, notices: InitialSnapshotNotices, table: str, total: int, size: int, rows_before: int) -> None:
        self.notices, self.table, self.total, self.size = notices, table, total, size
        self.index = min(rows_before // size, total - 1) if size else 0
        self.pos = rows_before
        self.end = (self.index + 1) * size if self.index < total - 1 else -1  # -1: the last chunk
        notices.chunk_started(table, self.index, total, self.index * size)

    def parts(self, batch: list[Any], most: int) -> Iterator[list[Any]]:
        """`batch` in parts of at most `most` rows, cut where a chunk ends; the next chunk's notifications are
        sent when the part after that end is asked for."""
        lo, n = 0, len(batch)
        while lo < n:
            if self.pos == self.end:
                self.notices.chunk_done(self.table, self.index, self.total)
                self.index += 1
                self.end = (self.index + 1) * self.size if self.index < self.total - 1 else -1
                self.notices.chunk_started(self.table, self.index, self.total, self.pos)
            hi = min(n, lo + most, lo + self.end - self.pos) if self.end >= 0 else min(n, lo + most)
            self.pos += hi - lo
            yield batch if hi - lo == n else batch[lo:hi]
            lo = hi

    def finish(self) -> None:
        self.notices.chunk_done(self.table, self.index, self.total)


def skipped(notifier: Notifier) -> None:
    """A start that reads no initial snapshot (snapshot.mode, or one already done): SKIPPED."""
    notifier.notify(build(notifier, INITIAL, "SKIPPED", {}))


def captured_order(tables: Iterable[str], include_list: Iterable[str], signal_table: str | None) -> list[str]:
    """Debezium's captured tables (RelationalSnapshotChangeEventSource.addSignalingCollectionAndSort): those
    each table.include.list pattern matches (case-insensitively, the whole name), pattern by pattern, each
    pattern's sorted; every table, sorted, without an include list; then the signal table's pattern's."""
    names = list(tables)
    patterns = list(include_list) or [".*"]
    if signal_table:
        patterns.append(signal_table)
    out: dict[str, None] = {}
    for pattern in patterns:
        regex = re.compile(pattern, re.IGNORECASE)
        for name in sorted(n for n in names if regex.fullmatch(n)):
            out.setdefault(name, None)
    return list(out)


def java_key_text(values: Iterable[str | None], types: Iterable[str] = ()) -> str:
    """A key as Debezium writes it in IN_PROGRESS: each value's Java toString, `<null>` for null, joined by
    commas. `types`: the key columns' format_type(); measured on 3.6: numeric is BigDecimal's text (`1E-7`),
    boolean `true`/`false`, double precision and real Java's (`1.0E20`); integers, text, char(n), date, time,
    uuid and the others PostgreSQL's text."""
    return ",".join("<null>" if v is None else _java_value(v, t)
                    for v, t in zip(values, itertools.chain(types, itertools.repeat(""))))


def _java_value(text: str, type_name: str) -> str:
    if type_name.startswith("numeric"):
        return str(Decimal(text))  # Python's Decimal and BigDecimal share the to-scientific-string rule
    if type_name == "boolean":
        return {"t": "true", "f": "false"}.get(text, text)
    if type_name == "double precision":
        return double_text(float(text))
    if type_name == "real":
        return float32_text(to_float32(float(text)))
    return text


class IncrementalSnapshotNotices:
    """An incremental snapshot's notifications; `collections` are `schema.table` names, the current first.
    `include_list` and `signal_table` order a blocking snapshot's tables as Debezium lists them, `chunking` shapes
    its notifications as an initial snapshot's (`blocking`)."""

    def __init__(self, notifier: Notifier, include_list: Iterable[str] = (), signal_table: str | None = None,
                 chunking: tuple[int, int] | None = None) -> None:
        self.notifier = notifier
        self.include_list = list(include_list)
        self.signal_table = signal_table
        self.chunking = chunking

    def blocking(self, tables: list[str]) -> InitialSnapshotNotices:
        """The notifications of a blocking snapshot of `tables` (in reading order): an initial snapshot's
        (measured: "Initial Snapshot" STARTED, IN_PROGRESS, TABLE_SCAN_COMPLETED, COMPLETED), its captured
        tables the signal's."""
        return InitialSnapshotNotices(self.notifier, tables, captured_order(tables, self.include_list,
                                                                            self.signal_table), self.chunking)

    def _send(self, correlation_id: str | None, kind: str, data: dict[str, str]) -> None:
        self.notifier.notify(build(self.notifier, INCREMENTAL, kind, data, correlation_id))

    def started(self, correlation_id: str | None, collections: list[str]) -> None:
        self._send(correlation_id, "STARTED", {"data_collections": ",".join(collections)})

    def paused(self, correlation_id: str | None, collections: list[str]) -> None:
        self._send(correlation_id, "PAUSED", {"data_collections": ",".join(collections)})

    def resumed(self, correlation_id: str | None, collections: list[str]) -> None:
        self._send(correlation_id, "RESUMED", {"data_collections": ",".join(collections)})

    def aborted(self, correlation_id: str | None, stopped: list[str]) -> None:
        self._send(correlation_id, "ABORTED", {"data_collections": ",".join(stopped)})

    def in_progress(self, correlation_id: str | None, collections: list[str], maximum_key: Iterable[str | None],
                    last_key: Iterable[str | None], key_types: tuple[str, ...] = ()) -> None:
        self._send(correlation_id, "IN_PROGRESS", {
            "data_collections": ",".join(collections), "current_collection_in_progress": collections[0],
            "maximum_key": java_key_text(maximum_key, key_types),
            "last_processed_key": java_key_text(last_key, key_types)})

    def table_done(self, correlation_id: str | None, collections: list[str], rows: int, status: str) -> None:
        self._send(correlation_id, "TABLE_SCAN_COMPLETED", {
            "data_collections": ",".join(collections), "scanned_collection": collections[0],
            "total_rows_scanned": str(rows), "status": status})

    def completed(self, correlation_id: str | None) -> None:
        self._send(correlation_id, "COMPLETED", {})
