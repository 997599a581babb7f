"""The connector configuration: one pydantic model keyed by Debezium's property names (the table of fields is
most of this module), its field and cross-field checks; loading it from flat properties is config_load.py.

Sources (config_sources.py), later ones winning: a Kafka Connect connector JSON (`{"name":…, "config":{…}}`)
or a flat JSON object, a `.properties` file, YAML (nested keys are joined with dots), then environment
variables `PGCDC_<PROPERTY>` (upper case, dots as underscores: `PGCDC_TOPIC_PREFIX`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pgcdc import client_settings
from pgcdc.config_fields import CONNECTOR_CLASS, SourceFields
from pgcdc.config_values import regex_items
from pgcdc.config_sources import (ENV_PREFIX, RESERVED_ENV, RESERVED_ENV_PREFIXES, env_overrides,
                                  parse_properties, read_config_file)

# Read by pgcdc/transforms/config.py: how a transform failing on a record is handled.
TRANSFORM_ERRORS = ("errors.tolerance", "errors.log.enable", "errors.log.include.messages")

# Re-exported: the tests and tools read property sources through this module.
__all__ = ["ENV_PREFIX", "RESERVED_ENV", "RESERVED_ENV_PREFIXES", "ConnectorConfig", "build_config",
           "env_overrides", "load_config", "parse_properties", "read_config_file"]

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"

# Properties passed through verbatim to librdkafka (after stripping the prefix).
PASSTHROUGH_PREFIXES = ("kafka.", "producer.override.", "producer.")
SELECT_OVERRIDE_PREFIX = "snapshot.select.statement.overrides."
COLUMN_RULE = re.compile(r"^column\.(mask\.with\.\d+\.chars|truncate\.to\.\d+\.chars"
                         r"|mask\.hash\.(v[12]\.)?[A-Za-z0-9-]+\.with\.salt\..+)$")
DEFAULT_OFFSET_FILE = "offsets.dat"
OFFSET_STORES = {
    "org.apache.kafka.connect.storage.KafkaOffsetBackingStore": "kafka",
    "org.apache.kafka.connect.storage.FileOffsetBackingStore": "file",
    "org.apache.kafka.connect.storage.MemoryOffsetBackingStore": "memory",
    "kafka": "kafka",
    "file": "file",
    "memory": "memory",
}


def is_secret_property(name: str) -> bool:
    """Properties whose values are never logged or shown: passwords, secrets, JAAS configs, private keys."""
    low = name.lower()
    return (any(word in low for word in ("password", "secret", "sasl.jaas.config", "ssl.key", "user.info",
                                         "auth.token"))
            and not low.endswith(".file"))


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


class ConnectorConfig(SourceFields):
    """Validated configuration. Attribute names are snake_case; aliases are Debezium's property names; the first
    fields are config_fields.SourceFields'."""

    decimal_handling_mode: Literal["precise", "double", "string"] = Field("precise", alias="decimal.handling.mode")
    """numeric/decimal values as Connect Decimal bytes, double or string."""
    time_precision_mode: Literal["adaptive", "adaptive_time_microseconds", "connect", "isostring"] = Field(
        "adaptive", alias="time.precision.mode"
    )
    """How time, date and timestamp types are represented."""
    binary_handling_mode: Literal["bytes", "base64", "base64-url-safe", "hex"] = Field(
        "bytes", alias="binary.handling.mode"
    )
    """bytea values as bytes (base64 in JSON), base64, base64-url-safe or hex strings."""
    interval_handling_mode: Literal["numeric", "string"] = Field("numeric", alias="interval.handling.mode")
    """interval values as microseconds (numeric) or ISO 8601 strings."""
    hstore_handling_mode: Literal["json", "map"] = Field("json", alias="hstore.handling.mode")
    """hstore values as a JSON string or a map."""
    money_fraction_digits: int = Field(2, alias="money.fraction.digits", ge=0, le=20)
    """Scale of money values as decimals."""
    include_unknown_datatypes: bool = Field(False, alias="include.unknown.datatypes")
    """Emit columns of unsupported types as their text in bytes instead of stopping."""
    column_propagate_source_type: tuple[str, ...] = Field((), alias="column.propagate.source.type")
    """Regular expressions of columns whose schema carries the source type parameters."""
    datatype_propagate_source_type: tuple[str, ...] = Field((), alias="datatype.propagate.source.type")
    """Regular expressions of type names whose columns carry the source type parameters."""
    unavailable_value_placeholder: str = Field(
        "__debezium_unavailable_value", alias="unavailable.value.placeholder"
    )
    """Value of unchanged TOASTed columns that PostgreSQL did not send, in each column's type (docs/compatibility.md);
    `hex:` followed by hexadecimal octets gives its bytes."""

    key_converter: str = Field(JSON_CONVERTER, alias="key.converter")
    """Kafka Connect converter class for keys: JsonConverter, Confluent's AvroConverter or ByteArrayConverter;
    its options are `key.converter.*` (and the engine's `converter.*`). See "Converters" below."""
    value_converter: str = Field(JSON_CONVERTER, alias="value.converter")
    """Kafka Connect converter class for values (as key.converter); options `value.converter.*`."""
    header_converter: str = Field(JSON_CONVERTER, alias="header.converter")
    """Kafka Connect converter class for header values: JsonConverter (the Debezium engine's), Connect's
    SimpleHeaderConverter (a Connect worker's default), StringConverter, …; options `header.converter.*`."""
    key_converter_schemas_enable: bool = Field(True, alias="key.converter.schemas.enable")
    """JsonConverter keys: wrap them in {schema, payload} (`converter.schemas.enable` sets both sides)."""
    value_converter_schemas_enable: bool = Field(True, alias="value.converter.schemas.enable")
    """JsonConverter values: wrap them in {schema, payload}."""
    # The three sides' converters with their checked options (pgcdc.converters.settings), from the properties.
    converter_specs: dict[str, Any] = Field(default_factory=dict)

    status_update_interval_ms: int = Field(10_000, alias="status.update.interval.ms", gt=0)
    """How often the confirmed position is reported to PostgreSQL."""
    heartbeat_interval_ms: int = Field(0, alias="heartbeat.interval.ms", ge=0)
    """Heartbeat record interval (0: none); also moves the slot on idle or filtered-out databases."""
    # pgcdc's own: ask PostgreSQL 14+ to stream large transactions before commit (spilled to local files).
    pgcdc_streaming: Literal["on", "off"] = Field("on", alias="pgcdc.streaming")
    """Ask PostgreSQL 14+ to stream large transactions before commit (spilled to local files)."""
    topic_delimiter: str = Field(".", alias="topic.delimiter", min_length=1)
    """Between the parts of a topic name."""
    topic_transaction: str = Field("transaction", alias="topic.transaction", min_length=1)
    """Last part of the transaction metadata topic's name (`<topic.prefix><topic.delimiter><this>`)."""
    topic_naming_strategy: Literal["io.debezium.schema.SchemaTopicNamingStrategy",
                                   "io.debezium.schema.DefaultTopicNamingStrategy",
                                   "io.debezium.schema.DefaultUnicodeTopicNamingStrategy"] = Field(
        "io.debezium.schema.SchemaTopicNamingStrategy", alias="topic.naming.strategy")
    """How topic names are built from the prefix, schema and table (Debezium's class names)."""
    schema_name_adjustment_mode: Literal["none", "avro", "avro_unicode"] = Field(
        "none", alias="schema.name.adjustment.mode")
    """Record schema names (`<topic>.Key`, `.Value`, `.Envelope`) made valid Avro names: characters Avro does
    not allow become `_` (avro) or `_uXXXX` (avro_unicode)."""
    field_name_adjustment_mode: Literal["none", "avro", "avro_unicode"] = Field(
        "none", alias="field.name.adjustment.mode")
    """Column field names made valid Avro names, as schema.name.adjustment.mode (no dots in a field name)."""
    topic_heartbeat_prefix: str = Field("__debezium-heartbeat", alias="topic.heartbeat.prefix", min_length=1)
    """Heartbeat topic is <this><topic.delimiter><topic.prefix>, unless topic.heartbeat.name is set."""
    topic_heartbeat_name: str | None = Field(None, alias="topic.heartbeat.name")
    """The heartbeat topic's whole name (connectors may share it); unset or empty: topic.heartbeat.prefix's."""
    # Connect's default is 60 s; pgcdc flushes every second so a restart replays at most ~1 s of events.
    offset_flush_interval_ms: int = Field(1_000, alias="offset.flush.interval.ms", ge=0)
    """How often the position is stored (after Kafka acknowledged what precedes it)."""

    offset_storage: Literal["kafka", "file", "memory"] = Field("kafka", alias="offset.storage")
    """Offset store: Kafka Connect's Kafka, File or Memory backing store class (or kafka, file, memory). Unset:
    kafka when bootstrap.servers is set, else file."""
    offset_storage_topic: str = Field("pgcdc-offsets", alias="offset.storage.topic", min_length=1)
    """Compacted topic of the Kafka offset store (Kafka Connect's format)."""
    offset_storage_file_filename: str | None = Field(None, alias="offset.storage.file.filename")
    """File of the file offset store (Kafka Connect's FileOffsetBackingStore format); unset: offsets.dat in the
    working directory."""
    offset_storage_partitions: int = Field(25, alias="offset.storage.partitions", gt=0)
    """Partitions when the offset topic is created."""
    offset_storage_replication_factor: int = Field(-1, alias="offset.storage.replication.factor")
    """Replication factor when the offset topic is created (-1: the broker's default)."""

    bootstrap_servers: str | None = Field(None, alias="bootstrap.servers")
    """Kafka brokers (also read from kafka.bootstrap.servers)."""
    pgcdc_kafka_reach_timeout_ms: int = Field(5_000, alias="pgcdc.kafka.reach.timeout.ms", gt=0)
    """How long a start (run, validate, offsets) waits for Kafka's first metadata answer before it stops with one
    line naming bootstrap.servers."""
    sink_type: Literal["kafka", "file", "embedded"] = Field("kafka", alias="sink.type")
    """Where records go: Kafka, a JSON-lines file (- for stdout), or an embedding program."""
    sink_file_path: str = Field("-", alias="sink.file.path")
    """File of sink.type=file (- for stdout)."""

    # Everything for librdkafka: kafka.* / producer.override.* / producer.* with the prefix removed.
    kafka: dict[str, str] = Field(default_factory=dict)

    # -- value parsing ----------------------------------------------------------------------------
    @field_validator(
        "schema_include_list", "schema_exclude_list", "table_include_list", "table_exclude_list",
        "column_propagate_source_type", "datatype_propagate_source_type", "snapshot_include_collection_list",
        "column_include_list", "column_exclude_list", "message_prefix_include_list", "message_prefix_exclude_list",
        mode="before"
    )
    @classmethod
    def _regex_list(cls, v: Any, info: Any) -> tuple[str, ...]:
        items = regex_items(v) if isinstance(v, str) else tuple(v)
        for item in items:
            try:
                re.compile(item)
            except re.error as exc:
                raise ValueError(f"bad regular expression {item!r}: {exc}") from None
        return items

    @field_validator("unavailable_value_placeholder")
    @classmethod
    def _placeholder(cls, v: str) -> str:
        if v.startswith("hex:"):  # Debezium's prefix: the rest is the placeholder's octets
            try:
                bytes.fromhex(v[4:])
            except ValueError:
                raise ValueError(f"{v!r}: after hex:, pairs of hexadecimal digits (the placeholder's octets)") from None
        return v

    @field_validator("signal_enabled_channels", "notification_enabled_channels", mode="before")
    @classmethod
    def _channels(cls, v: Any) -> tuple[str, ...]:
        return _csv(v) if isinstance(v, str) else tuple(v)  # channels other than `source` are warned about

    @field_validator("skipped_operations", mode="before")
    @classmethod
    def _ops(cls, v: Any) -> frozenset[str]:
        ops = frozenset(_csv(v) if isinstance(v, str) else v)
        if "none" in ops:
            return frozenset()
        bad = ops - {"c", "u", "d", "t"}
        if bad:
            raise ValueError(f"unknown operation(s) {', '.join(sorted(bad))}: use c, u, d, t or none")
        return ops

    @field_validator("snapshot_select_statement_overrides", mode="before")
    @classmethod
    def _names(cls, v: Any) -> tuple[str, ...]:
        return _csv(v) if isinstance(v, str) else tuple(v)

    @field_validator("offset_storage", mode="before")
    @classmethod
    def _offset_storage(cls, v: Any) -> str:
        if v not in OFFSET_STORES:
            raise ValueError(f"unsupported offset store {v!r}; use one of {sorted(OFFSET_STORES)}")
        return OFFSET_STORES[v]

    @field_validator("connector_class")
    @classmethod
    def _connector_class(cls, v: str) -> str:
        if v != CONNECTOR_CLASS:
            raise ValueError(f"must be {CONNECTOR_CLASS}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _offset_defaults(cls, data: Any) -> Any:
        # Without Kafka, offsets go to a file, as Debezium's embedded engine defaults offset.storage to its file
        # store; Debezium leaves that file's name empty (required), pgcdc names one in the working directory so
        # that `sink.type=file` alone works (docs/configuration.md).
        if not isinstance(data, dict):
            return data
        if "offset.storage" not in data and "offset_storage" not in data and not (
            data.get("bootstrap.servers") or data.get("bootstrap_servers")
        ):
            data = {**data, "offset.storage": "file"}
        if OFFSET_STORES.get(data.get("offset.storage", data.get("offset_storage", ""))) == "file" and not (
            data.get("offset.storage.file.filename") or data.get("offset_storage_file_filename")
        ):
            data = {**data, "offset.storage.file.filename": DEFAULT_OFFSET_FILE}
        return data

    @model_validator(mode="after")
    def _cross_checks(self) -> ConnectorConfig:
        problems = []
        if self.sink_type == "kafka" and not self.bootstrap_servers:
            problems.append("bootstrap.servers (or kafka.bootstrap.servers) is required when sink.type=kafka")
        header = self.converter_specs.get("header")
        key = self.converter_specs.get("key")
        if header is not None and header.cls != JSON_CONVERTER and key is not None and key.cls == JSON_CONVERTER \
                and not key.json_schemas:
            problems.append(f"header.converter: {header.cls} writes the __debezium.newkey/oldkey headers from "
                            "the key's schema, which key.converter.schemas.enable=false leaves out")
        if self.offset_storage == "kafka" and not self.bootstrap_servers:
            problems.append("offset.storage=kafka needs bootstrap.servers; or set offset.storage to file/memory")
        missing = [t for t in self.snapshot_select_statement_overrides if t not in self.snapshot_select_statements]
        if missing:
            problems.append(f"snapshot.select.statement.overrides names {missing[0]} but "
                            f"snapshot.select.statement.overrides.{missing[0]} is not set")
        if self.publication_autocreate_mode == "filtered" and not (
            self.table_include_list or self.schema_include_list
        ):
            problems.append("publication.autocreate.mode=filtered needs table.include.list or schema.include.list")
        if "sink" in self.notification_enabled_channels and self.notification_sink_topic_name is None:
            # SinkNotificationChannel.validateNotificationTopicName, Debezium's words (measured: the engine
            # refuses to start); channel names are compared as written, so "Sink" enables nothing.
            problems.append("notification.sink.topic.name: Notification topic name must be provided when kafka "
                            "notification channel is enabled (notification.enabled.channels has sink)")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if name == "kafka" and isinstance(value, dict):
                value = {k: "***" if is_secret_property(k) else v for k, v in value.items()}
            yield name, value

    # -- derived ----------------------------------------------------------------------------------
    @property
    def unpublished_operations(self) -> frozenset[str]:
        """The operations Debezium leaves out of its publication (`publish = ...`): those of an explicitly set
        skipped.operations; the default (`t`) is skipped after decoding instead. PostgreSQL then sends Debezium
        no transaction that has only such changes, and a transaction that counts depends on it."""
        return self.skipped_operations if "skipped_operations" in self.model_fields_set else frozenset()

    @property
    def snapshot_row_count_order(self) -> str | None:
        """snapshot.tables.order.by.row.count as Debezium 3.6's PostgreSQL connector applies it: the tables are
        sorted by an exact COUNT(1) only on its chunked snapshot path (snapshot.max.threads or its multiplier above
        1, legacy.snapshot.max.threads off); on the one-thread path every table's count is unknown (0), so the
        stable sort keeps the tables' order (measured, 3.6.3). None: no sorting."""
        order = self.snapshot_tables_order_by_row_count
        return order if self.snapshot_chunking is not None and order != "disabled" else None

    @property
    def snapshot_chunking(self) -> tuple[int, int] | None:
        """(snapshot.max.threads, snapshot.max.threads.multiplier) when Debezium 3.6 takes its chunked snapshot
        path (either above 1, legacy.snapshot.max.threads off), which shapes its notifications; None otherwise."""
        chunked = (self.snapshot_max_threads > 1 or self.snapshot_max_threads_multiplier > 1) \
            and not self.legacy_snapshot_max_threads
        return (self.snapshot_max_threads, self.snapshot_max_threads_multiplier) if chunked else None

    @property
    def confirms_lsn(self) -> bool:
        """flush.lsn.source=false or lsn.flush.mode=manual: offsets are stored, the slot is left alone."""
        return self.flush_lsn_source and self.lsn_flush_mode != "manual"

    @property
    def heartbeat_topic(self) -> str:
        """AbstractTopicNamingStrategy.heartbeatTopic: topic.heartbeat.name, else prefix and topic.prefix joined by
        topic.delimiter."""
        return self.topic_heartbeat_name or f"{self.topic_heartbeat_prefix}{self.topic_delimiter}{self.topic_prefix}"

    @property
    def transaction_topic(self) -> str:
        return f"{self.topic_prefix}{self.topic_delimiter}{self.topic_transaction}"

    def keeps_message(self, prefix: str) -> bool:
        """message.prefix.include.list / message.prefix.exclude.list (whole-prefix regexes)."""
        if self.message_prefix_include_list:
            return any(re.fullmatch(p, prefix) for p in self.message_prefix_include_list)
        return not any(re.fullmatch(p, prefix) for p in self.message_prefix_exclude_list)

    def captures(self, schema: str, table: str) -> bool:
        """Debezium's include/exclude rules: include lists win; regexes match the whole name. The signal table
        is always captured: Debezium 3.6 emits its rows (watermarks too) and adds it to a filtered publication
        whatever the filters say (measured)."""
        if table == "spatial_ref_sys":  # PostGIS's: a system table to Debezium, never captured (measured on 3.6)
            return False
        if self.signal_data_collection is not None and f"{schema}.{table}" == self.signal_data_collection:
            return True
        return self._filters_capture(schema, table)

    def _filters_capture(self, schema: str, table: str) -> bool:
        full = f"{schema}.{table}"
        if self.table_include_list:
            return any(re.fullmatch(p, full) for p in self.table_include_list)
        if self.table_exclude_list and any(re.fullmatch(p, full) for p in self.table_exclude_list):
            return False
        if self.schema_include_list:
            return any(re.fullmatch(p, schema) for p in self.schema_include_list)
        if self.schema_exclude_list and any(re.fullmatch(p, schema) for p in self.schema_exclude_list):
            return False
        return True

    def snapshots(self, schema: str, table: str) -> bool:
        """snapshot.include.collection.list: the captured tables whose rows the snapshot reads (all if unset)."""
        full = f"{schema}.{table}"
        if full == self.signal_data_collection:
            # RelationalSnapshotChangeEventSource.prepareTables skips the signal table, whatever the filters say
            # (measured on 3.6.3: not read even when table.include.list names it and it holds rows)
            return False
        return not self.snapshot_include_collection_list or any(
            re.fullmatch(p, full) for p in self.snapshot_include_collection_list)

    def transform_chain(self) -> Any:
        """The configured single message transforms (pgcdc.transforms.chain.Chain), or None."""
        from pgcdc.transforms.config import build_chain

        return build_chain(self.transform_props, self.header_schemas)

    @property
    def header_schemas(self) -> bool:
        """Whether header values are written with their schema up to the header converter: with JsonConverter
        as the keys' schemas.enable says (the engine's JSON headers), with any other header converter always
        (it reads the schema, pgcdc.converters.sink)."""
        spec, key = self.converter_specs.get("header"), self.converter_specs.get("key")
        keys = key.json_schemas if key is not None and key.cls == JSON_CONVERTER else self.key_converter_schemas_enable
        return keys or (spec is not None and spec.needs_schema)

    def libpq_params(self, replication: bool = False) -> dict[str, Any]:
        return client_settings.libpq_params(self, replication)

    def producer_config(self) -> dict[str, str]:
        return client_settings.producer_config(self)


def build_config(props: Mapping[str, str]) -> ConnectorConfig:
    """Validate flat properties: every problem is reported at once (ConfigError.problems). See config_load.py."""
    from pgcdc import config_load  # it uses the model above: imported on the (cold) call, not at import

    return config_load.build(props)


def load_config(path: str | Path | None, environ: Mapping[str, str] | None = None,
                extra: Mapping[str, str] | None = None) -> ConnectorConfig:
    """A config file, then `PGCDC_*` environment variables (os.environ unless given), then `extra`."""
    from pgcdc import config_load

    return config_load.load(path, environ, extra)
