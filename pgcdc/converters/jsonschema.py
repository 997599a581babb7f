"""Confluent's JsonSchemaConverter: Confluent wire format (magic byte 0, 4-byte schema id, the value as JSON),
the JSON Schema JsonSchemaData derives from the Connect schema (jsonschema_schema.py) registered with schemaType
JSON through confluent-kafka's client (subjects.py, registry.py).

The value's JSON is the JsonConverter payload the envelope already wrote: JsonSchemaData.fromConnectData and
Jackson write the same text for every Connect value Debezium makes (bytes and decimals base64, dates and times as
numbers, NaN and the infinities as strings, a null with a default as the default), which the comparison with
the real converter over the recorded records checks (tests/unit/test_confluent_jsonschema.py). So a record
costs no parse: the wire header, then those bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka.serialization import SerializationContext

from pgcdc.converters.jsonschema_schema import JsonSchemaText
from pgcdc.converters.settings import ConverterSpec
from pgcdc.converters.subjects import HEADER, RegistryConverter
from pgcdc.errors import SinkError


class JsonSchemaConverter(RegistryConverter):
    schema_type = "JSON"
    raw_payload = True  # prepared schemas get the JsonConverter payload bytes (sink.py)

    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        super().__init__(spec, stopping)
        self.texts = JsonSchemaText(spec.get("object.additional.properties", True))

    def prepare(self, schema: dict[str, Any] | None) -> PreparedJsonSchema:
        if schema is None:
            raise SinkError(f"{self.side}.converter: io.confluent.connect.json.JsonSchemaConverter needs the "
                            "record's schema")
        return PreparedJsonSchema(self, schema)


class PreparedJsonSchema:
    """One Connect schema's JSON Schema text, and per topic the wire header (the id its subject gives)."""

    __slots__ = ("conv", "headers", "optional", "text", "title")

    def __init__(self, conv: JsonSchemaConverter, schema: dict[str, Any]) -> None:
        self.conv = conv
        self.text = conv.texts.text(schema)
        # JsonSchema.name() is the top-level title: a named schema that is not a oneOf (optional).
        self.title = None if schema.get("optional") else schema.get("name")
        self.headers: dict[str, bytes] = {}
        # JsonSchemaData.fromConnectData of a null: JSON null for an optional schema, which the serializer writes
        # with its id like any value (an unwrapped delete's value); no value at all for a required one.
        self.optional = bool(schema.get("optional"))

    def _header(self, topic: str) -> bytes:
        conv = self.conv
        subject = conv.strategy(SerializationContext(topic, conv.field), self.title)
        if subject is None:
            raise SinkError(f"{conv.side}.converter: topic {topic}: the subject name strategy needs a named schema")
        schema_id, _ = conv.schema_id(subject, self.text)
        header = self.headers[topic] = HEADER.pack(0, schema_id)
        return header

    def __call__(self, topic: str, payload: bytes | None) -> bytes | None:
        if payload is None:
            return None
        if payload == b"null" and not self.optional:
            return None
        return (self.headers.get(topic) or self._header(topic)) + payload
