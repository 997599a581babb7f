"""Confluent's AvroConverter: Confluent wire format (magic byte 0, 4-byte schema id, Avro binary), the schema
registered in a Schema Registry (Confluent's or any serving its API) through confluent-kafka's client
(subjects.py, registry.py), the record encoded by spavro (avro_writer.py).

Each schema version is compiled once (Avro text, writer, datum function) and registered once
per subject in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka.serialization import SerializationContext

from pgcdc.converters.avro_events import AvroEvents
from pgcdc.converters.avro_normalize import normalized_schema_text
from pgcdc.converters.avro_schema import avro_schema_text, datum_function, names_schema_text
from pgcdc.converters.avro_writer import WrittenSchemas, avro_writer
from pgcdc.converters.settings import ConverterSpec
from pgcdc.converters.subjects import HEADER, RegistryConverter
from pgcdc.errors import SinkError


class AvroConverter(RegistryConverter):
    schema_type = "AVRO"

    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        super().__init__(spec, stopping)
        # Wire header (magic byte, schema id) -> the parsed schema written with it: a reader of this process's
        # records (the embedded Event view of CloudEvents) reads them with it, without asking the registry.
        self.written = WrittenSchemas()
        self.meta = spec.get("connect.meta.data", True)
        self.scrub = spec.get("scrub.invalid.names", False)
        self.normalize = spec.get("normalize.schemas", False)

    def prepare(self, schema: dict[str, Any] | None) -> PreparedAvro:
        return PreparedAvro(self, schema)


class PreparedAvro:
    """One Connect schema: its Avro text and datum function, and per subject the id and the fastavro writer."""

    __slots__ = ("connect_schema", "conv", "datum", "headers", "names_text", "record_name", "subjects", "text")

    def __init__(self, conv: AvroConverter, schema: dict[str, Any] | None) -> None:
        if schema is None:
            raise SinkError(f"{conv.side}.converter: io.confluent.connect.avro.AvroConverter needs the record's "
                            "schema")
        self.conv = conv
        self.connect_schema = schema
        self.text = avro_schema_text(schema, conv.meta, conv.scrub)
        if conv.normalize:  # what Confluent's serializer registers or looks up: AvroSchema.normalize()
            self.text = normalized_schema_text(self.text)
        # Scrubbed names: the writer compiles the schema with Connect's names, which the datum's dicts have.
        self.names_text = names_schema_text(schema) if conv.scrub else None
        self.datum = datum_function(schema, tuples=False)  # None: JsonConverter's form is already the datum
        self.record_name = schema.get("name")
        self.subjects: dict[str, Callable[[Any], bytes]] = {}  # topic -> its writer (wire header, Avro binary)
        self.headers: dict[str, bytes] = {}  # topic -> its wire header

    def _subject(self, topic: str) -> Callable[[Any], bytes]:
        conv = self.conv
        subject = conv.strategy(SerializationContext(topic, conv.field), self.record_name)
        if subject is None:  # a record-name strategy and a schema without a name (never a Debezium struct)
            raise SinkError(f"{conv.side}.converter: topic {topic}: the subject name strategy needs a named schema")
        schema_id, text = conv.schema_id(subject, self.text)
        header = self.headers[topic] = HEADER.pack(0, schema_id)
        text = self.names_text or text
        conv.written.texts[header] = text  # for readers of the records
        write = self.subjects[topic] = avro_writer(text, header)
        return write

    def events(self) -> AvroEvents | None:
        """A writer of this schema's change events from their parts (avro_events.py), or None: not an envelope,
        or the records are written with the registry's latest schema (use.latest.version), known only later."""
        if self.conv.use_latest or not AvroEvents.fits(self.connect_schema):
            return None
        return AvroEvents(self.connect_schema, self.names_text or self.text)

    def json_payload(self, topic: str) -> Callable[[Any], bytes]:
        """f(a record's parsed JsonConverter payload) -> its bytes for `topic`, as `self(topic, payload)` writes
        them; the schema registered (or looked up) under the topic's subject on first use."""
        write = self.subjects.get(topic) or self._subject(topic)
        datum = self.datum
        if datum is None:
            return write
        return lambda value: write(datum(value))

    def header(self, topic: str) -> bytes:
        """`topic`'s wire header, the schema registered (or looked up) under its subject on first use."""
        if topic not in self.subjects:
            self._subject(topic)
        return self.headers[topic]

    def __call__(self, topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        write = self.subjects.get(topic)
        if write is None:
            write = self._subject(topic)
        datum = self.datum
        return write(value if datum is None else datum(value))

