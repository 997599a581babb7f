"""The first half of the connector configuration's fields: identity, the database connection, the slot and
publication, what is captured and snapshotted, signals and events. The rest of the fields, and the checks, are
config.py's `ConnectorConfig`, which extends this class (the fields keep their order in docs/configuration.md).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CONNECTOR_CLASS = "io.debezium.connector.postgresql.PostgresConnector"
TOPIC_NAME = re.compile(r"^[a-zA-Z0-9_.\-]+$")  # CommonConnectorConfig.TOPIC_NAME_PATTERN, used with find()
_JAVA_INT = re.compile(r"[+-]?\d+")  # Java's Character.digit: any Unicode decimal digit
# Kafka Connect's settings (ConfigDef trims a value before parsing it); Debezium's own fields do not trim numbers.
CONNECT_TRIMMED = frozenset({"offset_flush_interval_ms", "offset_storage_partitions",
                             "offset_storage_replication_factor"})


class SourceFields(BaseModel):
    """Debezium's properties about the source; attribute names are snake_case, aliases are the property names."""

    # Each field's docstring is its description in docs/configuration.md (`python -m pgcdc.docgen`).
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True, use_attribute_docstrings=True)

    name: str = Field("pgcdc", alias="name")
    """The connector's name: the key of its stored offsets and part of the slot's application_name."""
    connector_class: str = Field(CONNECTOR_CLASS, alias="connector.class")
    """Must be Debezium's PostgreSQL connector class; any other value is refused."""
    tasks_max: int = Field(1, alias="tasks.max", ge=1, le=1)
    """Always 1: a PostgreSQL replication slot has one reader."""
    topic_prefix: str = Field(alias="topic.prefix", min_length=1)
    """Logical server name: the first part of every topic name and the offsets key."""

    database_hostname: str = Field(alias="database.hostname")
    """PostgreSQL host name or address."""
    database_port: int = Field(5432, alias="database.port", gt=0, lt=65536)
    """PostgreSQL port."""
    database_user: str = Field(alias="database.user")
    """Role to connect as: needs REPLICATION and LOGIN (see docs/security.md)."""
    database_password: str = Field("", alias="database.password", repr=False)
    """Password of database.user; never logged or printed."""
    # A file holding the password (Docker/Kubernetes secrets); env PGCDC_DATABASE_PASSWORD_FILE. Read by
    # build_config. Kafka Connect's ${file:...} config providers are not supported.
    database_password_file: str | None = Field(None, alias="database.password.file")
    """Read database.password from this file (trailing newline dropped), e.g. a Docker secret."""
    database_dbname: str = Field(alias="database.dbname")
    """Database to capture."""
    database_sslmode: Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] = Field(
        "prefer", alias="database.sslmode"
    )
    """libpq sslmode for every connection."""
    database_sslcert: str | None = Field(None, alias="database.sslcert")
    """Client certificate file (libpq sslcert)."""
    database_sslkey: str | None = Field(None, alias="database.sslkey")
    """Client private key file (libpq sslkey)."""
    database_sslrootcert: str | None = Field(None, alias="database.sslrootcert")
    """Root certificate file to verify the server (libpq sslrootcert)."""
    database_sslpassword: str | None = Field(None, alias="database.sslpassword")
    """Password of the client key in database.sslkey (libpq sslpassword)."""
    database_initial_statements: str | None = Field(None, alias="database.initial.statements")
    """SQL statements run on each new connection that is not the replication connection, separated by `;`
    (`;;` for a semicolon inside a statement)."""

    plugin_name: Literal["pgoutput"] = Field("pgoutput", alias="plugin.name")
    """Logical decoding plugin; pgcdc reads pgoutput only."""
    slot_name: str = Field("debezium", alias="slot.name", pattern=r"^[a-z0-9_]{1,63}$")
    """Replication slot to create or reuse."""
    slot_drop_on_stop: bool = Field(False, alias="slot.drop.on.stop")
    """Drop the slot when the connector stops (tests and demos; loses the position)."""
    # The slot in use by another process: retry this many times (-1: forever, for a standby), this far apart.
    slot_max_retries: int = Field(6, alias="slot.max.retries", ge=-1)
    """Retries while another process holds the slot (-1: wait forever, for a standby)."""
    slot_retry_delay_ms: int = Field(10_000, alias="slot.retry.delay.ms", ge=0)
    """Pause between those retries."""
    # Debezium reads it only with the `internal.` prefix (Field.createInternal); it cancels the command after it.
    create_slot_command_timeout: int = Field(90, alias="internal.create.slot.command.timeout", ge=0)
    """Seconds CREATE_REPLICATION_SLOT may wait for the transactions open when it starts (0: no limit)."""
    slot_failover: bool = Field(False, alias="slot.failover")  # PostgreSQL 17+: synced to physical standbys
    """Create the slot with failover so PostgreSQL 17+ syncs it to physical standbys."""
    flush_lsn_source: bool = Field(True, alias="flush.lsn.source")  # false: someone else confirms the slot
    """Confirm processed positions to the slot; false when another process confirms it."""
    pgcdc_offset_behind_slot: Literal["fail", "warn"] = Field("fail", alias="pgcdc.offset.behind.slot")
    """A stored offset behind the slot's confirmed position: stop with an error, or warn and stream on."""
    lsn_flush_mode: Literal["connector", "manual", "connector_and_driver"] = Field("connector",
                                                                                 alias="lsn.flush.mode")
    """Who confirms the slot's position: pgcdc (connector, connector_and_driver) or something else (manual)."""
    # After streaming started once, a lost connection (PostgreSQL or Kafka) restarts the connector after
    # retriable.restart.connector.wait.ms, at most errors.max.retries times in a row (-1: no limit).
    errors_max_retries: int = Field(-1, alias="errors.max.retries", ge=-1)
    """Restarts in a row after a lost connection once streaming ran (-1: no limit)."""
    retriable_restart_connector_wait_ms: int = Field(10_000, alias="retriable.restart.connector.wait.ms", gt=0)
    """Pause before such a restart."""
    heartbeat_action_query: str | None = Field(None, alias="heartbeat.action.query")
    """SQL run on the source database at each heartbeat (keeps an idle slot moving)."""
    metrics_port: int | None = Field(None, alias="metrics.port", ge=0, lt=65536)  # /metrics and /health
    """Port of the HTTP server with /metrics (Prometheus) and /health; unset: no server."""
    metrics_host: str = Field("0.0.0.0", alias="metrics.host")
    """Address that HTTP server listens on."""
    pgcdc_wal_warn_bytes: int = Field(1 << 30, alias="pgcdc.wal.warn.bytes", ge=0)
    """Log a warning when the slot retains more WAL than this."""
    pgcdc_slot_watch_interval_ms: int = Field(30_000, alias="pgcdc.slot.watch.interval.ms", gt=0)
    """How often the slot's lag and retained WAL are checked."""
    publication_name: str = Field("dbz_publication", alias="publication.name", min_length=1)
    """Publication the slot streams from."""
    publication_autocreate_mode: Literal["all_tables", "disabled", "filtered", "no_tables"] = Field(
        "all_tables", alias="publication.autocreate.mode"
    )
    """Create the publication if missing: for all tables, the filtered tables, none, or never."""
    schema_include_list: tuple[str, ...] = Field((), alias="schema.include.list")
    """Regular expressions of schemas to capture (comma-separated)."""
    schema_exclude_list: tuple[str, ...] = Field((), alias="schema.exclude.list")
    """Regular expressions of schemas not to capture."""
    table_include_list: tuple[str, ...] = Field((), alias="table.include.list")
    """Regular expressions of schema.table names to capture."""
    table_exclude_list: tuple[str, ...] = Field((), alias="table.exclude.list")
    """Regular expressions of schema.table names not to capture."""
    column_include_list: tuple[str, ...] = Field((), alias="column.include.list")
    """Regexes of `<schema>.<table>.<column>` to keep (all others leave the events)."""
    column_exclude_list: tuple[str, ...] = Field((), alias="column.exclude.list")
    """Regexes of `<schema>.<table>.<column>` to leave out of the events."""
    # column.mask.with.N.chars, column.mask.hash[.v2].<alg>.with.salt.<salt>, column.truncate.to.N.chars
    column_rules: dict[str, str] = Field(default_factory=dict)
    # transforms, transforms.*, predicates, predicates.*, errors.tolerance/log.*: pgcdc/transforms/config.py
    transform_props: dict[str, str] = Field(default_factory=dict)
    # topic.creation.*: Kafka Connect's topic creation (KIP-158), pgcdc/topic_creation/
    topic_creation_props: dict[str, str] = Field(default_factory=dict)
    message_prefix_include_list: tuple[str, ...] = Field((), alias="message.prefix.include.list")
    """Regexes of logical-decoding message prefixes to emit (all others are dropped)."""
    message_prefix_exclude_list: tuple[str, ...] = Field((), alias="message.prefix.exclude.list")
    """Regexes of logical-decoding message prefixes to drop."""

    snapshot_mode: Literal["initial", "always", "initial_only", "no_data", "when_needed",
                           "configuration_based"] = Field("initial", alias="snapshot.mode")
    """When to read the tables' current rows before streaming."""
    # snapshot.mode=configuration_based: Debezium's ConfigurationBasedSnapshotter flags. The schema flags have
    # no effect for PostgreSQL (no schema history), as in Debezium.
    snapshot_cb_data: bool = Field(False, alias="snapshot.mode.configuration.based.snapshot.data")
    """configuration_based mode: take a data snapshot."""
    snapshot_cb_schema: bool = Field(False, alias="snapshot.mode.configuration.based.snapshot.schema")
    """configuration_based mode: schema snapshot (no effect for PostgreSQL, as in Debezium)."""
    snapshot_cb_stream: bool = Field(False, alias="snapshot.mode.configuration.based.start.stream")
    """configuration_based mode: stream changes after the snapshot."""
    snapshot_cb_on_schema_error: bool = Field(
        False, alias="snapshot.mode.configuration.based.snapshot.on.schema.error")
    """configuration_based mode: snapshot the schema when its history is lost (no effect for PostgreSQL)."""
    snapshot_cb_on_data_error: bool = Field(False, alias="snapshot.mode.configuration.based.snapshot.on.data.error")
    """configuration_based mode: snapshot again when the stored position is no longer available."""
    snapshot_include_collection_list: tuple[str, ...] = Field((), alias="snapshot.include.collection.list")
    """Regular expressions of the captured tables whose rows the snapshot reads (all if unset)."""
    snapshot_select_statement_overrides: tuple[str, ...] = Field((), alias="snapshot.select.statement.overrides")
    """Tables whose snapshot query is replaced (each needs snapshot.select.statement.overrides.<table>)."""
    # snapshot.select.statement.overrides.<schema>.<table> values, keyed by "<schema>.<table>".
    snapshot_select_statements: dict[str, str] = Field(default_factory=dict)
    snapshot_fetch_size: int = Field(10_240, alias="snapshot.fetch.size", ge=0)
    """Rows a snapshot reader thread hands over at a time (with snapshot.max.threads=1, at most 64); 0 (Debezium:
    the JDBC driver reads each table whole) is the default, 10240."""
    snapshot_max_threads: int = Field(1, alias="snapshot.max.threads", ge=1, le=64)
    """Parallel snapshot readers, all in one exported snapshot."""
    snapshot_max_threads_multiplier: int = Field(1, alias="snapshot.max.threads.multiplier", ge=1)
    """Debezium's chunks per reader; above 1, like snapshot.max.threads above 1, makes the snapshot chunked."""
    legacy_snapshot_max_threads: bool = Field(False, alias="legacy.snapshot.max.threads")
    """Debezium's one-reader-per-table snapshot (same records; old name internal.legacy.snapshot.max.threads)."""
    snapshot_tables_order_by_row_count: Literal["ascending", "descending", "disabled"] = Field(
        "disabled", alias="snapshot.tables.order.by.row.count")
    """Snapshot tables in order of COUNT(*): only when the snapshot is chunked, as Debezium's PostgreSQL connector."""
    snapshot_lock_timeout_ms: int = Field(10_000, alias="snapshot.lock.timeout.ms", ge=0)
    """lock_timeout of the snapshot readers (pgcdc takes no table locks; it bounds waits on locks others hold)."""
    # pgcdc's own: rows per primary-key chunk, the unit of parallel reading.
    pgcdc_snapshot_chunk_rows: int = Field(100_000, alias="pgcdc.snapshot.chunk.rows", gt=0)
    """Rows per primary-key chunk, the unit of parallel and resumable snapshot reading."""
    signal_data_collection: str | None = Field(None, alias="signal.data.collection")
    """Signal table `<schema>.<table>` (id, type, data): signals inserted there; incremental snapshot watermarks."""
    signal_enabled_channels: tuple[str, ...] = Field(("source",), alias="signal.enabled.channels")
    """Signal channels read: source (the signal table), kafka, file; others (jmx) are warned about."""
    incremental_snapshot_chunk_size: int = Field(1024, alias="incremental.snapshot.chunk.size", gt=0)
    """Rows an incremental snapshot reads per window."""
    signal_kafka_topic: str | None = Field(None, alias="signal.kafka.topic")
    """Kafka topic of the kafka signal channel (records keyed by topic.prefix)."""
    signal_kafka_bootstrap_servers: str | None = Field(None, alias="signal.kafka.bootstrap.servers")
    """Brokers of the signal topic (bootstrap.servers if unset)."""
    signal_kafka_group_id: str = Field("kafka-signal", alias="signal.kafka.groupId")
    """Consumer group that keeps the signal topic's read position."""
    signal_file: str = Field("file-signals.txt", alias="signal.file")
    """File of the file signal channel: one JSON signal per line, removed once read."""
    notification_enabled_channels: tuple[str, ...] = Field((), alias="notification.enabled.channels")
    """Notification channels: sink (records on notification.sink.topic.name), log; jmx, unknown names warned about."""
    notification_sink_topic_name: str | None = Field(None, alias="notification.sink.topic.name")
    """Topic of the sink notification channel's records; required when notification.enabled.channels has sink."""
    signal_poll_interval_ms: int = Field(5000, alias="signal.poll.interval.ms", gt=0)
    """How often the kafka and file signal channels are read."""
    read_only: bool = Field(False, alias="read.only")
    """Incremental snapshots without writes: windows from pg_current_snapshot(), no watermark rows."""
    tombstones_on_delete: bool = Field(True, alias="tombstones.on.delete")
    """Write a null-value tombstone after each delete (for log compaction)."""
    skipped_operations: frozenset[str] = Field(frozenset({"t"}), alias="skipped.operations")
    """Operations not emitted: c, u, d, t (truncate), or none."""
    provide_transaction_metadata: bool = Field(False, alias="provide.transaction.metadata")
    """Write BEGIN/END records to <topic.prefix>.transaction and a transaction block in events."""
    message_key_columns: str = Field("", alias="message.key.columns")
    """Key columns per table for tables without a usable primary key (table:col,col;...)."""

    # -- Debezium 3.6 properties with an effect on what is captured or emitted -------------------------------
    publish_via_partition_root: bool = Field(False, alias="publish.via.partition.root")
    """Create the publication WITH publish_via_partition_root: partitions' changes as the root's (see compatibility)."""
    skip_messages_without_change: bool = Field(False, alias="skip.messages.without.change")
    """Drop updates that change no captured column (needs REPLICA IDENTITY FULL, else all are emitted)."""
    extended_headers_enabled: bool = Field(True, alias="extended.headers.enabled")
    """Write the `__debezium.context.*` headers (connector name, task id, run id) on change events."""
    include_schema_comments: bool = Field(False, alias="include.schema.comments")
    """Comments as schema docs: no effect for PostgreSQL, as in Debezium 3.6 (it never reads them)."""
    guardrail_collections_max: int = Field(0, alias="guardrail.collections.max", ge=0)
    """At each start, at most this many captured tables (partitions count; 0: no limit)."""
    guardrail_collections_limit_action: Literal["warn", "fail"] = Field(
        "warn", alias="guardrail.collections.limit.action")
    """More captured tables than guardrail.collections.max: log a warning, or stop before capturing."""
    streaming_delay_ms: int = Field(0, alias="streaming.delay.ms", ge=0)
    """Wait this long after a completed snapshot before streaming starts."""
    event_processing_failure_handling_mode: str = Field("fail", alias="event.processing.failure.handling.mode")
    """A change whose values cannot be written (as Debezium's dispatcher fails on them): `fail` stops the
    connector; `warn` (logged), `skip` and `ignore` leave it out and go on."""
    incremental_snapshot_watermarking_strategy: str = Field("insert_insert",
                                                            alias="incremental.snapshot.watermarking.strategy")
    """How an incremental snapshot's window closes: `insert_insert` inserts a close row into the signal table,
    `insert_delete` deletes the window's open row (the table keeps no watermark rows)."""
    snapshot_delay_ms: int = Field(0, alias="snapshot.delay.ms", ge=0)
    """Wait this long before an initial snapshot starts (the slot already made)."""
    xmin_fetch_interval_ms: int = Field(0, alias="xmin.fetch.interval.ms", ge=0)
    """Above 0: source.xmin of streamed events is the slot's catalog_xmin, read again at most this often (ms)."""
    replica_identity_autoset_values: str | None = Field(None, alias="replica.identity.autoset.values")
    """`schema.table-regex:IDENTITY`, comma-separated (DEFAULT, FULL, NOTHING, INDEX name): at streaming start."""

    @field_validator("guardrail_collections_limit_action", "snapshot_tables_order_by_row_count", "plugin_name",
                     "lsn_flush_mode", "publication_autocreate_mode", "snapshot_mode", "decimal_handling_mode",
                     "time_precision_mode", "binary_handling_mode", "interval_handling_mode", "hstore_handling_mode",
                     "schema_name_adjustment_mode", "field_name_adjustment_mode", mode="before",
                     check_fields=False)  # the last seven are config.py's fields
    @classmethod
    def _enum_case(cls, v: Any, info: Any) -> Any:
        # EnumeratedValue.parse trims and ignores case (measured with Debezium 3.6.3: INITIAL, " initial ").
        v = v.strip().lower() if isinstance(v, str) else v
        if info.field_name == "snapshot_mode" and v == "never":
            raise ValueError("'never' was replaced by no_data in Debezium 2.6, and Debezium 3.x refuses it; "
                             "use no_data")
        return v

    @field_validator("*", mode="before")
    @classmethod
    def _java_number_or_boolean(cls, v: Any, info: Any) -> Any:
        """A boolean or integer property's text, read as Debezium reads it (measured with 3.6.3): `true` or
        `false` in any case, blanks around ignored (not yes, on or 1); an integer as Java's parseInt and
        parseLong read it, digits with an optional sign (not 1_000, not blanks around), except Kafka Connect's
        own settings, which ConfigDef trims first."""
        if not isinstance(v, str) or info.field_name is None:
            return v
        kind = cls.model_fields[info.field_name].annotation
        if kind is bool:
            text = v.strip().lower()
            if text not in ("true", "false"):
                raise ValueError(f"Input should be a valid boolean: true or false, in any case (got {v!r})")
            return text == "true"
        if kind in (int, int | None):
            text = v.strip() if info.field_name in CONNECT_TRIMMED else v
            if not _JAVA_INT.fullmatch(text):
                raise ValueError(f"Input should be a valid integer: digits with an optional sign (got {v!r})")
            return int(text)
        return v

    @field_validator("topic_prefix", "topic_delimiter", "topic_heartbeat_prefix", "topic_transaction",
                     "topic_heartbeat_name", check_fields=False)  # all but topic.prefix: config.py's
    @classmethod
    def _topic_name(cls, v: str | None, info: Any) -> str | None:
        # CommonConnectorConfig.validateTopicName (an empty topic.heartbeat.name is no name).
        if v is None or (not v and info.field_name == "topic_heartbeat_name"):
            return None
        if not TOPIC_NAME.search(v):
            raise ValueError(f"{v} has invalid format (only the underscore, hyphen, dot and alphanumeric characters "
                             "are allowed)")
        return v

    @field_validator("database_sslmode", mode="before")
    @classmethod
    def _sslmode_case(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v  # the JDBC driver's SslMode.of ignores case, not blanks
