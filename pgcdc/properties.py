"""Debezium / Kafka Connect property names that pgcdc recognises but does not act on (yet).

A Kafka Connect connector JSON must work unchanged as pgcdc config, so every property Debezium's PostgreSQL
connector (3.x) or the Connect framework accepts is known here. Names in this set are accepted with a
warning; names in neither this set nor the config model are rejected as typos.
"""

from __future__ import annotations

# Accepted and ignored with a warning: they tune behaviour pgcdc does not have yet or does differently.
ACCEPTED_NOT_IMPLEMENTED: frozenset[str] = frozenset(
    """
    snapshot.isolation.mode
    snapshot.locking.mode snapshot.locking.mode.custom.name snapshot.query.mode snapshot.custom.class
    snapshot.mode.custom.name
    incremental.snapshot.allow.schema.changes
    heartbeat.topics.prefix
    schema.refresh.mode sanitize.field.names
    slot.stream.params
    database.tcpKeepAlive database.connectTimeoutMs
    database.sslfactory
    max.queue.size max.queue.size.in.bytes max.batch.size poll.interval.ms
    errors.retry.timeout errors.retry.delay.max.ms
    errors.deadletterqueue.topic.name errors.deadletterqueue.context.headers.enable
    custom.metric.tags
    topic.cache.size
    offset.flush.timeout.ms
    provide.transaction.metadata.enable
    publication.name.prefix
    schema.history.internal
    internal.key.converter internal.value.converter
    """.split()
)

# Prefixes of families of properties (per-column, per-table or per-client settings).
ACCEPTED_PREFIXES: tuple[str, ...] = (
    "notification.",
    "signal.",
    "errors.",
    "consumer.override.",
    "admin.override.",
    "custom.metric.",
)
