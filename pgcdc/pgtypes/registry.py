"""The conversion table: PostgreSQL type name x handling mode -> (Connect schema, text -> value function).

Keyed by pg_type.typname (the base type for domains); arrays are '_' + element name. Built once per column
when a Relation arrives; the hot path only calls `Converter.fn`.
"""

from __future__ import annotations

import base64
from binascii import a2b_base64, b2a_base64
from decimal import Decimal
from collections.abc import Callable
from typing import Any

from pgcdc.errors import ConversionError
from pgcdc.pgtypes import geometric, numbers, special, temporal
from pgcdc.pgtypes.array_columns import ARRAYS, ElementColumn
from pgcdc.pgtypes.arrays import array_converter
from pgcdc.pgtypes.converter import DROPPED, ColumnLike, Converter, Fn, Modes, in_ms, items_schema
from pgcdc.pgtypes.converter import with_special as _with_infinity
from pgcdc.pgtypes.converter import connect_schema as _s  # short: it is on every line of the table

__all__ = ["DROPPED", "ColumnLike", "Converter", "Fn", "Modes", "converter_for"]

# -- scalar builders: (column, modes) -> Converter -------------------------------------------------------

def _int(type_: str) -> Callable[[ColumnLike, Modes], Converter]:
    return lambda c, m: Converter(_s(type_), int)


def _float(type_: str) -> Callable[[ColumnLike, Modes], Converter]:
    # real is FLOAT32, written by Float.toString; double precision by Double.toString.
    single = type_ == "float"
    built = {}
    for shortest in (True, False):
        if single:
            fn = numbers.java_float if shortest else numbers.java_float_long
            built[shortest] = Converter(_s(type_), fn, native=(fn, numbers.float32, numbers.float32_to_java))
        else:
            fn = numbers.java_double if shortest else numbers.java_double_long
            built[shortest] = Converter(_s(type_), fn, native=(fn, float, numbers.python_float_to_java))
    return lambda c, m: built[m.shortest_floats]


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
        return Converter(_s("double"), _numeric_double, native=(_numeric_double, float, numbers.python_float_to_java))
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

        # The trailing zeros of the fraction are dropped ('1.000' is scale 0, '-0.00100' scale 3, '100' stays
        # scale 0): in snapshots and streaming, columns, domains and array elements alike (measured on 3.6).
        def variable(text: str) -> Any:
            d = numbers.parse_numeric(text)
            if d is None:
                return None
            exp = d.as_tuple().exponent
            scale = max(0, -exp) if isinstance(exp, int) else 0
            if scale and text[-1] == "0":
                scale = len(text.rstrip("0").partition(".")[2])
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

    def fixed_bytes(text: str) -> Any:  # the bytes `fixed` writes in base64 (None for NaN and the infinities)
        ip, _, fp = text.partition(".")
        if len(fp) == scale and ip[-1:].isdigit():
            u = int(ip + fp)
            return u.to_bytes((u + (u < 0)).bit_length() // 8 + 1, "big", signed=True)
        value = fixed(text)
        return None if value is None else a2b_base64(value)

    return Converter(schema, fixed, native=(fixed, fixed_bytes, numbers.base64_text))


_NUMERIC_SPECIAL = {"NaN": "NAN", "Infinity": "POSITIVE_INFINITY", "-Infinity": "NEGATIVE_INFINITY"}


def _numeric_double(text: str) -> Any:
    # BigDecimal.doubleValue(): rounded to the nearest double, then Double.toString ('1.50' is 1.5, twenty
    # digits keep seventeen; measured on 3.6). float() rounds the same way and reads NaN and the infinities.
    return numbers.python_float_to_java(float(text))


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
    def fn(t: str) -> str:
        return base64.b64encode(to_bytes(t)).decode()

    if m.binary == "bytes":
        return Converter(_s("bytes"), fn, native=(fn, to_bytes, numbers.base64_text))
    return Converter(_s("string"), fn)  # base64: the same text, as a string


def _precision(c: ColumnLike, default: int = 6) -> int:
    return c.type_modifier if c.type_modifier >= 0 else default


def _date(c: ColumnLike, m: Modes) -> Converter:
    # A snapshot reads dates through JDBC, which drops a BC era (see temporal).
    if m.time == "isostring":
        iso = temporal.iso_date_jdbc if m.snapshot else _with_infinity(_iso_date, temporal.ISO_DATE_INFINITY)
        return Converter(_s("string", "io.debezium.time.IsoDate", 1), iso)
    name = "org.apache.kafka.connect.data.Date" if m.time == "connect" else "io.debezium.time.Date"
    infinity = temporal.DATE_INFINITY_JDBC if m.snapshot else temporal.DATE_INFINITY
    days = temporal.date_days_jdbc if m.snapshot else temporal.date_days
    return Converter(_s("int32", name, 1), _with_infinity(days, infinity))


def _iso_date(text: str) -> str:
    return temporal.iso_text(text) + "Z"


def _iso_timestamp(text: str) -> str:
    return temporal.iso_text(text).replace(" ", "T", 1) + "Z"


def _time(c: ColumnLike, m: Modes) -> Converter:
    if m.time == "connect":
        return Converter(_s("int32", "org.apache.kafka.connect.data.Time", 1), in_ms(temporal.time_us))
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoTime", 1), temporal.iso_time)
    if m.time == "adaptive" and _precision(c) <= 3:
        return Converter(_s("int32", "io.debezium.time.Time", 1), in_ms(temporal.time_us))
    return Converter(_s("int64", "io.debezium.time.MicroTime", 1), temporal.time_us)


def _timestamp(c: ColumnLike, m: Modes) -> Converter:
    if m.time == "isostring":
        return Converter(_s("string", "io.debezium.time.IsoTimestamp", 1),
                         _with_infinity(_iso_timestamp, temporal.ISO_TIMESTAMP_INFINITY))
    if m.time == "connect":
        return Converter(_s("int64", "org.apache.kafka.connect.data.Timestamp", 1),
                         _with_infinity(in_ms(temporal.timestamp_us), temporal.TIMESTAMP_MS_INFINITY))
    if _precision(c) <= 3:
        return Converter(_s("int64", "io.debezium.time.Timestamp", 1),
                         _with_infinity(in_ms(temporal.timestamp_us), temporal.TIMESTAMP_MS_INFINITY))
    return Converter(_s("int64", "io.debezium.time.MicroTimestamp", 1),
                     _with_infinity(temporal.micro_timestamp, temporal.TIMESTAMP_US_INFINITY))


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
    if m.decimal == "double":
        return Converter(_s("double"), special.money_double)
    if m.decimal == "string":
        return Converter(_s("string"), lambda t: str(Decimal(t.replace("$", "").replace(",", ""))))
    if m.decimal == "double":  # a double like numeric's (measured on 3.6)
        return Converter(_s("double"), lambda t: _numeric_double(t.replace("$", "").replace(",", "")))
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
    # int2vector and oidvector: arrays of required int16 and int64 that Debezium 3.6 writes empty, or null for an
    # empty vector (measured: '1 2' -> [], '' -> null).
    "int2vector": lambda c, m: Converter({"type": "array", "items": {"type": "int16", "optional": False}},
                                         _vector),
    "oidvector": lambda c, m: Converter({"type": "array", "items": {"type": "int64", "optional": False}},
                                        _vector),
}


