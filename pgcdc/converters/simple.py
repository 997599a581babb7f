"""The converters that write a value's bytes without a registry: Kafka's ByteArrayConverter, StringConverter,
SimpleHeaderConverter and primitive converters (Double … Boolean), Debezium's BinaryDataConverter and
ByteArrayConverter (bytes through, anything else to their `delegate.converter.type`).

A value the converter cannot write stops the connector with one line naming the converter, the topic and the
value's Java class, as Connect's DataException fails its task (errors.tolerance covers transforms in pgcdc,
not converters: docs/compatibility.md). Which values fail is decided per schema, once (`prepare`).
"""

from __future__ import annotations

import base64
import codecs
import struct
from collections.abc import Callable
from typing import Any

from pgcdc.converters.java_text import BYTE_ARRAY_NAMES, header_text, to_string
from pgcdc.converters.settings import (BOOLEAN, BYTE_ARRAY, DBZ_BINARY, DBZ_BYTE_ARRAY, JSON, NUMBERS, SIMPLE_HEADER,
                                       STRING, ConverterSpec)
from pgcdc.errors import ConfigError, ConversionError
from pgcdc.lsn import format_lsn

# The Java class a Connect value of each schema type is (in a SourceRecord from Debezium).
_CONNECT_CLASS = {"struct": "org.apache.kafka.connect.data.Struct", "string": "java.lang.String",
                  "array": "java.util.ArrayList", "map": "java.util.HashMap", "boolean": "java.lang.Boolean",
                  "int8": "java.lang.Byte", "int16": "java.lang.Short", "int32": "java.lang.Integer",
                  "int64": "java.lang.Long", "float": "java.lang.Float", "double": "java.lang.Double",
                  "bytes": "java.nio.HeapByteBuffer"}  # bytea values; a bit string is a byte[]
_LOGICAL_CLASS = {"org.apache.kafka.connect.data.Decimal": "java.math.BigDecimal",
                  "org.apache.kafka.connect.data.Date": "java.util.Date",
                  "org.apache.kafka.connect.data.Time": "java.util.Date",
                  "org.apache.kafka.connect.data.Timestamp": "java.util.Date"}
# Each primitive converter: (the schema type its serializer takes, struct format of its bytes).
_PRIMITIVES = {"DoubleConverter": ("double", ">d"), "FloatConverter": ("float", ">f"),
               "IntegerConverter": ("int32", ">i"), "LongConverter": ("int64", ">q"),
               "ShortConverter": ("int16", ">h"), "BooleanConverter": ("boolean", ">?")}
# converter.encoding: Java charset names to Python codecs; Java's UTF-16 encoder writes a big-endian BOM.
_JAVA_CHARSETS = {"utf-16": ("utf-16-be", codecs.BOM_UTF16_BE)}


def java_class(schema: dict[str, Any] | None) -> str:
    if schema is None:
        return "null"
    return _LOGICAL_CLASS.get(schema.get("name") or "") or _CONNECT_CLASS.get(schema["type"], schema["type"])


