"""Debezium's notifications: what the connector tells about its snapshots, on the channels
`notification.enabled.channels` names.

A `Notification` is Debezium's (io.debezium.pipeline.notification.Notification): an id, an aggregate type
("Initial Snapshot", "Incremental Snapshot"), a type (STARTED, IN_PROGRESS, ...), string additional data and a
time. A `NotificationChannel` sends it somewhere: `log` writes a log line, `sink` a record on
`notification.sink.topic.name` through the connector's own sink (channels.py). What the snapshots send and when
is in snapshots.py; the snapshot code calls it on its cold path only (a table, a chunk, a window; never a row).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

# The channels Debezium 3.6 ships (META-INF/services ...NotificationChannel); pgcdc sends on the first two.
SINK, LOG, JMX = "sink", "log", "jmx"


@dataclass(frozen=True, slots=True)
class Notification:
    """One notification. `additional_data` keeps the order Debezium's HashMap iterates it in."""

    id: str
    aggregate_type: str
    type: str
    additional_data: dict[str, str]
    timestamp: int  # epoch milliseconds


class NotificationChannel(Protocol):
    """Where notifications go: `send` each one, `close` once at the end."""

    name: str

    def send(self, notification: Notification) -> None: ...

    def close(self) -> None: ...


class Notifier:
    """Sends a notification to every enabled channel, in the order they were made (Debezium's NotificationService)."""

    def __init__(self, channels: list[NotificationChannel], connector_name: str) -> None:
        self.channels = channels
        self.connector_name = connector_name  # additional_data's connector_name: Debezium's logical name

    def notify(self, notification: Notification) -> None:
        for channel in self.channels:
            channel.send(notification)

    def close(self) -> None:
        for channel in self.channels:
            channel.close()


def make_notifier(config: Any, sink: Any) -> Notifier | None:
    """The notifier of `notification.enabled.channels`, sending sink records through `sink`; None when no channel
    pgcdc sends on is enabled. Names are compared as written (Debezium's `contains`): an unknown name enables
    nothing and is warned about, as is `jmx` (pgcdc has no JMX)."""
    from pgcdc.notifications.channels import LogChannel, SinkChannel

    channels: list[NotificationChannel] = []
    names = config.notification_enabled_channels
    if JMX in names:
        log.warning("notification.enabled.channels: jmx is not available in pgcdc (no JMX); its notifications "
                    "are not sent")
    unknown = [n for n in names if n not in (SINK, LOG, JMX)]
    if unknown:
        log.warning("notification.enabled.channels: %s not a notification channel (sink, log, jmx); ignored, as "
                    "Debezium ignores it", ", ".join(unknown))
    if SINK in names:
        channels.append(SinkChannel(sink, config.notification_sink_topic_name,
                                    key_schemas=config.key_converter_schemas_enable,
                                    value_schemas=config.value_converter_schemas_enable))
    if LOG in names:
        channels.append(LogChannel())
    return Notifier(channels, config.topic_prefix) if channels else None
