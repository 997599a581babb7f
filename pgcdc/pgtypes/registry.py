"""The conversion table: PostgreSQL type name x handling mode -> (Connect schema, text -> value function).

Keyed by pg_type.typname (the base type for domains); arrays are '_' + element name. Built once per column
when a Relation arrives; the hot path only calls `Converter.fn`.
"""

from __future__ import annotations

import base64
from binascii import b2a_base64
from decimal import Decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pgcdc.errors import ConversionError
from pgcdc.pgtypes import geometric, numbers, special, temporal
from pgcdc.pgtypes.arrays import array_converter

Fn = Callable[[str], Any]


class ColumnLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def enum_labels(self) -> str | None: ...

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
    interval: str = "numeric"  # interval.handling.mode
    hstore: str = "json"  # hstore.handling.mode
    money_digits: int = 2  # money.fraction.digits
    include_unknown: bool = False  # include.unknown.datatypes
    snapshot: bool = False  # Debezium reads snapshots through JDBC, which renders a few values differently


@dataclass(frozen=True, slots=True)
class Converter:
    schema: dict[str, Any]  # Connect schema of the field, without optional/default/field
    fn: Fn | None  # None: the pgoutput text is the value
    dropped: bool = False  # Debezium leaves the column out of schema and values


DROPPED = Converter({}, None, True)


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
        return Converter(_s("string"), _numeric_string)
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
        # PostgreSQL writes numeric(p,s) with exactly s fraction digits: the digits are the unscaled value.
        ip, _, fp = text.partition(".")
        if len(fp) == scale and ip[-1:].isdigit():
            u = int(ip + fp)  # numbers.decimal_bytes, inlined: this is the hot case
            return b2a_base64(u.to_bytes((u + (u < 0)).bit_length() // 8 + 1, "big", signed=True),
                              newline=False).decode("ascii")
        d = numbers.parse_numeric(text)
        return None if d is None else numbers.decimal_bytes(numbers.unscaled(d, scale))

    return Converter(schema, fixed)


_NUMERIC_SPECIAL = {"NaN": "NAN", "Infinity": "POSITIVE_INFINITY", "-Infinity": "NEGATIVE_INFINITY"}


def _numeric_string(text: str) -> str:
    return _NUMERIC_SPECIAL.get(text, text)  # Debezium's spellings of the special values (measured)


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
    # A snapshot reads dates through JDBC, which drops a BC era (see temporal).
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoDate", 1), _iso_date_jdbc if m.snapshot else _iso_date)
    name = "org.apache.kafka.connect.data.Date" if m.time == "connect" else "io.debezium.time.Date"
    infinity = temporal.DATE_INFINITY_SNAPSHOT if m.snapshot else temporal.DATE_INFINITY
    days = temporal.date_days_jdbc if m.snapshot else temporal.date_days
    return Converter(_s("int32", name, 1), _with_infinity(days, infinity))


def _iso_date(text: str) -> str:
    return temporal.iso_text(text) + "Z"


def _iso_date_jdbc(text: str) -> str:
    if not text[0].isdigit():  # infinity
        return text + "Z"
    return temporal.iso_date_of_days(temporal.date_days_jdbc(text)) + "Z"


def _iso_suffix(text: str) -> str:
    # time.precision.mode=isostring: ISO text in UTC with a 'Z' (measured: '1969-07-20Z', '12:00:00.5Z').
    return text + "Z"


def _iso_timestamp(text: str) -> str:
    return temporal.iso_text(text).replace(" ", "T", 1) + "Z"


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
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoTimestamp", 1), _iso_timestamp)
    if m.time == "connect":
        return Converter(_s("int64", "org.apache.kafka.connect.data.Timestamp", 1),
                         _with_infinity(_ms(temporal.timestamp_us), temporal.TIMESTAMP_MS_INFINITY))
    if _precision(c) <= 3:
        return Converter(_s("int64", "io.debezium.time.Timestamp", 1),
                         _with_infinity(_ms(temporal.timestamp_us), temporal.TIMESTAMP_MS_INFINITY))
    return Converter(_s("int64", "io.debezium.time.MicroTimestamp", 1),
                     _with_infinity(temporal.timestamp_us, temporal.TIMESTAMP_US_INFINITY))


def _timestamptz(c: ColumnLike, m: Modes) -> Converter:
    digits = _precision(c)

    pad = "." + "0" * digits if digits > 0 else ""

    last = ("", "")  # (text, value): one binding, so a reader on another thread never sees half of it

    def convert(t: str) -> str:
        # The same text as the previous row's is common (now() or a DEFAULT in a multi-row transaction).
        nonlocal last
        seen = last
        if t == seen[0]:
            return seen[1]
        # Fast path: 'YYYY-MM-DD HH:MM:SS[.ffffff]+00' (the replication session runs in UTC) is already the
        # answer once reshaped: 'T', the fraction padded to the column's precision, 'Z'.
        if t[-3:] == "+00" and t[4:5] == "-" and t[10:11] == " " and t[13:14] == ":":
            frac = t[19:-3]
            out = t[:10] + "T" + t[11:19] + ((frac + pad[len(frac):]) if digits > 0 else "") + "Z"
        elif t in ("infinity", "-infinity"):  # Debezium passes PostgreSQL's word through
            return t
        else:
            out = temporal.iso_utc(temporal.timestamptz_us(t), digits)
        last = (t, out)
        return out

    return Converter(_s("string", "io.debezium.time.ZonedTimestamp", 1), convert)


def _with_infinity(fn: Fn, values: dict[str, int]) -> Fn:
    def convert(t: str) -> Any:
        special = values.get(t)
        return fn(t) if special is None else special

    return convert


def _interval(c: ColumnLike, m: Modes) -> Converter:
    if m.interval == "string":
        return Converter(_s("string", "io.debezium.time.Interval", 1), special.interval_iso)
    return Converter(_s("int64", "io.debezium.time.MicroDuration", 1), special.interval_us)


def _bit(c: ColumnLike, m: Modes) -> Converter:
    length = c.type_modifier
    if c.base_type_name == "bit" and length in (1, -1):
        return Converter(_s("boolean"), special.bit_bool)
    return Converter(_s("bytes", "io.debezium.data.Bits", 1, length=str(length if length > 0 else 2147483647)),
                     special.bits_bytes)


def _money(c: ColumnLike, m: Modes) -> Converter:
    digits = m.money_digits
    if m.decimal == "string":
        return Converter(_s("string"), lambda t: str(Decimal(t.replace("$", "").replace(",", ""))))
    return Converter(_s("bytes", "org.apache.kafka.connect.data.Decimal", 1, scale=str(digits)),
                     special.money_parser(digits))


def _point(c: ColumnLike, m: Modes) -> Converter:
    return Converter(dict(special.POINT_SCHEMA), special.point)


def _hstore(c: ColumnLike, m: Modes) -> Converter:
    if m.hstore == "map":
        return Converter({"type": "map", "keys": {"type": "string", "optional": False},
                          "values": {"type": "string", "optional": True}}, special.hstore_map)
    return Converter(_s("string", "io.debezium.data.Json", 1), special.hstore_json)


def _enum(c: ColumnLike, m: Modes) -> Converter:
    return Converter(_s("string", "io.debezium.data.Enum", 1, allowed=c.enum_labels or ""), None)


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
    "xml": _named_string("io.debezium.data.Xml"),
    "tsvector": _named_string("io.debezium.data.Tsvector"),
    "ltree": _named_string("io.debezium.data.Ltree"),
    "citext": _text,
    "inet": _text,
    "cidr": _text,
    "macaddr": _text,
    "macaddr8": _text,
    "int4range": _text,
    "int8range": _text,
    "numrange": _text,
    "tsrange": _text,
    "tstzrange": _text,
    "daterange": _text,
    "interval": _interval,
    "bit": _bit,
    "varbit": _bit,
    "money": _money,
    "point": _point,
    "hstore": _hstore,
    "timetz": lambda c, m: Converter(_s("string", "io.debezium.time.ZonedTime", 1), special.timetz_utc),
    "enum": _enum,
    # int2vector: an array of required int16 that Debezium 3.6 always writes empty (measured: '1 2' -> []).
    "int2vector": lambda c, m: Converter({"type": "array", "items": {"type": "int16", "optional": False}},
                                         lambda t: []),
}


