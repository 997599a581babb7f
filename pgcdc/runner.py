"""Orchestration only: wires source -> protocol -> capture -> envelope -> sink -> offsets.

Start-up order is chosen so bad input leaves nothing behind: everything that only reads (server checks,
offsets, broker) runs before the publication and slot are created, and a failure before streaming starts
drops whatever this run created.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import psycopg

from pgcdc.capture.changes import ChangeCapture
from pgcdc.capture.position import ResumePoint
from pgcdc.config import ConnectorConfig
from pgcdc.durability import Checkpointer
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import PgcdcError, SourceError
from pgcdc.lsn import format_lsn
from pgcdc.offsets import OffsetStore, make_offset_store
from pgcdc.pgtypes import Modes
from pgcdc.protocol import PgoutputDecoder, messages as m
from pgcdc.sink import Sink, make_sink
from pgcdc.source import slot as slots
from pgcdc.source.catalog import Catalog
from pgcdc.source.connection import check_server, connect, max_proto_version
from pgcdc.source.stream import ReplicationStream

log = logging.getLogger(__name__)


@dataclass
class Stats:
    events: int = 0
    transactions: int = 0
    started: float = field(default_factory=time.monotonic)


class Connector:
    """One capture process. `run()` blocks until `stop()` (from a signal handler or another thread)."""

    def __init__(self, config: ConnectorConfig, *, sink: Sink | None = None,
                 offsets: OffsetStore | None = None) -> None:
        self.config = config
        self._sink = sink
        self._offsets = offsets
        self._stop = threading.Event()
        self.stats = Stats()
        self.ready = threading.Event()  # set once streaming has started

    def stop(self) -> None:
        self._stop.set()

    # -- start-up -------------------------------------------------------------------------------------
    def _settings(self) -> EnvelopeSettings:
        c = self.config
        return EnvelopeSettings(
            topic_prefix=c.topic_prefix,
            modes=Modes(decimal=c.decimal_handling_mode, time=c.time_precision_mode,
                        binary=c.binary_handling_mode),
            key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
            placeholder=c.unavailable_value_placeholder, message_key_columns=c.message_key_columns,
        )

    def _table_lookup(self, catalog: Catalog, settings: EnvelopeSettings):  # type: ignore[no-untyped-def]
        config = self.config

        def lookup(rel: m.Relation) -> TableEvents | None:
            if not config.captures(rel.namespace, rel.name):
                return None
            info = catalog.table(rel.oid)
            if info is None:  # dropped since: fall back to what the Relation message says
                cols = [ColumnSpec(c.name, "", "", c.type_modifier, False) for c in rel.columns]
                pk: tuple[str, ...] = tuple(c.name for c in rel.columns if c.is_key)
            else:
                by_name = {c.name: c for c in info.columns}
                cols = []
                for c in rel.columns:
                    ci = by_name.get(c.name)
                    cols.append(ColumnSpec(c.name, ci.type_name if ci else "", ci.base_type_name if ci else "",
                                           c.type_modifier, ci.not_null if ci else False))
                pk = info.primary_key
            return TableEvents(rel.namespace, rel.name, cols, pk, settings)

        return lookup

    def run(self) -> Stats:
        c = self.config
        conn = connect(c)
        created_publication = False
        created_slot = False
        offsets = sink = None
        repl = None
        streaming = False
        try:
            version = check_server(conn, c)
            offsets = self._offsets or make_offset_store(c)
            stored = offsets.load()
            sink = self._sink or make_sink(c)
            created_publication = slots.ensure_publication(conn, c)
            existing = slots.find_slot(conn, c)
            if existing is not None and existing[1]:
                raise SourceError(f"slot.name: slot {c.slot_name!r} is in use by another process")
            repl = connect(c, replication=True)
            if existing is None:
                if c.snapshot_mode not in ("no_data", "never"):
                    log.warning("snapshot.mode=%s: initial snapshots are not implemented yet; streaming only",
                                c.snapshot_mode)
                slots.create_slot(repl, c, export_snapshot=False)
                created_slot = True
            resume = ResumePoint.from_offset(stored) if stored else None
            start_lsn = resume.start_lsn if resume else 0
            if resume:
                log.info("resuming from stored offset lsn=%s lsn_commit=%s", format_lsn(resume.lsn),
                         format_lsn(resume.lsn_commit))
            catalog = Catalog(connect(c))
            stream = ReplicationStream(repl, status_interval_s=c.status_update_interval_ms / 1000)
            options = {"proto_version": str(max_proto_version(version)), "publication_names": c.publication_name}
            if version >= 140000:
                options["messages"] = "true"
            stream.start(c.slot_name, start_lsn, options)
            streaming = True
            self.ready.set()
            capture = ChangeCapture(
                sink=sink, tables=self._table_lookup(catalog, self._settings()), topic_prefix=c.topic_prefix,
                database=c.database_dbname, skipped_operations=c.skipped_operations,
                tombstones_on_delete=c.tombstones_on_delete, transaction_metadata=c.provide_transaction_metadata,
                key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
                resume=resume,
            )
            checkpointer = Checkpointer(sink, offsets, stream)
            try:
                self._loop(stream, capture, checkpointer)
                checkpointer.checkpoint(capture.position)
            finally:
                catalog.close()
            self.stats.events = capture.events
            return self.stats
        except BaseException:
            if not streaming:
                self._undo(conn, repl, created_slot, created_publication)
            raise
        finally:
            if repl is not None:
                repl.close()
            if c.slot_drop_on_stop and streaming:
                slots.drop_slot(conn, c.slot_name)
            conn.close()
            for closeable in (sink, offsets):
                if closeable is not None:
                    try:
                        closeable.close()
                    except PgcdcError as exc:
                        log.warning("closing: %s", exc)

    def _undo(self, conn: psycopg.Connection, repl: psycopg.Connection | None, created_slot: bool,
              created_publication: bool) -> None:
        """Start-up failed: drop what this run created, so a failed start leaves the database as it was."""
        try:
            if repl is not None:
                repl.close()
            if created_slot:
                slots.drop_slot(conn, self.config.slot_name)
            if created_publication:
                slots.drop_publication(conn, self.config.publication_name)
        except psycopg.Error as exc:
            log.warning("could not undo start-up: %s", exc)

    def _loop(self, stream: ReplicationStream, capture: ChangeCapture, checkpointer: Checkpointer) -> None:
        decode = PgoutputDecoder().decode
        handle = capture.handle
        read = stream.read
        interval = self.config.offset_flush_interval_ms / 1000
        next_flush = time.monotonic() + interval
        stop = self._stop
        n = 0
        while not stop.is_set():
            frame = read(0.2)
            if frame is not None:
                handle(decode(frame.payload), frame.start_lsn)
                n += 1
                if n & 0xFF:
                    continue
            now = time.monotonic()
            if now >= next_flush:
                checkpointer.checkpoint(capture.position)
                next_flush = now + interval