def _vector(text: str) -> list[Any] | None:
    return [] if text else None


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
        element = SCALARS[element_name](ElementColumn(column), modes)
        special_array = ARRAYS.get(typname)
        built = special_array(column, element) if special_array is not None else None
        if built is not None:
            return built
        # Debezium declares enum and tsvector array elements required (measured on 3.6); others optional.
        items = items_schema(element.schema, typname not in ("_enum", "_tsvector"))
        return Converter({"type": "array", "items": items}, array_converter(element.fn))
    build = SCALARS.get(typname)
    if build is None:
        if typname in _NOT_YET:
            raise ConversionError(f"column {column.name!r}: type {column.type_name} ({typname}) is not supported "
                                  "yet")
        return _unknown(_text_bytes, element_name, modes)
    return build(column, modes)


def _text_bytes(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unknown(fn: Fn, element_name: str | None, modes: Modes, delim: str | None = None) -> Converter:
    """A type Debezium has no mapping for: left out (a warning in Debezium's log), or with
    include.unknown.datatypes=true the value's text as bytes, arrays as arrays of required bytes (measured)."""
    if not modes.include_unknown:
        return DROPPED
    if element_name is None:
        return Converter(_s("bytes"), fn)
    convert = array_converter(fn, delim or ",")

    def whole(text: str) -> Any:
        # A null element (or an inner array of a multi-dimensional one, written null) in an array of required
        # bytes: Debezium fails to convert the value and writes the column null (measured on 3.6).
        items = convert(text)
        return None if None in items else items

    return Converter({"type": "array", "items": {"type": "bytes", "optional": False}}, whole)


_POSTGIS = {"geometry": "Geometry", "geography": "Geography"}


def _postgis(typname: str, element_name: str | None) -> Converter:
    if element_name is None:
        return Converter(geometric.postgis_schema(_POSTGIS[typname]), geometric.ewkb)
    items = items_schema(geometric.postgis_schema(_POSTGIS[element_name]), True)
    return Converter({"type": "array", "items": items}, array_converter(geometric.ewkb, geometric.POSTGIS_DELIMITER))