# Arrays Debezium 3.6 leaves out of schema and values whatever include.unknown.datatypes says (measured).
_DROPPED_ARRAYS = frozenset({"_point", "_interval", "_money", "_name", "_varbit", "_xml"})
# Types Debezium maps to a logical type of its own that pgcdc does not reproduce yet: an error, not a drop.
_NOT_YET = frozenset({"vector", "halfvec", "sparsevec", "_vector", "_halfvec", "_sparsevec"})


def converter_for(column: ColumnLike, modes: Modes) -> Converter:
    """The converter of one column (DROPPED for columns Debezium leaves out). Types Debezium maps that pgcdc
    does not raise ConversionError naming the column and type."""
    typname = column.base_type_name
    if typname in _DROPPED_ARRAYS:
        return DROPPED
    element_name = typname[1:] if typname.startswith("_") else None
    if typname in geometric.TYPES or element_name in geometric.TYPES:
        return _unknown(geometric.as_bytes, element_name, modes, geometric.ARRAY_DELIMITER.get(element_name or ""))
    if typname in _POSTGIS or element_name in _POSTGIS:
        return _postgis(typname, element_name)
    if element_name in SCALARS:
        element = SCALARS[element_name](_ElementColumn(column), modes)
        special_array = _ARRAYS.get(typname)
        built = special_array(column, element) if special_array is not None else None
        if built is not None:
            return built
        # Debezium declares enum and tsvector array elements required (measured on 3.6); others optional.
        items = _items(element.schema, typname not in ("_enum", "_tsvector"))
        return Converter({"type": "array", "items": items}, array_converter(_ARRAY_ELEMENT.get(typname, element.fn)))
    build = SCALARS.get(typname)
    if build is None:
        if typname in _NOT_YET:
            raise ConversionError(f"column {column.name!r}: type {column.type_name} ({typname}) is not supported "
                                  "yet")
        return _unknown(_text_bytes, element_name, modes)
    return build(column, modes)


