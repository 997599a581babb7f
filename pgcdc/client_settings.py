"""What the configuration gives each client library: libpq's connection parameters and librdkafka's producer
settings."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pgcdc.config import ConnectorConfig

# Java producer settings (as Kafka Connect configs write them) -> librdkafka's names; "" drops a setting that
# has no librdkafka counterpart (serializers: pgcdc writes bytes).
JAVA_PRODUCER_NAMES: dict[str, tuple[str, Any]] = {
    "max.request.size": ("message.max.bytes", str),
    "buffer.memory": ("queue.buffering.max.kbytes", lambda v: str(max(1, int(v) // 1024))),
    "delivery.timeout.ms": ("message.timeout.ms", str),
    "max.block.ms": ("", str),
    "key.serializer": ("", str),
    "value.serializer": ("", str),
}


class LibrdkafkaLog:
    """librdkafka's own log lines, handed to confluent-kafka as its `logger` setting, into pgcdc's logging.

    librdkafka writes a line per failed connection attempt (hundreds while a broker is unreachable) straight to
    stderr. Here they go to the `pgcdc.kafka.librdkafka` logger at DEBUG (`--log-level debug` shows them):
    what they mean for the connector, pgcdc reports itself in one line (an unreachable broker at start, a
    record Kafka did not acknowledge). Only librdkafka's critical lines stay errors."""

    def __init__(self) -> None:
        self._log = logging.getLogger("pgcdc.kafka.librdkafka")

    def log(self, level: int, fmt: str, *args: Any) -> None:
        self._log.log(logging.ERROR if level >= logging.CRITICAL else logging.DEBUG, fmt, *args)


def kafka_client(conf: dict[str, Any]) -> dict[str, Any]:
    """A confluent-kafka client's settings with librdkafka's log routed through pgcdc's logging."""
    return {**conf, "logger": LibrdkafkaLog()}


def libpq_params(config: ConnectorConfig, replication: bool = False) -> dict[str, Any]:
    """Connection parameters for psycopg (libpq); `replication`: a walsender connection for logical replication."""
    params: dict[str, Any] = {
        "host": config.database_hostname,
        "port": config.database_port,
        "user": config.database_user,
        "password": config.database_password,
        "dbname": config.database_dbname,
        "sslmode": config.database_sslmode,
        "application_name": f"pgcdc-{config.name}",
        "connect_timeout": 10,
    }
    for key, attr in (("sslcert", "database_sslcert"), ("sslkey", "database_sslkey"),
                      ("sslrootcert", "database_sslrootcert"), ("sslpassword", "database_sslpassword")):
        if getattr(config, attr):
            params[key] = getattr(config, attr)
    # Values are read as text, in the layouts the converters read, whatever the database's or role's settings:
    # UTF-8 (pgoutput's texts too are in the session's encoding) and ISO dates, as PgJDBC asks for Debezium;
    # PostgreSQL's interval style, hex bytea and C's money layout ('-$1,234.56'); floats with every digit they
    # need (as PgJDBC asks too): the shortest exact text on PostgreSQL 12+, 9 and 18 significant digits before
    # (the default there, 6 and 15, loses precision).
    params["client_encoding"] = "UTF8"
    params["options"] = ("-c DateStyle=ISO -c IntervalStyle=postgres -c bytea_output=hex -c lc_monetary=C "
                         "-c extra_float_digits=3")
    if replication:
        params["replication"] = "database"
        # Values are decoded in this session: UTC makes timestamptz text the fast path of its converter.
        params["options"] += " -c TimeZone=UTC"
    return params


def producer_config(config: ConnectorConfig) -> dict[str, str]:
    """librdkafka's producer settings: pgcdc's defaults, then the `kafka.*` / `producer.*` pass-through."""
    conf = {
        "bootstrap.servers": config.bootstrap_servers or "",
        "enable.idempotence": "true",
        "acks": "all",
        # The Java client hashes keys with murmur2; librdkafka's murmur2_random matches it for keyed records.
        "partitioner": "murmur2_random",
        "linger.ms": "5",
        "compression.type": "lz4",  # repetitive JSON: several times fewer bytes to the broker
        "queue.buffering.max.messages": "200000",
        # Records waiting for the broker are bounded in bytes as the Java producer's buffer.memory (32 MB by
        # default) bounds them; librdkafka's own default is 1 GB, so a snapshot's peak RSS followed the
        # broker's longest stall (benchmarks/memory.py: 128 MB at 1M rows, 173 MB at 10M).
        "queue.buffering.max.kbytes": "32768",
        "log.connection.close": "false",
    }
    for name, value in config.kafka.items():
        if name in JAVA_PRODUCER_NAMES:  # a Kafka Connect config names the Java client's settings
            name, convert = JAVA_PRODUCER_NAMES[name]
            value = convert(value)
            if not name:
                continue
        conf[name] = value
    return conf
