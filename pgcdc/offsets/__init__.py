"""Offset stores: where the connector's position lives (Kafka Connect's format, so Debezium can share it)."""

from __future__ import annotations

from typing import Any, Protocol

import orjson

Offset = dict[str, Any]


class OffsetStore(Protocol):
    """Two calls and a close. `store` returns only once the offset is durable."""

    def load(self) -> Offset | None: ...

    def store(self, offset: Offset) -> None: ...

    def close(self) -> None: ...


def offset_key(connector_name: str, topic_prefix: str) -> bytes:
    """Kafka Connect's source-partition key for this connector: `["<name>",{"server":"<topic.prefix>"}]`."""
    return orjson.dumps([connector_name, {"server": topic_prefix}])


def make_offset_store(config: Any) -> OffsetStore:
    from pgcdc.offsets.file import FileOffsetStore
    from pgcdc.offsets.kafka import KafkaOffsetStore
    from pgcdc.offsets.memory import MemoryOffsetStore

    key = offset_key(config.name, config.topic_prefix)
    if config.offset_storage == "file":
        return FileOffsetStore(config.offset_storage_file_filename, key)
    if config.offset_storage == "memory":
        return MemoryOffsetStore()
    return KafkaOffsetStore(config.producer_config(), config.offset_storage_topic, key,
                            partitions=config.offset_storage_partitions,
                            replication_factor=config.offset_storage_replication_factor,
                            reach_timeout_s=config.pgcdc_kafka_reach_timeout_ms / 1000)