def _items(schema: dict[str, Any], optional: bool) -> dict[str, Any]:
    """An element schema as an array's items, in JsonConverter's member order."""
    items = {**schema}
    return {"type": items.pop("type"), **({"fields": items.pop("fields")} if "fields" in items else {}),
            "optional": optional, **items}


def _null(text: str) -> None:
    return None


def _bit_array(column: ColumnLike, element: Converter) -> Converter | None:
    # bit(n)[]: Debezium declares the element's own schema (Bits, or boolean for bit(1)) and writes null.
    return Converter(element.schema, _null)


def _numeric_array(column: ColumnLike, element: Converter) -> Converter | None:
    if column.type_modifier >= 4:
        return None
    # numeric[] without precision: an array of VariableScaleDecimal whose value is always null (measured).
    return Converter({"type": "array", "items": _items(element.schema, True)}, _null)


def _time_array(column: ColumnLike, element: Converter) -> Converter | None:
    if element.schema.get("name") != "io.debezium.time.MicroTime":
        return None
    # time[] elements go through java.sql.Time: microseconds, but only whole milliseconds of them (measured).
    return Converter({"type": "array", "items": _items(element.schema, True)},
                     array_converter(lambda t: temporal.time_us(t) // 1000 * 1000))


def _date_array(column: ColumnLike, element: Converter) -> Converter | None:
    fn = _iso_date_jdbc if element.schema["type"] == "string" else temporal.date_days_jdbc
    return Converter({"type": "array", "items": _items(element.schema, True)}, array_converter(fn))


def _timestamp_array(column: ColumnLike, element: Converter) -> Converter | None:
    name = element.schema.get("name")
    fn: Fn
    if name == "io.debezium.time.IsoTimestamp":
        fn = _iso_timestamp_jdbc
    elif name == "io.debezium.time.MicroTimestamp":
        fn = temporal.timestamp_us_jdbc
    else:  # milliseconds: io.debezium.time.Timestamp, org.apache.kafka.connect.data.Timestamp
        fn = _ms(temporal.timestamp_us_jdbc)
    return Converter({"type": "array", "items": _items(element.schema, True)}, array_converter(fn))


def _iso_timestamp_jdbc(text: str) -> str:
    time_text = temporal.without_era(text).split(" ", 1)[1]
    days = temporal.timestamp_us_jdbc(text) // temporal.US_PER_DAY
    return f"{temporal.iso_date_of_days(days)}T{time_text}Z"


def _timestamptz_array(column: ColumnLike, element: Converter) -> Converter | None:
    convert = element.fn
    assert convert is not None
    return Converter({"type": "array", "items": _items(element.schema, True)},
                     array_converter(lambda t: convert(temporal.timestamptz_text_jdbc(t))))


# Arrays whose whole schema or value Debezium 3.6 writes differently from "array of the element" (measured);
# None from a builder means the ordinary array.
_ARRAYS: dict[str, Callable[[ColumnLike, Converter], Converter | None]] = {
    "_bit": _bit_array,
    "_numeric": _numeric_array,
    "_time": _time_array,
    "_date": _date_array,
    "_timestamp": _timestamp_array,
    "_timestamptz": _timestamptz_array,
}
# Element conversions that differ inside arrays: real/double arrays keep -0.0 (scalars write 0.0).
_ARRAY_ELEMENT: dict[str, Fn] = {"_float4": numbers.java_double, "_float8": numbers.java_double}


def _text_bytes(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unknown(fn: Fn, element_name: str | None, modes: Modes, delim: str | None = None) -> Converter:
    """A type Debezium has no mapping for: left out (a warning in Debezium's log), or with
    include.unknown.datatypes=true the value's text as bytes, arrays as arrays of required bytes (measured)."""
    if not modes.include_unknown:
        return DROPPED
    if element_name is None:
        return Converter(_s("bytes"), fn)
    return Converter({"type": "array", "items": {"type": "bytes", "optional": False}},
                     array_converter(fn, delim or ","))


_POSTGIS = {"geometry": "Geometry", "geography": "Geography"}


def _postgis(typname: str, element_name: str | None) -> Converter:
    if element_name is None:
        return Converter(geometric.postgis_schema(_POSTGIS[typname]), geometric.ewkb)
    items = _items(geometric.postgis_schema(_POSTGIS[element_name]), True)
    return Converter({"type": "array", "items": items}, array_converter(geometric.ewkb, geometric.POSTGIS_DELIMITER))


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

    @property
    def enum_labels(self) -> str | None:
        return self.col.enum_labels
