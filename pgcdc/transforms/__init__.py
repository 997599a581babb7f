"""Kafka Connect single message transforms (SMTs) and predicates, applied to every record pgcdc emits.

A transform takes a `Record` (Kafka Connect's ConnectRecord: topic, partition, key schema and value, value
schema and value, headers, timestamp) and returns a record or None (dropped). Schemas are Connect schemas in
JsonConverter's JSON form (dicts in its member order, pgcdc/envelope/connect.py); values are the payload as
JsonConverter writes it (a struct is a dict in field order, bytes are base64 text, a double is a Java-formatted
number), so a transform that moves or drops fields never converts a value. `codec.py` turns the envelope's bytes
into records and back; `chain.py` applies the configured chain in a `Sink` wrapper; `config.py` reads
`transforms`/`predicates` as Kafka Connect does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]
Header = tuple[str, bytes]  # name, value as the header converter wrote it


class Record:
    """ConnectRecord. Treated as immutable: a transform returns `new()` copies, never changes one in place (a
    slotted class rather than a frozen dataclass: `new()` is on every record's path, dataclasses.replace is
    several times slower)."""

    __slots__ = ("headers", "key", "key_schema", "partition", "timestamp", "topic", "value", "value_schema")

    def __init__(self, topic: str, partition: int | None, key_schema: Schema | None, key: Any,
                 value_schema: Schema | None, value: Any, headers: tuple[Header, ...] = (),
                 timestamp: int | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.headers = headers
        self.timestamp = timestamp

    def new(self, **changes: Any) -> Record:
        """ConnectRecord.newRecord: a copy with some members replaced."""
        r = Record.__new__(Record)
        r.topic = changes.get("topic", self.topic)
        r.partition = changes.get("partition", self.partition)
        r.key_schema = changes.get("key_schema", self.key_schema)
        r.key = changes.get("key", self.key)
        r.value_schema = changes.get("value_schema", self.value_schema)
        r.value = changes.get("value", self.value)
        r.headers = changes.get("headers", self.headers)
        r.timestamp = changes.get("timestamp", self.timestamp)
        return r

    def __repr__(self) -> str:
        return f"Record(topic={self.topic!r}, partition={self.partition!r}, key={self.key!r}, value={self.value!r})"


# The protocol: a transform returns the record to emit (the same, or a `new()` copy) or None to drop it; a
# predicate says whether its transform applies. Plain callables, so a Python function is a transform as it is.
Transform = Callable[[Record], "Record | None"]
Predicate = Callable[[Record], bool]
