"""Converters: a record's Connect schema and value to the bytes Kafka gets, as Kafka Connect's
`key.converter`, `value.converter` and `header.converter` do.

The input is what the envelope already makes: the Connect schema in JsonConverter's JSON form (the `schema`
dict) and the value in JsonConverter's JSON form. JsonConverter itself stays on the envelope's precomputed
templates (the hot path, untouched); any other converter receives the records with their schema through
`ConvertingSink` (sink.py), which prepares each schema version once and converts each record with it.

    converter = make_converter(spec, stop)            # configured once
    prepared = converter.prepare(schema)              # once per schema version (cold path)
    data = prepared(topic, value)                     # per record
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pgcdc.converters.settings import JSON, ConverterSpec, converter_specs

__all__ = ["JSON", "Converter", "ConverterSpec", "Prepared", "converter_specs", "make_converter"]


class Prepared(Protocol):
    """One schema version, compiled: turns a value of that schema into the bytes for a topic."""

    def __call__(self, topic: str, value: Any) -> bytes | None: ...


class Converter(Protocol):
    """Configured once for one side (key or value); `prepare` runs once per schema version."""

    is_key: bool

    def prepare(self, schema: dict[str, Any] | None) -> Prepared: ...

    def close(self) -> None: ...


def make_converter(spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> Converter:
    """The converter a validated spec names (JsonConverter only as a delegate or a header converter: keys and
    values are the envelope's own JsonConverter output)."""
    from pgcdc.converters.settings import APICURIO_AVRO, APICURIO_JSON, AVRO, CLOUDEVENTS, JSONSCHEMA, PROTOBUF
    from pgcdc.converters.simple import make_simple

    if spec.cls == AVRO:
        from pgcdc.converters.avro import AvroConverter

        return AvroConverter(spec, stopping)
    if spec.cls == APICURIO_AVRO:
        from pgcdc.converters.apicurio import ApicurioAvroConverter

        return ApicurioAvroConverter(spec, stopping)
    if spec.cls == APICURIO_JSON:
        from pgcdc.converters.apicurio_json import ApicurioExtJsonConverter

        return ApicurioExtJsonConverter(spec, stopping)
    if spec.cls == CLOUDEVENTS:
        from pgcdc.converters.cloudevents import CloudEventsConverter

        return CloudEventsConverter(spec, stopping)
    if spec.cls == PROTOBUF:
        from pgcdc.converters.protobuf import ProtobufConverter

        return ProtobufConverter(spec, stopping)
    if spec.cls == JSONSCHEMA:
        from pgcdc.converters.jsonschema import JsonSchemaConverter

        return JsonSchemaConverter(spec, stopping)
    converter = make_simple(spec, lambda delegate: make_converter(delegate, stopping))
    if converter is None:
        raise AssertionError(f"no converter is built for {spec.cls}")
    return converter