def _refuse(side: str, message: Callable[[str], str]) -> Callable[[str, Any], bytes | None]:
    def refuse(topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        source = value.get("source") if isinstance(value, dict) else None
        at = f" at LSN {format_lsn(source['lsn'])}" if isinstance(source, dict) and source.get("lsn") is not None \
            else ""
        raise ConversionError(f"{side}.converter: topic {topic}{at}: {message(topic)}")
    return refuse


class ByteArrayConverter:
    """Kafka's ByteArrayConverter: a bytes value passes through; any other value stops the connector."""

    def __init__(self, spec: ConverterSpec) -> None:
        self.is_key = spec.is_key
        self.side = spec.side

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        if schema is None or schema["type"] == "bytes":  # a byte[] or a ByteBuffer (Kafka 3.x+)
            b64 = base64.b64decode
            return lambda topic, value: None if value is None else b64(value)
        cls = java_class(schema)
        return _refuse(self.side, lambda topic: f"ByteArrayConverter is not compatible with objects of type "
                                                f"class {cls} (schema {schema.get('name') or schema['type']})")

    def close(self) -> None:
        pass


class StringConverter:
    """Kafka's StringConverter: `String.valueOf(value)` in `converter.encoding` (UTF-8 by default)."""

    def __init__(self, spec: ConverterSpec, header: bool = False) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.render = header_text if header else to_string  # SimpleHeaderConverter: Values.convertToString
        name = str(spec.get("converter.encoding", "UTF-8")).strip().lower().replace("_", "-")
        codec, self.bom = _JAVA_CHARSETS.get(name, (name, b""))
        try:
            self.codec = codecs.lookup(codec).name
        except LookupError:
            raise ConfigError(f"{spec.side}.converter.converter.encoding: unknown encoding {name!r}") from None

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        render, codec, bom = self.render(schema), self.codec, self.bom
        return lambda topic, value: None if value is None else bom + render(value).encode(codec, "replace")

    def close(self) -> None:
        pass


class PrimitiveConverter:
    """Kafka's Double/Float/Integer/Long/Short/BooleanConverter: a value of the one Java class its serializer
    takes, in that serializer's big-endian bytes; any other value stops the connector (NumberConverter's
    ClassCastException, BooleanConverter's schema check)."""

    def __init__(self, spec: ConverterSpec) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.name = spec.cls.rsplit(".", 1)[1]
        self.type, fmt = _PRIMITIVES[self.name]
        self.pack = struct.Struct(fmt).pack

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        if schema is not None and schema["type"] == self.type and java_class(schema) == _CONNECT_CLASS[self.type]:
            pack = self.pack
            if self.type in ("float", "double"):  # NaN and the infinities are strings in the JSON
                return lambda topic, value: None if value is None else pack(float(value))
            return lambda topic, value: None if value is None else pack(value)
        cls, name = java_class(schema), self.name
        if name == "BooleanConverter" and schema is not None:
            return _refuse(self.side, lambda topic: f"Invalid schema type for BooleanConverter: "
                                                    f"{schema['type'].upper()}")
        kind = self.type.capitalize().replace("Int32", "Integer").replace("Int64", "Long").replace("Int16", "Short")
        return _refuse(self.side, lambda topic: f"{name}: Failed to serialize to {kind} (was class {cls})")

    def close(self) -> None:
        pass


class DebeziumBinaryConverter:
    """Debezium's BinaryDataConverter and ByteArrayConverter: a bytes value passes through (a value of no
    bytes schema goes to the `delegate.converter.type` converter, configured with the
    `delegate.converter.type.*` options); without a delegate such a value stops the connector."""

    def __init__(self, spec: ConverterSpec, delegate: Any | None) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.name = spec.cls.rsplit(".", 1)[1]
        self.delegate = delegate

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        # BinaryDataConverter takes a byte[] or a ByteBuffer; ByteArrayConverter only a byte[], and Debezium
        # hands a bytea value over as a ByteBuffer (java_text), so that goes to its delegate (measured).
        if schema is None or (schema["type"] == "bytes" and (self.name == "BinaryDataConverter"
                                                              or schema.get("name") in BYTE_ARRAY_NAMES)):
            b64 = base64.b64decode
            return lambda topic, value: None if value is None else b64(value)
        if self.delegate is not None:
            return self.delegate.prepare(schema)
        cls = java_class(schema)
        return _refuse(self.side, lambda topic: f"{self.name}: a value of class {cls} requires a "
                                                f"delegate.converter.type to be configured")

    def close(self) -> None:
        if self.delegate is not None:
            self.delegate.close()


class JsonDelegate:
    """JsonConverter where the envelope's own JsonConverter path does not apply: behind Debezium's binary
    converters, and as a key or value converter with decimal.format=NUMERIC (json_numeric.py). The value is
    written again as JsonConverter writes it, with or without its schema."""

    def __init__(self, spec: ConverterSpec) -> None:
        from pgcdc.transforms.codec import Codec

        self.is_key = spec.is_key
        self.codec = Codec()
        self.with_schema = spec.json_schemas
        self.numeric = spec.get("decimal.format") == "numeric"

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        encode, with_schema = self.codec.encode, self.with_schema
        fix = None
        if self.numeric:
            from pgcdc.converters.json_numeric import decimal_fixer, numeric_schema

            fix, schema = decimal_fixer(schema), numeric_schema(schema)
        if fix is None:
            return lambda topic, value: None if value is None else encode(schema, value, with_schema)
        return lambda topic, value: None if value is None else encode(schema, fix(value), with_schema)

    def close(self) -> None:
        pass


def make_simple(spec: ConverterSpec, make: Callable[[ConverterSpec], Any]) -> Any:
    """The converter of a spec of this module's classes (`make` builds a delegate), or None."""
    if spec.cls == BYTE_ARRAY:
        return ByteArrayConverter(spec)
    if spec.cls in NUMBERS or spec.cls == BOOLEAN:
        return PrimitiveConverter(spec)
    if spec.cls == STRING:
        return StringConverter(spec)
    if spec.cls == SIMPLE_HEADER:
        return StringConverter(spec, header=True)
    if spec.cls == JSON:
        return JsonDelegate(spec)
    if spec.cls in (DBZ_BINARY, DBZ_BYTE_ARRAY):
        # A header converter is configured through HeaderConverter.configure(Map), which Debezium's converters
        # leave empty: no delegate, whatever the options say (measured: every non-bytes header fails).
        delegate = spec.delegate if spec.side != "header" else None
        return DebeziumBinaryConverter(spec, None if delegate is None else make(delegate))
    return None
