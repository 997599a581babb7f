"""Values of the properties pgcdc accepts without acting on them (properties.py), and the formats the config
model's types do not express, checked as Debezium 3.6 checks them, so that a connector JSON pgcdc starts is one
Debezium would start too.

Each rule copies the field definition of Debezium's CommonConnectorConfig, PostgresConnectorConfig,
AbstractTopicNamingStrategy or EmbeddedEngineConfig (`withEnum`, `withValidation(Field::isPositiveInteger)`,
…), or Kafka Connect's ConnectorConfig for the `errors.*` framework properties. Enums compare case-insensitively
as Debezium's `EnumeratedValue.parse` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Rule = Callable[[str], str | None]  # the problem with a value, or None


def _int(value: str, bits: int, trim: bool) -> int | None:
    # Java's parseInt/parseLong: digits with an optional sign; Debezium does not trim, Kafka Connect's ConfigDef does.
    text = value.strip() if trim else value
    if not re.fullmatch(r"[+-]?\d+", text):  # Java's Character.digit: any Unicode decimal digit
        return None
    n = int(text)
    return n if -(1 << (bits - 1)) <= n < (1 << (bits - 1)) else None


def regex_items(value: str) -> tuple[str, ...]:
    """A comma-separated list of regular expressions as Debezium splits it (Strings.RegExSplitter): a comma after a
    backslash belongs to the expression and loses the backslash (`a{1\\,3}` is `a{1,3}`), other escapes stay;
    items are trimmed, empty ones dropped. A backslash ending the list is refused, as Debezium refuses it."""
    parts, start, i = [], 0, 0
    while i < len(value):
        if value[i] == "\\":
            if i + 1 == len(value):
                raise ValueError("unterminated escape sequence at the end of the list")
            i += 1
        elif value[i] == ",":
            parts.append(value[start:i])
            start = i + 1
        i += 1
    parts.append(value[start:])
    return tuple(p.strip().replace("\\,", ",") for p in parts if p.strip())


def _number(bits: int, low: int | None, what: str, trim: bool = False) -> Rule:
    def check(value: str) -> str | None:
        n = _int(value, bits, trim)
        if n is None or (low is not None and n < low):
            return f"must be {what}"
        return None
    return check


POSITIVE_INT = _number(32, 1, "a positive integer")
NON_NEGATIVE_LONG = _number(64, 0, "a non-negative integer")
NON_NEGATIVE_INT = _number(32, 0, "a non-negative integer")
INT = _number(32, None, "an integer")
CONNECT_LONG = _number(64, None, "an integer", trim=True)  # a Kafka Connect setting: ConfigDef trims it


def BOOLEAN(value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "must be true or false"


def one_of(*allowed: str) -> Rule:
    folded = {a.lower() for a in allowed}

    def check(value: str) -> str | None:
        return None if value.strip().lower() in folded else f"must be one of {', '.join(allowed)}"
    return check


def _metric_tags(value: str) -> str | None:
    # Field::isListOfMap: comma-separated key=value pairs.
    pairs = [p.strip() for p in value.split(",") if p.strip()]
    if not pairs or any(not re.fullmatch(r"[^=\s]+=\S.*", p) for p in pairs):
        return "must be comma-separated key=value pairs"
    return None


# ReplicaIdentityMapper.REPLICA_AUTO_SET_PATTERN, applied to each comma-separated entry.
REPLICA_AUTO_SET = re.compile(r"(?i)^\s*[^\s:]+:(DEFAULT|INDEX .\w*|FULL|NOTHING)\s*$")


def _replica_identity_values(value: str) -> str | None:
    # PostgresConnectorConfig.validateReplicaAutoSetField.
    if not value:
        return "must not be empty"
    for entry in value.split(","):
        if not REPLICA_AUTO_SET.search(entry):
            return (f"entry {entry!r} must be <schema>.<table>:<replica identity> "
                    f"(DEFAULT, FULL, NOTHING or INDEX <index>)")
    return None


# Key.CustomKeyMapper.MSG_KEY_COLUMNS_PATTERN, applied to each `;`-separated entry.
MSG_KEY_COLUMNS = re.compile(r"^\s*([^:]+):([^:,]+(,[^:,]+)*)\s*$")


def _message_key_columns(value: str) -> str | None:
    # RelationalDatabaseConnectorConfig.validateMessageKeyColumnsField.
    for entry in value.split(";"):
        if not MSG_KEY_COLUMNS.search(entry):
            return f"entry {entry!r} must be <table regex>:<column>[,<column>...] (entries separated by ;)"
    return None


RULES: dict[str, Rule] = {
    "message.key.columns": _message_key_columns,
    "snapshot.delay.ms": NON_NEGATIVE_LONG,
    "snapshot.isolation.mode": one_of("serializable", "repeatable_read", "read_committed", "read_uncommitted"),
    "snapshot.locking.mode": one_of("shared", "none", "custom"),
    "snapshot.query.mode": one_of("select_all", "custom"),
    "snapshot.tables.order.by.row.count": one_of("ascending", "descending", "disabled"),
    "incremental.snapshot.allow.schema.changes": BOOLEAN,
    "incremental.snapshot.watermarking.strategy": one_of("INSERT_INSERT", "INSERT_DELETE"),
    "schema.refresh.mode": one_of("columns_diff", "columns_diff_exclude_unchanged_toast"),
    "schema.name.adjustment.mode": one_of("none", "avro", "avro_unicode"),
    "field.name.adjustment.mode": one_of("none", "avro", "avro_unicode"),
    "xmin.fetch.interval.ms": NON_NEGATIVE_LONG,
    "database.tcpKeepAlive": BOOLEAN,
    "max.queue.size": POSITIVE_INT,
    "max.queue.size.in.bytes": NON_NEGATIVE_LONG,
    "max.batch.size": POSITIVE_INT,
    "poll.interval.ms": POSITIVE_INT,
    "event.processing.failure.handling.mode": one_of("fail", "warn", "skip", "ignore"),
    "custom.metric.tags": _metric_tags,
    "replica.identity.autoset.values": _replica_identity_values,
    "topic.cache.size": INT,
    "offset.flush.timeout.ms": POSITIVE_INT,
    "publish.via.partition.root": BOOLEAN,
    "snapshot.max.threads.multiplier": POSITIVE_INT,
    "legacy.snapshot.max.threads": BOOLEAN,
    "internal.legacy.snapshot.max.threads": BOOLEAN,
    "skip.messages.without.change": BOOLEAN,
    "extended.headers.enabled": BOOLEAN,
    "include.schema.comments": BOOLEAN,
    "guardrail.collections.max": NON_NEGATIVE_INT,
    "guardrail.collections.limit.action": one_of("warn", "fail"),
    "streaming.delay.ms": NON_NEGATIVE_LONG,
    # Kafka Connect's ConnectorConfig (the framework checks these when a connector is created).
    "errors.retry.timeout": CONNECT_LONG,
    "errors.retry.delay.max.ms": CONNECT_LONG,
    "errors.tolerance": one_of("none", "all"),
    "errors.log.enable": BOOLEAN,
    "errors.log.include.messages": BOOLEAN,
}

# Debezium's defaults, for the checks that relate two properties.
DEFAULT_MAX_BATCH_SIZE = 2048
DEFAULT_MAX_QUEUE_SIZE = 8192


def refused(rules: Mapping[str, Rule], props: Mapping[str, str]) -> list[str]:
    """One line per property of `props` its rule refuses, naming the property and the value."""
    out = []
    for name, rule in rules.items():
        if name in props:
            why = rule(props[name])
            if why:
                out.append(f"{name}: {why} (got {props[name]!r})")
    return out


def problems(props: Mapping[str, str]) -> list[str]:
    """One line per property whose value Debezium would refuse, naming the property and the value."""
    out = refused(RULES, props)
    # CommonConnectorConfig.validateMaxQueueSize: the queue must hold more than one batch.
    queue, batch = _int(props.get("max.queue.size", ""), 32, False), _int(props.get("max.batch.size", ""), 32, False)
    queue = DEFAULT_MAX_QUEUE_SIZE if "max.queue.size" not in props else queue
    batch = DEFAULT_MAX_BATCH_SIZE if "max.batch.size" not in props else batch
    if queue is not None and batch is not None and batch > 0 and 0 < queue <= batch:
        out.append(f"max.queue.size: must be larger than max.batch.size ({queue} <= {batch})")
    return out
