"""A registered .proto text (Confluent's ProtobufConverter's) -> the message class that reads its records, the
Connect schema it stands for, and a reader from a record's bytes to the JsonConverter's payload.

The text is parsed by proto-schema-parser; its first top-level message is the record's (the converter writes one,
message index [0]) and becomes a class through pgcdc.converters.protobuf_schema, the builder the writer side
uses. The Connect schema follows io.confluent.connect.protobuf.ProtobufData.toConnectSchema (Confluent 7.0.16,
defaults): confluent.type.Decimal, google.type.Date, google.type.TimeOfDay and google.protobuf.Timestamp are
Connect's Decimal, Date, Time and Timestamp; `(confluent.field_meta)` gives int8/int16 and a decimal's precision
and scale; a repeated `…Entry` message of `key = 1`, `value = 2` is a map; every field is optional. A
google.protobuf wrapper (`wrapper.for.nullables=true`) is its scalar, null when unset; an `optional` field
(`optional.for.nullables=true`) is null when unset. What the text does not hold, Debezium's semantic names
(io.debezium.time.MicroTimestamp, ...) and, without wrappers or `optional`, nulls of scalar fields (proto3 writes
its default), is not in the records either (docs/spark.md, "Protobuf").
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from proto_schema_parser import ast
from proto_schema_parser.parser import Parser

from pgcdc.converters.protobuf_schema import _IMPORTS, DECIMAL, WRAPPERS, _Field, _Message, _message_class
from pgcdc.transforms.java_calendar import calendar_days

_FD = FieldDescriptor
_SCALAR = {_FD.TYPE_INT32: "int32", _FD.TYPE_SINT32: "int32", _FD.TYPE_SFIXED32: "int32",
           _FD.TYPE_UINT32: "int64", _FD.TYPE_FIXED32: "int64", _FD.TYPE_INT64: "int64", _FD.TYPE_SINT64: "int64",
           _FD.TYPE_SFIXED64: "int64", _FD.TYPE_UINT64: "int64", _FD.TYPE_FIXED64: "int64",
           _FD.TYPE_FLOAT: "float", _FD.TYPE_DOUBLE: "double", _FD.TYPE_BOOL: "boolean", _FD.TYPE_STRING: "string",
           _FD.TYPE_BYTES: "bytes"}


# A google.protobuf wrapper -> the Connect type it holds (int8/int16 are Int32Value with a `connect.type` parameter).
_WRAPPED = {wrapper: t for t, wrapper in WRAPPERS.items() if t not in ("int8", "int16")}


def _date(m: Any) -> int:
    """Days since 1970-01-01 of a google.type.Date as Confluent's converter writes it: java.util.GregorianCalendar's
    fields, Julian before 1582-10-15 (converters/protobuf_values.py), so read back the same way. The year is the
    year of its era: a BC date reads as the AD year of that number (the records do not say which)."""
    return calendar_days(m.year, m.month - 1, m.day)


# Logical message -> (Connect schema, JsonConverter's value of the message).
_LOGICAL: dict[str, tuple[dict[str, Any], Callable[[Any], Any]]] = {
    "confluent.type.Decimal": ({"type": "bytes", "name": DECIMAL}, lambda m: base64.b64encode(m.value).decode()),
    "google.type.Date": ({"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1}, _date),
    "google.type.TimeOfDay": ({"type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1},
                              lambda m: ((m.hours * 60 + m.minutes) * 60 + m.seconds) * 1000 + m.nanos // 1_000_000),
    "google.protobuf.Timestamp": ({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp",
                                   "version": 1}, lambda m: m.seconds * 1000 + m.nanos // 1_000_000),
}


@dataclass
class CompiledProto:
    connect: dict[str, Any]  # the record message's Connect schema (JsonConverter's JSON form)
    message_class: Any
    to_json: Callable[[Any], dict[str, Any]]
    full_name: str

    def read(self, record: bytes, offset: int) -> dict[str, Any]:
        """The payload of a record whose message-index array starts at `offset`."""
        count, offset = _zigzag(record, offset)
        indexes = [0] if count == 0 else []
        for _ in range(count):
            index, offset = _zigzag(record, offset)
            indexes.append(index)
        if indexes != [0]:
            raise ValueError(f"message index {indexes}: only the schema's first message is read")
        return self.to_json(self.message_class.FromString(record[offset:]))


def _zigzag(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7


def _params(field: ast.Field) -> dict[str, str]:
    """`(confluent.field_meta) = {params: [{key: .., value: ..}, ...]}` as a dict."""
    out: dict[str, str] = {}
    for option in field.options:
        if option.name != "(confluent.field_meta)" or not isinstance(option.value, ast.MessageLiteral):
            continue
        for element in option.value.elements:
            entries = element.value if isinstance(element.value, list) else [element.value]
            for entry in entries if element.name == "params" else ():
                pair = {e.name: e.value for e in entry.elements}
                out[str(pair["key"])] = str(pair["value"])
    return out


def _message(node: ast.Message, params: dict[tuple[str, str], dict[str, str]], scope: str) -> _Message:
    msg = _Message(node.name)
    for element in node.elements:
        if isinstance(element, ast.Message):
            msg.nested.append(_message(element, params, f"{scope}.{node.name}"))
        elif isinstance(element, ast.Field):
            label = {ast.FieldCardinality.REPEATED: "repeated",
                     ast.FieldCardinality.OPTIONAL: "optional"}.get(element.cardinality)  # type: ignore[arg-type]
            msg.fields.append(_Field(label, element.type, element.name, element.number))
            params[(f"{scope}.{node.name}".lstrip("."), element.name)] = _params(element)
        else:
            raise ValueError(f"message {node.name}: {type(element).__name__} is not written by Connect")
    return msg


def compile_proto(text: str) -> CompiledProto:
    parsed = Parser().parse(text)
    package = next((e.name for e in parsed.file_elements if isinstance(e, ast.Package)), None)
    imports = [e.name for e in parsed.file_elements if isinstance(e, ast.Import)]
    unknown = [i for i in imports if i not in {f for f, _ in _IMPORTS.values()}]
    if unknown:
        raise ValueError(f"imports {', '.join(unknown)}")
    top = next(e for e in parsed.file_elements if isinstance(e, ast.Message))
    params: dict[tuple[str, str], dict[str, str]] = {}
    root = _message(top, params, package or "")
    full_name = f"{package}.{top.name}" if package else top.name
    cls = _message_class(package, root, imports, full_name)
    connect = _connect(cls.DESCRIPTOR, params)
    return CompiledProto({**connect, "name": full_name}, cls, _reader(cls.DESCRIPTOR), full_name)


def _is_map(field: FieldDescriptor) -> bool:
    t = field.message_type
    return (field.is_repeated and t is not None and t.name.endswith("Entry")
            and [(f.name, f.number) for f in t.fields] == [("key", 1), ("value", 2)])


def _connect(desc: Descriptor, params: dict[tuple[str, str], dict[str, str]]) -> dict[str, Any]:
    return {"type": "struct", "optional": True,
            "fields": [{**_field_schema(f, params, single=False), "field": f.name} for f in desc.fields]}


def _field_schema(f: FieldDescriptor, params: dict[tuple[str, str], dict[str, str]],
                  single: bool) -> dict[str, Any]:
    if not single and _is_map(f):
        key, value = f.message_type.fields
        return {"type": "map", "optional": True, "keys": _field_schema(key, params, True),
                "values": _field_schema(value, params, True)}
    if not single and f.is_repeated:
        return {"type": "array", "optional": True, "items": _field_schema(f, params, True)}
    p = params.get((f.containing_type.full_name, f.name), {})
    if f.type == _FD.TYPE_MESSAGE and f.message_type.full_name in _WRAPPED:
        return {"type": p.get("connect.type", _WRAPPED[f.message_type.full_name]), "optional": True}
    if f.type == _FD.TYPE_MESSAGE:
        logical = _LOGICAL.get(f.message_type.full_name)
        if logical is None:
            return _connect(f.message_type, params)
        schema = {**logical[0], "optional": True}
        if schema.get("name") == DECIMAL:
            schema["parameters"] = {"scale": p.get("scale", "0"),
                                    **({"connect.decimal.precision": p["precision"]} if "precision" in p else {})}
        return schema
    if f.type not in _SCALAR:
        raise ValueError(f"field {f.name}: Protobuf type {f.type} is not written by Connect")
    kind = p.get("connect.type", _SCALAR[f.type])
    return {"type": kind, "optional": True}


def _reader(desc: Descriptor) -> Callable[[Any], dict[str, Any]]:
    """A message -> its JsonConverter payload; one function per field, built once per message type."""
    fields = [(f.name, _field_reader(f)) for f in desc.fields]

    def read(msg: Any) -> dict[str, Any]:
        return {name: fn(msg, name) for name, fn in fields}
    return read


def _value_reader(f: FieldDescriptor) -> Callable[[Any], Any]:
    """One value of the field's type (not repeated) -> its JSON value."""
    if f.type == _FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.BytesValue":
        return lambda m: base64.b64encode(m.value).decode()
    if f.type == _FD.TYPE_MESSAGE and f.message_type.full_name in _WRAPPED:
        return lambda m: m.value
    if f.type == _FD.TYPE_MESSAGE:
        logical = _LOGICAL.get(f.message_type.full_name)
        return logical[1] if logical is not None else _reader(f.message_type)
    if f.type == _FD.TYPE_BYTES:
        return lambda v: base64.b64encode(v).decode()
    return lambda v: v


def _field_reader(f: FieldDescriptor) -> Callable[[Any, str], Any]:
    value = _value_reader(f)
    if _is_map(f):
        k, v = (_value_reader(x) for x in f.message_type.fields)
        if f.message_type.fields[1].type == _FD.TYPE_MESSAGE:  # an unset value (a wrapper's, a struct's) is null
            def entry(e: Any, read: Callable[[Any], Any] = v) -> Any:
                return read(e.value) if e.HasField("value") else None
        else:
            def entry(e: Any, read: Callable[[Any], Any] = v) -> Any:
                return read(e.value)
        if f.message_type.fields[0].type == _FD.TYPE_STRING:  # JsonConverter: an object for string keys
            return lambda msg, name: {e.key: entry(e) for e in getattr(msg, name)}
        return lambda msg, name: [[k(e.key), entry(e)] for e in getattr(msg, name)]
    if f.is_repeated:
        return lambda msg, name: [value(x) for x in getattr(msg, name)]
    if f.has_presence:  # a message field, or an `optional` one: unset is null
        return lambda msg, name: value(getattr(msg, name)) if msg.HasField(name) else None
    return lambda msg, name: value(getattr(msg, name))
