"""The conversion table: PostgreSQL type name x handling mode -> (Connect schema, text -> value function).

Keyed by pg_type.typname (the base type for domains); arrays are '_' + element name. Built once per column
when a Relation arrives; the hot path only calls `Converter.fn`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pgcdc.errors import ConversionError
from pgcdc.pgtypes import numbers, temporal
from pgcdc.pgtypes.arrays import array_converter

Fn = Callable[[str], Any]


class ColumnLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def type_name(self) -> str: ...

    @property
    def base_type_name(self) -> str: ...

    @property
    def type_modifier(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Modes:
    decimal: str = "precise"  # decimal.handling.mode
    time: str = "adaptive"  # time.precision.mode
    binary: str = "bytes"  # binary.handling.mode


@dataclass(frozen=True, slots=True)
class Converter:
    schema: dict[str, Any]  # Connect schema of the field, without optional/default/field
    fn: Fn | None  # None: the pgoutput text is the value


def _s(type_: str, name: str | None = None, version: int | None = None, **params: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_}
    if name:
        schema["name"] = name
    if version is not None:
        schema["version"] = version
    if params:
        schema["parameters"] = params
    return schema


# -- scalar builders: (column, modes) -> Converter -------------------------------------------------------

def _int(type_: str) -> Callable[[ColumnLike, Modes], Converter]:
    return lambda c, m: Converter(_s(type_), int)


def _float(type_: str) -> Callable[[ColumnLike, Modes], Converter]:
    # Debezium writes PostgreSQL's negative zero as 0.0 (measured on 3.6 for real).
    return lambda c, m: Converter(_s(type_), numbers.java_double_no_negative_zero)


def _bool(c: ColumnLike, m: Modes) -> Converter:
    return Converter(_s("boolean"), _BOOL.__getitem__)


_BOOL = {"t": True, "f": False}


def _text(c: ColumnLike, m: Modes) -> Converter:
    return Converter(_s("string"), None)


def _named_string(name: str) -> Callable[[ColumnLike, Modes], Converter]:
    return lambda c, m: Converter(_s("string", name, 1), None)


def _numeric(c: ColumnLike, m: Modes) -> Converter:
    typmod = c.type_modifier
    if m.decimal == "double":
        return Converter(_s("double"), numbers.java_double)
    if m.decimal == "string":
        return Converter(_s("string"), None)
    if typmod < 4:
        # numeric without precision: io.debezium.data.VariableScaleDecimal {scale, value}.
        schema = {
            "type": "struct",
            "fields": [
                {"type": "int32", "optional": False, "field": "scale"},
                {"type": "bytes", "optional": False, "field": "value"},
            ],
            "name": "io.debezium.data.VariableScaleDecimal",
            "version": 1,
            "doc": "Variable scaled decimal",
        }

        def variable(text: str) -> Any:
            d = numbers.parse_numeric(text)
            if d is None:
                return None
            exp = d.as_tuple().exponent
            scale = max(0, -exp) if isinstance(exp, int) else 0
            return {"scale": scale, "value": numbers.decimal_bytes(numbers.unscaled(d, scale))}

        return Converter(schema, variable)
    precision = ((typmod - 4) >> 16) & 0xFFFF
    scale = (typmod - 4) & 0xFFFF
    schema = _s("bytes", "org.apache.kafka.connect.data.Decimal", 1,
                scale=str(scale), **{"connect.decimal.precision": str(precision)})

    def fixed(text: str) -> Any:
        d = numbers.parse_numeric(text)
        return None if d is None else numbers.decimal_bytes(numbers.unscaled(d, scale))

    return Converter(schema, fixed)


def _bytea(c: ColumnLike, m: Modes) -> Converter:
    def to_bytes(text: str) -> bytes:
        if text.startswith("\\x"):
            return bytes.fromhex(text[2:])
        raise ValueError("bytea not in hex output format (bytea_output must be 'hex')")

    if m.binary == "hex":
        return Converter(_s("string"), lambda t: to_bytes(t).hex())
    if m.binary == "base64-url-safe":
        return Converter(_s("string"), lambda t: base64.urlsafe_b64encode(to_bytes(t)).decode())
    # bytes (JsonConverter writes bytes as base64) and base64 give the same JSON text.
    schema = _s("bytes") if m.binary == "bytes" else _s("string")
    return Converter(schema, lambda t: base64.b64encode(to_bytes(t)).decode())


def _precision(c: ColumnLike, default: int = 6) -> int:
    return c.type_modifier if c.type_modifier >= 0 else default


def _date(c: ColumnLike, m: Modes) -> Converter:
    if m.time == "connect":
        return Converter(_s("int32", "org.apache.kafka.connect.data.Date", 1), temporal.date_days)
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoDate", 1), _iso_suffix)
    return Converter(_s("int32", "io.debezium.time.Date", 1), temporal.date_days)


def _iso_suffix(text: str) -> str:
    # time.precision.mode=isostring: ISO text in UTC with a 'Z' (measured: '1969-07-20Z', '12:00:00.5Z').
    return text + "Z"


def _iso_timestamp(text: str) -> str:
    return text.replace(" ", "T", 1) + "Z"


def _ms(f: Fn) -> Fn:
    return lambda t: f(t) // 1000


def _time(c: ColumnLike, m: Modes) -> Converter:
    if m.time == "connect":
        return Converter(_s("int32", "org.apache.kafka.connect.data.Time", 1), _ms(temporal.time_us))
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoTime", 1), _iso_suffix)
    if m.time == "adaptive" and _precision(c) <= 3:
        return Converter(_s("int32", "io.debezium.time.Time", 1), _ms(temporal.time_us))
    return Converter(_s("int64", "io.debezium.time.MicroTime", 1), temporal.time_us)


def _timestamp(c: ColumnLike, m: Modes) -> Converter:
    if m.time == "connect":
        return Converter(_s("int64", "org.apache.kafka.connect.data.Timestamp", 1), _ms(temporal.timestamp_us))
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoTimestamp", 1), _iso_timestamp)
    if _precision(c) <= 3:
        return Converter(_s("int64", "io.debezium.time.Timestamp", 1), _ms(temporal.timestamp_us))
    return Converter(_s("int64", "io.debezium.time.MicroTimestamp", 1), temporal.timestamp_us)


def _timestamptz(c: ColumnLike, m: Modes) -> Converter:
    digits = _precision(c)
    return Converter(_s("string", "io.debezium.time.ZonedTimestamp", 1),
                     lambda t: temporal.iso_utc(temporal.timestamptz_us(t), digits))


SCALARS: dict[str, Callable[[ColumnLike, Modes], Converter]] = {
    "int2": _int("int16"),
    "int4": _int("int32"),
    "int8": _int("int64"),
    "oid": _int("int64"),
    "float4": _float("float"),
    "float8": _float("double"),
    "numeric": _numeric,
    "bool": _bool,
    "text": _text,
    "varchar": _text,
    "bpchar": _text,
    "name": _text,
    "char": _text,
    "bytea": _bytea,
    "date": _date,
    "time": _time,
    "timestamp": _timestamp,
    "timestamptz": _timestamptz,
    "uuid": _named_string("io.debezium.data.Uuid"),
    "json": _named_string("io.debezium.data.Json"),
    "jsonb": _named_string("io.debezium.data.Json"),
}


def converter_for(column: ColumnLike, modes: Modes) -> Converter:
    """The converter of one column. Unknown types raise ConversionError naming the column and type."""
    typname = column.base_type_name
    if typname.startswith("_") and typname[1:] in SCALARS:
        element = SCALARS[typname[1:]](_ElementColumn(column), modes)
        items = {**element.schema}
        items = {"type": items.pop("type"), **({"fields": items.pop("fields")} if "fields" in items else {}),
                 "optional": True, **items}
        return Converter({"type": "array", "items": items}, array_converter(element.fn))
    build = SCALARS.get(typname)
    if build is None:
        raise ConversionError(f"column {column.name!r}: type {column.type_name} ({typname}) is not supported yet")
    return build(column, modes)


@dataclass(frozen=True, slots=True)
class _ElementColumn:
    """An array's element seen as a column: same typmod, element type name."""

    col: ColumnLike

    @property
    def name(self) -> str:
        return self.col.name

    @property
    def type_name(self) -> str:
        return self.col.type_name.removesuffix("[]")

    @property
    def base_type_name(self) -> str:
        return self.col.base_type_name[1:]

    @property
    def type_modifier(self) -> int:
        return self.col.type_modifier
