"""The CloudEvents attributes of a record Debezium's CloudEventsConverter wrote: what the Event view adds for it.

The change itself (op, source, before/after) the view reads from the record's Connect form, the envelope the
converter was handed, whose `before` and `after` are the event's `data`; only the attributes (`id`, `source`,
`type`, `time`, the `iodebezium*` extensions, …) exist in the converted bytes alone, so they are read from
them: JSON events parsed as they are, Avro events (serializer.type=avro) read by fastavro with the schema this
process registered for them, found by the id in the record's wire header (Confluent's, or Apicurio's with a 4-
or 8-byte id). No registry is asked.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import fastavro
import orjson

from pgcdc.converters.cloudevents import CloudEventsConverter

Reader = Callable[[bytes], dict[str, Any]]


def cloudevents_reader(converter: Any) -> Reader | None:
    """The attribute reader for a value converter; None unless it is CloudEventsConverter."""
    if not isinstance(converter, CloudEventsConverter):
        return None
    return _AvroEvents(converter) if converter.events == "avro" else _json_attributes


def _json_attributes(value: bytes) -> dict[str, Any]:
    event = orjson.loads(value)
    event.pop("data", None)
    return event  # type: ignore[no-any-return]


class _AvroEvents:
    """Avro events: read with the schema the converter wrote each wire header (magic byte, schema id) with."""

    def __init__(self, converter: CloudEventsConverter) -> None:
        assert converter.avro is not None
        self.schemas = converter.avro.written  # filled by the converter before the record reaches the application
        # the wire header: magic byte and a 4-byte id, or an 8-byte one (Apicurio's Legacy8ByteIdHandler)
        self.size = getattr(converter.avro, "frame_size", 5)

    def __call__(self, value: bytes) -> dict[str, Any]:
        size = self.size
        event = fastavro.schemaless_reader(io.BytesIO(value[size:]), self.schemas[value[:size]], None)
        assert isinstance(event, dict)
        event.pop("data", None)
        return event
