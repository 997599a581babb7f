"""Orchestration only: wires source -> protocol -> capture -> envelope -> sink -> offsets.

Start-up order is chosen so bad input leaves nothing behind: everything that only reads (server checks,
offsets, broker) runs before the publication and slot are created, and a failure before streaming starts
drops whatever this run created.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import psycopg

from pgcdc.capture.changes import ChangeCapture
from pgcdc.capture.position import ResumePoint, SnapshotDone
from pgcdc.capture.snapshot import Snapshot
from pgcdc.config import ConnectorConfig
from pgcdc.durability import Checkpointer
from pgcdc.envelope.source import context_headers
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import PgcdcError, SourceError
from pgcdc.lsn import format_lsn
from pgcdc.offsets import OffsetStore, make_offset_store
from pgcdc.pgtypes import Modes
from pgcdc.protocol import PgoutputDecoder
from pgcdc.protocol import messages as m
from pgcdc.sink import Sink, make_sink
from pgcdc.source import slot as slots
from pgcdc.source.catalog import Catalog
from pgcdc.source.connection import check_server, connect, max_proto_version
from pgcdc.source.stream import ReplicationStream

log = logging.getLogger(__name__)


@dataclass
class Stats:
    events: int = 0
    started: float = field(default_factory=time.monotonic)


class Connector:
    """One capture process. `run()` blocks until `stop()` (from a signal handler or another thread)."""

    def __init__(self, config: ConnectorConfig, *, sink: Sink | None = None,
                 offsets: OffsetStore | None = None, stop_at_lsn: int | None = None) -> None:
        self.config = config
        self.stop_at_lsn = stop_at_lsn  # stop once a transaction ending at or after this LSN is emitted
        self._sink = sink
        self._offsets = offsets
        self._stop = threading.Event()
        self.stats = Stats()
        self.ready = threading.Event()  # set once streaming has started
        self.capture: ChangeCapture | None = None
        # One run id per process start, like Debezium's __debezium.context.runId (a UUIDv7).
        self.context_headers = context_headers(config.topic_prefix, _uuid7(), config.key_converter_schemas_enable)

    def stop(self) -> None:
        self._stop.set()

    # -- start-up -------------------------------------------------------------------------------------
    def _settings(self) -> EnvelopeSettings:
        c = self.config
        return EnvelopeSettings(
            topic_prefix=c.topic_prefix,
            modes=Modes(decimal=c.decimal_handling_mode, time=c.time_precision_mode,
                        binary=c.binary_handling_mode, interval=c.interval_handling_mode,
                        hstore=c.hstore_handling_mode, money_digits=c.money_fraction_digits,
                        include_unknown=c.include_unknown_datatypes),
            key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
            placeholder=c.unavailable_value_placeholder, message_key_columns=c.message_key_columns,
            propagate_columns=c.column_propagate_source_type, propagate_datatypes=c.datatype_propagate_source_type,
        )

    def _table_lookup(self, catalog: Catalog, settings: EnvelopeSettings):  # type: ignore[no-untyped-def]
        config = self.config

        def lookup(rel: m.Relation) -> TableEvents | None:
            if not config.captures(rel.namespace, rel.name):
                return None
            info = catalog.table(rel.oid)
            by_name = {c.name: c for c in info.columns} if info is not None else {}
            cols = []
            for c in rel.columns:
                ci = by_name.get(c.name)
                if ci is not None and ci.type_oid == c.type_oid:
                    cols.append(ColumnSpec(c.name, ci.type_name, ci.base_type_name, c.type_modifier, ci.not_null,
                                           ci.default, ci.enum_labels))
                else:  # the catalog moved on since this change was written: the type comes from the Relation
                    base, type_name, labels = catalog.type_of(c.type_oid, c.type_modifier)
                    cols.append(ColumnSpec(c.name, type_name, base, c.type_modifier, ci.not_null if ci else False,
                                           ci.default if ci else None, labels))
            pk = info.primary_key if info is not None else tuple(c.name for c in rel.columns if c.is_key)
            return TableEvents(rel.namespace, rel.name, cols, pk, settings)

        return lookup

    def run(self) -> Stats:
        c = self.config
        with ExitStack() as stack:
            conn = connect(c)
            stack.callback(conn.close)
            undo = _Undo(conn, c)
            try:
                stream, capture, checkpointer = self._start(conn, stack, undo)
            except BaseException:
                undo.run()
                raise
            if stream is None:  # snapshot.mode=initial_only: done
                return self.stats
            self.capture = capture
            self.ready.set()
            self._loop(stream, capture, checkpointer)
            checkpointer.checkpoint(capture.position)
            self.stats.events += capture.events
            if c.slot_drop_on_stop:
                stream.close()
                slots.drop_slot(conn, c.slot_name)
        return self.stats

    def _start(self, conn: psycopg.Connection, stack: ExitStack, undo: _Undo) -> tuple[Any, Any, Any]:
        """Everything before the first XLogData frame. On failure, `undo` drops what was created."""
        c = self.config
        version = check_server(conn, c)
        offsets = self._offsets or make_offset_store(c)
        stack.callback(_close_quietly, offsets)
        stored = offsets.load()
        sink = self._sink or make_sink(c)
        stack.callback(_close_quietly, sink)
        undo.publication = slots.ensure_publication(conn, c)
        existing = slots.find_slot(conn, c)
        if existing is not None and existing[1]:
            raise SourceError(f"slot.name: slot {c.slot_name!r} is in use by another process")
        repl = connect(c, replication=True)
        stream = ReplicationStream(repl, status_interval_s=c.status_update_interval_ms / 1000)
        stack.callback(stream.close)
        undo.stream = stream
        catalog = Catalog(connect(c))
        stack.callback(catalog.close)
        tables = self._table_lookup(catalog, self._settings())
        wants_snapshot = c.snapshot_mode not in ("no_data", "never") and (
            existing is None or stored is None or c.snapshot_mode == "always")
        if existing is None:
            slot = slots.create_slot(repl, c, export_snapshot=wants_snapshot)
            undo.slot = True
        elif wants_snapshot:
            log.warning("snapshot.mode=%s: slot %s already exists, so no consistent snapshot can be exported; "
                        "streaming from the slot's position without a snapshot", c.snapshot_mode, c.slot_name)
            wants_snapshot = False
        if wants_snapshot:
            stored = self._snapshot(conn, slot, sink, offsets, catalog)
            if c.snapshot_mode == "initial_only":
                return None, None, None
        resume = ResumePoint.from_offset(stored) if stored else None
        if resume:
            log.info("resuming from stored offset lsn=%s lsn_commit=%s", format_lsn(resume.lsn),
                     format_lsn(resume.lsn_commit))
        options = {"proto_version": str(max_proto_version(version)), "publication_names": c.publication_name}
        if version >= 140000:
            options["messages"] = "true"
            if c.pgcdc_streaming == "on":  # big transactions arrive in blocks before they commit
                options["streaming"] = "on"
        stream.start(c.slot_name, resume.start_lsn if resume else 0, options)
        capture = ChangeCapture(
            sink=sink, tables=tables, topic_prefix=c.topic_prefix,
            database=c.database_dbname, skipped_operations=c.skipped_operations,
            tombstones_on_delete=c.tombstones_on_delete, transaction_metadata=c.provide_transaction_metadata,
            key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
            resume=resume, context_headers=self.context_headers,
        )
        stack.callback(capture.streams.close)
        return stream, capture, Checkpointer(sink, offsets, stream)

    def _snapshot(self, conn: psycopg.Connection, slot: slots.SlotInfo, sink: Sink, offsets: OffsetStore,
                  catalog: Catalog) -> dict[str, Any]:
        """Emit every captured table inside the slot's exported snapshot, then make that durable."""
        c = self.config
        settings = self._settings()
        snapshot_tables = self._table_lookup(catalog, dataclasses.replace(
            settings, modes=dataclasses.replace(settings.modes, snapshot=True)))
        wanted = slots.captured_tables(conn, c)
        plan = []
        for schema, table in wanted:
            oid = catalog.table_oid(schema, table)
            info = catalog.table(oid) if oid is not None else None
            if info is None:
                continue
            rel = m.Relation(None, info.oid, schema, table, info.replica_identity, tuple(
                m.Column(1 if col.name in info.primary_key else 0, col.name, col.type_oid, col.type_modifier)
                for col in info.columns))
            plan.append((schema, table, lambda rel=rel: snapshot_tables(rel)))
        snapshot = Snapshot(sink=sink, topic_prefix=c.topic_prefix, database=c.database_dbname,
                            lsn=slot.consistent_point, headers=self.context_headers)
        log.info("initial snapshot of %d table(s) at %s", len(plan), format_lsn(slot.consistent_point))
        with connect(c) as snap_conn:
            snap_conn.autocommit = True
            xid = snapshot.run(snap_conn, slot.snapshot_name, plan)
        done = SnapshotDone(slot.consistent_point, xid, time.time_ns() // 1000)
        Checkpointer(sink, offsets, None).checkpoint(done)
        self.stats.events += snapshot.events
        log.info("initial snapshot done: %d records", snapshot.events)
        return done.to_offset()

    def _loop(self, stream: ReplicationStream, capture: ChangeCapture, checkpointer: Checkpointer) -> None:
        decode = PgoutputDecoder().decode
        handle = capture.handle
        read = stream.read
        interval = self.config.offset_flush_interval_ms / 1000
        next_flush = time.monotonic() + interval
        stop = self._stop
        stop_at = self.stop_at_lsn
        hb_interval = self.config.heartbeat_interval_ms / 1000
        hb_topic = f"{self.config.topic_heartbeat_prefix}.{self.config.topic_prefix}"
        next_heartbeat = time.monotonic() + hb_interval
        n = 0
        while not stop.is_set():
            frame = read(0.2)
            if frame is not None:
                payload = frame.payload
                handle(decode(payload), frame.start_lsn, payload)
                n += 1
                if n & 0xFF:
                    continue
            if stop_at is not None and capture.position is not None and capture.position.end_lsn >= stop_at:
                return
            now = time.monotonic()
            if hb_interval and now >= next_heartbeat:
                capture.heartbeat(hb_topic, stream.keepalive_lsn)
                next_heartbeat = now + hb_interval
            if now >= next_flush:
                checkpointer.checkpoint(capture.position)
                next_flush = now + interval


class _Undo:
    """What a failed start must drop so the database is left as it was."""

    def __init__(self, conn: psycopg.Connection, config: ConnectorConfig) -> None:
        self.conn = conn
        self.config = config
        self.slot = False
        self.publication = False
        self.stream: ReplicationStream | None = None

    def run(self) -> None:
        try:
            if self.stream is not None:  # the walsender must let go of the slot before it can be dropped
                self.stream.close()
            if self.slot:
                slots.drop_slot(self.conn, self.config.slot_name)
            if self.publication:
                slots.drop_publication(self.conn, self.config.publication_name)
        except psycopg.Error as exc:
            log.warning("could not undo start-up: %s", exc)


def _close_quietly(closeable: Any) -> None:
    try:
        closeable.close()
    except PgcdcError as exc:
        log.warning("closing: %s", exc)


def _uuid7() -> str:
    """A time-ordered UUID (version 7, RFC 9562): 48-bit milliseconds, then random bits."""
    import os
    import uuid

    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))
