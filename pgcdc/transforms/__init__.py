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

from dataclasses import dataclass, replace
from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]
Header = tuple[str, bytes]  # name, value as the header converter wrote it


@dataclass(frozen=True, slots=True)
class Record:
    topic: str
    partition: int | None
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None

    def new(self, **changes: Any) -> Record:
        """ConnectRecord.newRecord: a copy with some members replaced."""
        return replace(self, **changes)


# The protocol: a transform returns the record to emit (the same, or a `new()` copy) or None to drop it; a
# predicate says whether its transform applies. Plain callables, so a Python function is a transform as it is.
Transform = Callable[[Record], "Record | None"]
Predicate = Callable[[Record], bool]
