"""The runner's two snapshot steps: the initial snapshot (every captured table read in one snapshot, then made
durable) and the reader of signals and incremental snapshots. runner.py calls them while it starts a run."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import psycopg

from pgcdc.capture.incremental import IncrementalSnapshot
from pgcdc.capture.position import IncrementalProgress, SnapshotDone, SnapshotProgress
from pgcdc.capture.signals import FileSignals, KafkaSignals
from pgcdc.capture.snapshot import Snapshot
from pgcdc.capture.snapshot_plan import TablePlan
from pgcdc.capture.snapshot_progress import ProgressReporter
from pgcdc.converters.sink import ConvertingSink
from pgcdc.config import ConnectorConfig
from pgcdc.durability import Checkpointer
from pgcdc.envelope.columns import ColumnRules
from pgcdc.errors import ConfigError
from pgcdc.lsn import format_lsn
from pgcdc.notifications import Notifier
from pgcdc.notifications.snapshots import IncrementalSnapshotNotices, InitialSnapshotNotices, captured_order
from pgcdc.offsets import OffsetStore
from pgcdc.sink import Sink
from pgcdc.source import slot as slots
from pgcdc.source.catalog import Catalog
from pgcdc.capture.failures import failure_handler
from pgcdc.source.connection import connect
from pgcdc.tables import catalog_relation, envelope_settings, snapshot_lookup, table_lookup

if TYPE_CHECKING:
    from pgcdc.runner import Connector

log = logging.getLogger("pgcdc.runner")


def incremental_snapshots(c: ConnectorConfig, column_rules: ColumnRules | None, headers: Any, conn: psycopg.Connection,
                          catalog: Catalog, sink: Sink, stored: dict[str, Any] | None,
                          notifier: Notifier | None = None) -> IncrementalSnapshot:
    """The signal table's reader and incremental snapshots (capture/incremental.py)."""
    build = snapshot_lookup(c, catalog, column_rules)
    others = [ch for ch in c.signal_enabled_channels if ch not in ("source", "kafka", "file")]
    if others:
        log.warning("signal.enabled.channels: %s not read; pgcdc reads the source, kafka and file channels",
                    others)
    if not c.signal_data_collection and not c.read_only:
        log.warning("signal.data.collection is not set: incremental snapshots need it for their watermarks "
                    "(or read.only=true)")
    channels: list[Any] = []
    if "kafka" in c.signal_enabled_channels:
        bootstrap = c.signal_kafka_bootstrap_servers or c.bootstrap_servers
        if not c.signal_kafka_topic or not bootstrap:
            raise ConfigError("signal.enabled.channels=kafka needs signal.kafka.topic and "
                              "signal.kafka.bootstrap.servers (or bootstrap.servers)")
        channels.append(KafkaSignals(bootstrap, c.signal_kafka_topic, c.signal_kafka_group_id, c.topic_prefix))
    if "file" in c.signal_enabled_channels:
        channels.append(FileSignals(c.signal_file))
    return IncrementalSnapshot(
        connect=lambda: connect(c), signal_table=c.signal_data_collection or "", channels=channels,
        chunk_size=c.incremental_snapshot_chunk_size, build=build,
        captured=lambda: [t for t in slots.captured_tables(conn, c)
                          if f"{t[0]}.{t[1]}" != c.signal_data_collection],
        sink=sink, topic_prefix=c.topic_prefix, database=c.database_dbname, headers=headers,
        progress=IncrementalProgress.from_offset(stored) if stored else None, read_only=c.read_only,
        table_order=lambda name: (next((i for i, p in enumerate(c.table_include_list) if re.fullmatch(p, name)),
                                       len(c.table_include_list)), name),
        on_failure=failure_handler(c.event_processing_failure_handling_mode),
        insert_delete=c.incremental_snapshot_watermarking_strategy.strip().lower() == "insert_delete",
        notices=IncrementalSnapshotNotices(notifier, c.table_include_list, c.signal_data_collection,
                                           c.snapshot_chunking) if notifier is not None else None)


