"""Confluent's ProtobufConverter: Confluent wire format (magic byte 0, 4-byte schema id, the message-index array,
the Protobuf message), the schema registered in a Schema Registry through confluent-kafka's client
(subjects.py, registry.py), the message built and encoded by the protobuf runtime from a descriptor made at run time
(protobuf_schema.py).

Each schema version is compiled once (text, descriptor, fill function) and registered once per subject in this
process. The record's message is always the schema's first and only top-level message, whose index array is
Confluent's one-byte shortcut `0`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka.serialization import SerializationContext

from pgcdc.converters.protobuf_schema import DEFAULTS, ProtobufOptions, protobuf_schema, scrub_name
from pgcdc.converters.protobuf_values import filler
from pgcdc.converters.subjects import HEADER, RegistryConverter
from pgcdc.converters.settings import ConverterSpec
from pgcdc.errors import SinkError

FIRST_MESSAGE = b"\x00"  # MessageIndexes [0], written as the single zigzag varint 0


@dataclass
class ProtobufForm:
    """One Connect schema's Protobuf form: the registered text, the message class, and the function that fills
    a message from a value."""

    text: str
    full_name: str
    message_class: Any
    fill: Callable[[Any, Any], None]


def protobuf_form(connect_schema: dict[str, Any], options: ProtobufOptions = DEFAULTS) -> ProtobufForm:
    text, full_name, cls = protobuf_schema(connect_schema, options)
    names = scrub_name if options.scrub_invalid_names else (lambda name: name)
    return ProtobufForm(text, full_name, cls, filler(connect_schema, cls.DESCRIPTOR, names))


def protobuf_options(spec: ConverterSpec) -> ProtobufOptions:
    """The options of ProtobufDataConfig that change the schema or the bytes (enhanced.protobuf.schema.support and
    optional.for.proto2 change only how records are read back)."""
    return ProtobufOptions(wrapper_for_nullables=spec.get("wrapper.for.nullables", False),
                           optional_for_nullables=spec.get("optional.for.nullables", False),
                           scrub_invalid_names=spec.get("scrub.invalid.names", False))


class ProtobufConverter(RegistryConverter):
    schema_type = "PROTOBUF"

    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        super().__init__(spec, stopping)
        # Registered text -> its form: the message class a reader of this process's records parses them with.
        self.forms: dict[str, ProtobufForm] = {}
        self.options = protobuf_options(spec)

    def prepare(self, schema: dict[str, Any] | None) -> PreparedProtobuf:
        if schema is None:
            raise SinkError(f"{self.side}.converter: io.confluent.connect.protobuf.ProtobufConverter needs the "
                            "record's schema")
        form = protobuf_form(schema, self.options)
        self.forms[form.text] = form
        return PreparedProtobuf(self, form)


class PreparedProtobuf:
    """One Connect schema's Protobuf form, and per topic the wire header (schema id and message index)."""

    __slots__ = ("conv", "form", "headers")

    def __init__(self, conv: ProtobufConverter, form: ProtobufForm) -> None:
        self.conv = conv
        self.form = form
        self.headers: dict[str, bytes] = {}

    def _header(self, topic: str) -> bytes:
        conv = self.conv
        subject = conv.strategy(SerializationContext(topic, conv.field), self.form.full_name)
        if subject is None:
            raise SinkError(f"{conv.side}.converter: topic {topic}: the subject name strategy needs a named schema")
        schema_id, _ = conv.schema_id(subject, self.form.text)
        header = self.headers[topic] = HEADER.pack(0, schema_id) + FIRST_MESSAGE
        return header

    def __call__(self, topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        header = self.headers.get(topic) or self._header(topic)
        msg = self.form.message_class()
        self.form.fill(msg, value)
        return header + msg.SerializeToString()
