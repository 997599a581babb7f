"""The `sink` and `log` notification channels (Debezium's SinkNotificationChannel and LogNotificationChannel).

The sink channel's records carry Debezium's key and value schemas (SchemaFactory.notificationKeySchema and
notificationValueSchema) and go through the connector's sink like any record, so the transforms and converters
apply to them; no headers, no partition (Debezium builds a plain SourceRecord). The log channel writes
Debezium's line: `[Notification Service]  {id='…', aggregateType='…', type='…', additionalData={k=v, …},
timestamp=…}`.
"""

from __future__ import annotations

import logging
from typing import Any

from pgcdc.envelope import connect
from pgcdc.envelope.source import id_key_schema
from pgcdc.notifications import LOG, SINK, Notification

log = logging.getLogger("pgcdc.notifications")

NOTIFICATION_KEY_SCHEMA = id_key_schema("io.debezium.connector.common.NotificationKey")

NOTIFICATION_VALUE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "type"},
        {"type": "string", "optional": False, "field": "aggregate_type"},
        {"type": "map", "keys": {"type": "string", "optional": False},
         "values": {"type": "string", "optional": False}, "optional": True, "field": "additional_data"},
        {"type": "int64", "optional": False, "field": "timestamp"},
    ],
    "optional": False,
    "name": "io.debezium.connector.common.Notification",
    "version": 1,
}


class SinkChannel:
    """Notifications as records on `topic`, written by the connector's sink."""

    name = SINK

    def __init__(self, sink: Any, topic: str, *, key_schemas: bool = True, value_schemas: bool = True) -> None:
        self.sink = sink
        self.topic = topic
        self.key = connect.Wrapper(NOTIFICATION_KEY_SCHEMA, key_schemas)
        self.value = connect.Wrapper(NOTIFICATION_VALUE_SCHEMA, value_schemas)

    def send(self, notification: Notification) -> None:
        value = {"id": notification.id, "type": notification.type, "aggregate_type": notification.aggregate_type,
                 "additional_data": notification.additional_data, "timestamp": notification.timestamp}
        self.sink.send(self.topic, self.key({"id": notification.id}), self.value(value))

    def close(self) -> None:
        """The sink is the connector's: closed with it."""


def log_text(notification: Notification) -> str:
    """Debezium's Notification.toString (its additional data as Java's Map.toString)."""
    data = ", ".join(f"{k}={v}" for k, v in notification.additional_data.items())
    return (f"{{id='{notification.id}', aggregateType='{notification.aggregate_type}', type='{notification.type}', "
            f"additionalData={{{data}}}, timestamp={notification.timestamp}}}")


class LogChannel:
    """Notifications as INFO log lines."""

    name = LOG

    def send(self, notification: Notification) -> None:
        log.info("[Notification Service]  %s", log_text(notification))

    def close(self) -> None:
        pass
