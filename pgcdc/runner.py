"""Orchestration only: wires source -> protocol -> capture -> envelope -> sink -> offsets.

Start-up order is chosen so bad input leaves nothing behind: everything that only reads (server checks,
offsets, broker) runs before the publication and slot are created, and a failure before streaming starts
drops whatever this run created.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import psycopg

from pgcdc.capture.changes import ChangeCapture
from pgcdc.capture.position import (ResumePoint, SnapshotProgress,
                                    snapshot_in_progress)
from pgcdc.capture.snapshot_progress import SnapshotMetrics
from pgcdc.capture.slot_xmin import SlotXmin
from pgcdc.config import ConnectorConfig
from pgcdc.durability import Checkpointer
from pgcdc.envelope.columns import ColumnRules
from pgcdc.envelope.source import context_headers, uuid7
from pgcdc.errors import (OffsetError, PgcdcError, RecordTooLarge, SinkError, SlotInUse, SlotLost,
                          SourceError)
from pgcdc.lsn import format_lsn
from pgcdc.metrics import Health, MetricsServer, SlotWatch
from pgcdc.offsets import OffsetStore, make_offset_store
from pgcdc.protocol import PgoutputDecoder
from pgcdc.capture.failures import failure_handler
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.notifications import Notifier, make_notifier
from pgcdc.notifications.snapshots import skipped
from pgcdc.sink import Sink, make_sink
from pgcdc.transforms.chain import TransformingSink
from pgcdc.source import slot as slots
from pgcdc.source import replica_identity
from pgcdc.source.catalog import Catalog
from pgcdc.source.connection import check_objects, check_server, connect
from pgcdc.source.stream import ReplicationStream, pgoutput_options
from pgcdc.runner_snapshots import incremental_snapshots, initial_snapshot
from pgcdc.snapshot_mode import snapshot_decision
from pgcdc.tables import envelope_settings, table_lookup

log = logging.getLogger(__name__)

# After streaming started once, these mean a connection was lost (PostgreSQL or Kafka): restart and resume.
RETRIABLE = (psycopg.OperationalError, psycopg.InterfaceError, SourceError, SinkError, OffsetError)


@dataclass
class Stats:
    events: int = 0
    started: float = field(default_factory=time.monotonic)


class Connector:
    """One capture process. `run()` blocks until `stop()` (from a signal handler or another thread)."""

    def __init__(self, config: ConnectorConfig, *, sink: Sink | None = None,
                 offsets: OffsetStore | None = None, stop_at_lsn: int | None = None) -> None:
        # Single message transforms work on records with schemas: the envelope then always writes them, and the
        # transforming sink writes what key/value.converter.schemas.enable ask for.
        self._chain = config.transform_chain()
        self._out_schemas = (config.key_converter_schemas_enable, config.value_converter_schemas_enable)
        # One run id per process start, like Debezium's __debezium.context.runId (a UUIDv7).
        # extended.headers.enabled=false: none (EventDispatcher.getExtendedHeaders).
        self.context_headers = context_headers(config.topic_prefix, uuid7(), config.header_schemas) \
            if config.extended_headers_enabled else []
        if self._chain is not None:
            config = config.model_copy(update={"key_converter_schemas_enable": True,
                                               "value_converter_schemas_enable": True})
        self.config = config
        self.stop_at_lsn = stop_at_lsn  # stop once a transaction ending at or after this LSN is emitted
        self._sink = sink
        self._offsets = offsets
        self._stop = threading.Event()
        self.stats = Stats()
        self.ready = threading.Event()  # set once streaming has started
        self.capture: ChangeCapture | None = None
        self.snapshot_metrics = SnapshotMetrics()  # the initial snapshot's progress, for metrics and tests
        self.health = Health()
        self.sink: Sink | None = None
        self.notifier: Notifier | None = None
        self.checkpointer: Checkpointer | None = None
        self.slot_watch: SlotWatch | None = None
        self._streamed = False  # streaming started at least once in this process
        self._streams_started = 0
        self._action_conn: psycopg.Connection | None = None
        self.metrics_server: MetricsServer | None = None
        self.column_rules = ColumnRules.from_properties(config.column_include_list, config.column_exclude_list,
                                                         config.column_rules)
        # Converters other than JsonConverter, made once per process: a schema version is registered once.
        self.converters = make_converters(config, self._stop.is_set)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stop_event(self) -> threading.Event:
        """Set once stop() is called: long steps (the initial snapshot) watch it."""
        return self._stop

    # -- start-up -------------------------------------------------------------------------------------
    def run(self) -> Stats:
        """Run until stopped. Waits while another process holds the slot (slot.max.retries, a standby), and
        after streaming started once, restarts on a lost connection (errors.max.retries)."""
        c = self.config
        server = MetricsServer(self, c.metrics_host, c.metrics_port).start() if c.metrics_port is not None else None
        self.metrics_server = server
        if server is not None or c.pgcdc_wal_warn_bytes:
            self.slot_watch = SlotWatch(self, c.pgcdc_slot_watch_interval_ms / 1000, c.pgcdc_wal_warn_bytes).start()
        slot_waits = retries = 0
        if self._offsets is None and c.offset_storage == "memory":
            # One in-memory store for every restart of this process: a restart resumes from what was stored
            # (the last checkpoint) instead of the slot's older confirmed position.
            from pgcdc.offsets.memory import MemoryOffsetStore

            self._offsets = MemoryOffsetStore()
        try:
            while True:
                starts_before = self._streams_started
                try:
                    self.health.set("starting")
                    stats = self._run_once()
                    self.health.set("stopped")
                    return stats
                except SlotInUse as exc:
                    slot_waits += 1
                    if 0 <= c.slot_max_retries < slot_waits or self._stop.is_set():
                        raise
                    delay = c.slot_retry_delay_ms / 1000
                    self.health.set("standby", f"{exc}; retrying every {delay:g} s")
                    log.info("%s; standing by, retrying in %g s (%d/%s)", exc, delay, slot_waits,
                             "∞" if c.slot_max_retries < 0 else c.slot_max_retries)
                    wait = delay
                except RETRIABLE as exc:
                    self.health.errors += 1
                    if not self._streamed or isinstance(exc, SlotLost | RecordTooLarge) or self._stop.is_set():
                        raise
                    if self._streams_started > starts_before:  # this attempt streamed: a new run of errors
                        retries = 0
                    retries += 1
                    if 0 <= c.errors_max_retries < retries:
                        raise
                    wait = c.retriable_restart_connector_wait_ms / 1000
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    self.health.restarts += 1
                    self.health.set("retrying", f"{reason}; restarting in {wait:g} s")
                    log.warning("%s; restarting in %g s (retry %d of %s)", reason, wait, retries,
                                "∞" if c.errors_max_retries < 0 else c.errors_max_retries)
                if self._stop.wait(wait):
                    self.health.set("stopped")
                    return self.stats
        except BaseException as exc:
            self.health.set("failed", str(exc))
            raise
        finally:
            for given in (self._sink, self._offsets, *self.converters):
                if given is not None:
                    _close_quietly(given)
            if self._action_conn is not None:
                self._action_conn.close()
            if self.slot_watch is not None:
                self.slot_watch.stop()
            if server is not None:
                server.stop()

    def _run_once(self) -> Stats:
        c = self.config
        with ExitStack() as stack:
            conn = connect(c)
            stack.callback(conn.close)
            undo = slots.StartUndo(conn, c)
            try:
                stream, capture, checkpointer = self._start(conn, stack, undo)
            except BaseException:
                undo.run()
                raise
            if stream is None:  # no streaming (snapshot.mode), or stopped during the snapshot
                return self.stats
            self.capture = capture
            self.checkpointer = checkpointer
            self._streamed = True
            self._streams_started += 1
            self.health.set("streaming")
            self.ready.set()
            self._loop(stream, capture, checkpointer)
            checkpointer.checkpoint(capture.position)
            log.debug("checkpoints while streaming: %d without waiting for Kafka, %d after waiting",
                      checkpointer.without_wait, checkpointer.after_wait)
            self.stats.events += capture.events
            if c.slot_drop_on_stop:
                stream.close()
                slots.drop_slot(conn, c.slot_name)
        return self.stats

    def _start(self, conn: psycopg.Connection, stack: ExitStack, undo: slots.StartUndo) -> tuple[Any, Any, Any]:
        """Everything before the first XLogData frame. On failure, `undo` drops what was created."""
        c = self.config
        version = check_server(conn, c)
        check_objects(conn, c)  # refusals that need no write come before the offset store creates anything
        # What this start creates, it closes when the start ends; a sink or offset store handed to the Connector
        # serves every restart and is closed once, when run() returns (a closed Kafka producer is not reused).
        offsets = self._offsets or make_offset_store(c)
        if self._offsets is None:
            stack.callback(_close_quietly, offsets)
        stored = offsets.load()
        sink = self._sink or make_sink(c)
        if self._sink is None:
            stack.callback(_close_quietly, sink)
        # Kafka Connect's order: transforms, then the converters, then the producer. A sink handed over may tap
        # the path where each stage begins (embed.Engine: an Event's view of the record as captured and in its
        # Connect form).
        tap = getattr(self._sink, "tap", None) or _untapped
        if any(self.converters) and not isinstance(sink, ConvertingSink):
            sink = tap("converters", ConvertingSink(sink, *self.converters))
        if self._chain is not None:
            sink = tap("transforms", TransformingSink(sink, self._chain, key_schemas=self._out_schemas[0],
                                                      value_schemas=self._out_schemas[1]))
        self.sink = sink
        # notification.enabled.channels: Debezium's notifications, sink records through the same sink
        self.notifier = make_notifier(c, sink)
        undo.publication = slots.ensure_publication(conn, c)
        existing = slots.find_slot(conn, c)
        if existing is not None and existing[1]:
            raise SlotInUse(f"slot.name: slot {c.slot_name!r} is in use by another process")
        if existing is None and self._streamed:
            stored_at = self.checkpointer.stored if self.checkpointer is not None else None
            since = format_lsn(stored_at.end_lsn) if stored_at is not None else "the last stored offset"
            raise SlotLost(f"slot.name: slot {c.slot_name!r} was dropped while pgcdc used it; a new slot would "
                           f"silently skip the changes since {since}")
        repl = connect(c, replication=True)
        stream = ReplicationStream(repl, status_interval_s=c.status_update_interval_ms / 1000)
        stack.callback(stream.close)
        undo.stream = stream
        catalog = Catalog(connect(c))
        stack.callback(catalog.close)
        tables_settings = envelope_settings(c, self.column_rules, server_version=catalog.server_version)
        tables = table_lookup(c, catalog, tables_settings)
        wants_snapshot, streams = snapshot_decision(c, stored, existing)
        if stored is None and existing is not None:
            # The slot outlived the offsets (offsets topic deleted, file removed, connector renamed). Nothing is
            # skipped: the slot confirms only what was stored, so streaming from its position replays the rest.
            where = {"kafka": f"offset.storage.topic {c.offset_storage_topic!r}",
                     "file": f"offset.storage.file.filename {c.offset_storage_file_filename!r}"}.get(
                         c.offset_storage, f"offset.storage={c.offset_storage}")
            log.warning("no stored offset for connector %r in %s, but slot %r exists (confirmed %s): %sstreaming "
                        "from the slot's confirmed position", c.name, where, c.slot_name, format_lsn(existing[0]),
                        f"a new snapshot (snapshot.mode={c.snapshot_mode}), then " if wants_snapshot else "")
        if existing is not None and stored and not wants_snapshot and not snapshot_in_progress(stored):
            slots.check_offset_against_slot(c, stored, existing[0])
        catch_up_from: int | None = None  # no exported snapshot: the stream position the rows must precede
        progress = SnapshotProgress.from_offset(stored) if stored else None
        if existing is None:
            slot = slots.create_slot(repl, c, export_snapshot=wants_snapshot)
            undo.slot = True
            progress = None  # a new slot: whatever the offsets say belongs to a slot that is gone
        elif wants_snapshot:
            # No consistent snapshot can be exported from an existing slot. Read the rows in a new snapshot and
            # stream from a position before it: every change since that position is replayed after the rows.
            if progress is not None:
                catch_up_from = progress.end_lsn
            elif stored and not snapshot_in_progress(stored):
                catch_up_from = ResumePoint.from_offset(stored).start_lsn
            else:
                catch_up_from = existing[0]
            slot = slots.SlotInfo(c.slot_name, False, catch_up_from, None)
        if wants_snapshot and c.snapshot_delay_ms:  # snapshot.delay.ms: as Debezium's delaySnapshotIfNeeded
            log.info("waiting %d ms before the snapshot starts (snapshot.delay.ms)", c.snapshot_delay_ms)
            if self._stop.wait(min(c.snapshot_delay_ms / 1000, threading.TIMEOUT_MAX)):
                return None, None, None
        if not wants_snapshot and self.notifier is not None:
            skipped(self.notifier)  # Debezium notifies a skipped initial snapshot at every such start (measured)
        if wants_snapshot:
            done = initial_snapshot(self, conn, slot, sink, offsets, catalog, progress)
            if done is None:  # stopped during the snapshot; its progress is stored
                return None, None, None
            stored = done
        if not streams:  # snapshot.mode=initial_only, or configuration_based without start.stream
            return None, None, None
        # streaming.delay.ms: after a snapshot that ran, as ChangeEventSourceCoordinator.delayStreamingIfNeeded.
        if wants_snapshot and c.streaming_delay_ms:
            log.info("waiting %d ms before streaming starts (streaming.delay.ms)", c.streaming_delay_ms)
            # Up to Long.MAX_VALUE ms, as Debezium takes; a wait longer than threading.TIMEOUT_MAX overflows.
            if self._stop.wait(min(c.streaming_delay_ms / 1000, threading.TIMEOUT_MAX)):
                return None, None, None
        resume = ResumePoint.from_offset(stored) if stored else None
        if resume:
            log.info("resuming from stored offset lsn=%s lsn_commit=%s", format_lsn(resume.lsn),
                     format_lsn(resume.lsn_commit))
        # replica.identity.autoset.values: when streaming starts, as Debezium's initConnection in startStreaming.
        replica_identity.autoset(conn, c)
        stream.start(c.slot_name, resume.start_lsn if resume else 0, pgoutput_options(c, version))
        if hasattr(sink, "keepalive"):  # a producer waiting for room in its queue keeps the stream alive too
            sink.keepalive = stream.maybe_send_status
        slot_xmin = None
        if c.xmin_fetch_interval_ms > 0:  # source.xmin: the slot's catalog_xmin, on a connection of its own
            xmin_conn = connect(c)
            stack.callback(xmin_conn.close)
            slot_xmin = SlotXmin(xmin_conn, c.slot_name, c.database_dbname, c.xmin_fetch_interval_ms)
        capture = ChangeCapture(
            sink=sink, tables=tables, topic_prefix=c.topic_prefix,
            database=c.database_dbname, skipped_operations=c.skipped_operations,
            unpublished_operations=c.unpublished_operations,
            tombstones_on_delete=c.tombstones_on_delete, transaction_metadata=c.provide_transaction_metadata,
            key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
            resume=resume, context_headers=self.context_headers,
            message_filter=c.keeps_message if c.message_prefix_include_list or c.message_prefix_exclude_list else None,
            transaction_topic=c.transaction_topic, streaming_snapshot=tables_settings.source_snapshot,
            binary_mode=c.binary_handling_mode, skip_unchanged=c.skip_messages_without_change,
            on_failure=failure_handler(c.event_processing_failure_handling_mode),
            # rows alone to the chain's compiled path; not when a tap must see each envelope first
            rows=sink.row_sender if isinstance(sink, TransformingSink) else None,
            # events as their parts to the value converter's own writer (Confluent's AvroConverter)
            events=sink.event_sender if isinstance(sink, ConvertingSink) else None, slot_xmin=slot_xmin,
        )
        stack.callback(capture.streams.close)
        if c.signal_data_collection or {"kafka", "file"} & set(c.signal_enabled_channels):
            capture.incremental = incremental_snapshots(c, self.column_rules, self.context_headers, conn, catalog,
                                                       sink, stored, self.notifier)
            stack.callback(capture.incremental.close)
            capture.incremental.stream_xmin = lambda: capture.xmin
            capture.incremental.row_count_order = c.snapshot_row_count_order
            capture.incremental.start()  # an incremental snapshot the offsets say is under way
        # flush.lsn.source=false / lsn.flush.mode=manual: the offset is stored, something else confirms the slot.
        return stream, capture, Checkpointer(sink, offsets, stream if c.confirms_lsn else None,
                                             interval_s=c.offset_flush_interval_ms / 1000, now=time.monotonic(),
                                             keepalive=stream.maybe_send_status)

    def _loop(self, stream: ReplicationStream, capture: ChangeCapture, checkpointer: Checkpointer) -> None:
        decode = PgoutputDecoder().decode
        handle = capture.handle
        read = stream.read
        tick = checkpointer.tick
        stop = self._stop
        stop_at = self.stop_at_lsn
        hb_interval = self.config.heartbeat_interval_ms / 1000
        hb_topic = self.config.heartbeat_topic
        next_heartbeat = time.monotonic() + hb_interval
        n = 0
        read_only_inc = capture.incremental if capture.incremental is not None and self.config.read_only else None
        channels_inc = capture.incremental if capture.incremental is not None and capture.incremental.channels \
            else None
        signal_interval = self.config.signal_poll_interval_ms / 1000
        next_signal_poll = time.monotonic() + signal_interval
        waiting = False  # a due checkpoint waits for Kafka to have acknowledged everything sent
        while not stop.is_set():
            frame = read(0.2)
            if frame is not None:
                if waiting:
                    # Before this frame adds records: the queue is most likely empty on the first frame after a
                    # pause in the stream.
                    waiting = tick(capture.position, time.monotonic())
                payload = frame.payload
                handle(decode(payload), frame.start_lsn, payload)
                n += 1
                if n & 0xFF and (stop_at is None or capture.position is None or capture.position.end_lsn < stop_at):
                    continue
            elif read_only_inc is not None and not capture.in_transaction:
                read_only_inc.position(stream.keepalive_lsn)  # idle: a read-only window may close
            if stop_at is not None and capture.position is not None and capture.position.end_lsn >= stop_at:
                return
            now = time.monotonic()
            if hb_interval and now >= next_heartbeat:
                capture.heartbeat(hb_topic, stream.keepalive_lsn)
                if self.config.heartbeat_action_query:
                    self._heartbeat_action()
                next_heartbeat = now + hb_interval
            waiting = tick(capture.position, now)
            if channels_inc is not None and now >= next_signal_poll and not capture.in_transaction:
                at = capture.position
                channels_inc.poll_channels(at.end_lsn if at else 0, at.xid if at else 0)  # signal.kafka.topic, .file
                next_signal_poll = now + signal_interval


    def _heartbeat_action(self) -> None:
        """heartbeat.action.query: a write to the captured database, so an idle one produces WAL to confirm."""
        try:
            if self._action_conn is None or self._action_conn.closed:
                self._action_conn = connect(self.config)
            self._action_conn.execute(self.config.heartbeat_action_query or "")
        except (psycopg.Error, SourceError) as exc:
            log.warning("heartbeat.action.query failed: %s", str(exc).strip().splitlines()[0] if str(exc) else exc)


def _untapped(stage: str, sink: Sink) -> Sink:
    return sink


def _close_quietly(closeable: Any) -> None:
    try:
        closeable.close()
    except PgcdcError as exc:
        log.warning("closing: %s", exc)