def initial_snapshot(connector: Connector, conn: psycopg.Connection, slot: slots.SlotInfo, sink: Sink,
                     offsets: OffsetStore, catalog: Catalog, resume: SnapshotProgress | None) -> dict[str, Any] | None:
    """Emit every captured table in one snapshot, then make that durable. None if stopped first."""
    c = connector.config
    connector.health.set("snapshot", "resuming" if resume is not None else "")
    settings = envelope_settings(c, connector.column_rules, server_version=catalog.server_version, snapshot=True)
    snapshot_tables = table_lookup(c, catalog, settings)
    plan = []
    for schema, table in sorted(slots.captured_tables(conn, c)):
        if not c.snapshots(schema, table):
            continue
        rel = catalog_relation(catalog, schema, table)
        if rel is None:
            continue
        override = c.snapshot_select_statements.get(f"{schema}.{table}") \
            if f"{schema}.{table}" in c.snapshot_select_statement_overrides else None
        plan.append(TablePlan(schema, table, lambda rel=rel: snapshot_tables(rel),
                              override=override.strip().rstrip(";") if override else None))
    checkpointer = Checkpointer(sink, offsets, None)
    notices = None
    if connector.notifier is not None:  # notification.enabled.channels (pgcdc/notifications)
        captured = [f"{s}.{t}" for s, t in slots.captured_tables(conn, c) if not c.snapshot_include_collection_list
                    or any(re.fullmatch(p, f"{s}.{t}") for p in c.snapshot_include_collection_list)]
        notices = InitialSnapshotNotices(connector.notifier, [f"{p.schema}.{p.table}" for p in plan],
                                         captured_order(captured, c.table_include_list, c.signal_data_collection),
                                         c.snapshot_chunking)
    # An embedding application acknowledges records itself; its sink has no notion of snapshot progress,
    # so such a snapshot is stored only once complete (a restart reads it again).
    keeps_progress = getattr(sink, "acknowledged", None) is None
    metrics = connector.snapshot_metrics
    snapshot = Snapshot(sink=sink, topic_prefix=c.topic_prefix, database=c.database_dbname,
                        lsn=slot.consistent_point, headers=connector.context_headers,
                        checkpoint=checkpointer.checkpoint if keeps_progress else None,
                        flush_interval_s=c.offset_flush_interval_ms / 1000,
                        stop=connector.stop_event, metrics=metrics, reporter=ProgressReporter(metrics),
                        parts=sink.event_sender if isinstance(sink, ConvertingSink) else None,
                        on_failure=failure_handler(c.event_processing_failure_handling_mode), notices=notices)
    how = "in the slot's exported snapshot" if slot.snapshot_name else "in a new snapshot (catching up)"
    log.info("initial snapshot of %d table(s) %s, streaming from %s (snapshot.max.threads=%d)", len(plan), how,
             format_lsn(slot.consistent_point), c.snapshot_max_threads)
    if c.snapshot_tables_order_by_row_count != "disabled":  # Debezium logs it on either path
        log.info("Sort tables by row count '%s'%s", c.snapshot_tables_order_by_row_count.upper(),
                 "" if c.snapshot_row_count_order else " (no effect: not a chunked snapshot, as in Debezium)")
    xid = snapshot.run(lambda: connect(c), slot.snapshot_name, plan, resume=resume,
                       threads=c.snapshot_max_threads, chunk_rows=c.pgcdc_snapshot_chunk_rows,
                       fetch_size=c.snapshot_fetch_size or 10_240, lock_timeout_ms=c.snapshot_lock_timeout_ms,
                       row_count_order=c.snapshot_row_count_order)
    connector.stats.events += snapshot.events
    if xid is None:
        return None
    done = SnapshotDone(slot.consistent_point, xid, snapshot.ts_us)
    checkpointer.checkpoint(done)
    log.info("initial snapshot done: %d records in %.1f s (%.0f rows/s)", snapshot.events, metrics.elapsed,
             metrics.rows_per_second)
    return done.to_offset()
