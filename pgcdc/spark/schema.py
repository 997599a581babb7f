"""Connect schema -> Spark types and decoding expressions: a table keyed by logical name, built per schema.

A Debezium event written by the JsonConverter carries its Connect schema. For every field we derive three
things once per schema version (never per row):

- `raw`: the Spark type `from_json` parses the JSON payload value into (bytes stay base64 text, times stay
  numbers), so parsing happens in the JVM;
- `typed`: the natural Spark type (DecimalType, TimestampNTZType, DateType, BinaryType, ...);
- `decode(col) -> (value, error)`: built-in Spark expressions turning the raw column into the typed one, and
  a boolean expression that is true when a value cannot be represented (then the value is null and named
  in `_pgcdc_unrepresentable`, or the record quarantined: DecodeOptions.unrepresentable; never written wrong).

Decimals are decoded with exact integer arithmetic on 32-bit chunks of the two's-complement bytes and a
decimal string: never through a double, which overflows and rounds (see NOTES, PySpark).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

Decode = Callable[[Column], tuple[Column, Column | None]]

MAX_PRECISION = 38
_EPOCH_NTZ = "1970-01-01 00:00:00"
_FIRST_INSTANT = "0001-01-01 00:00:00"
_LAST_INSTANT = "9999-12-31 23:59:59.999999"
# Years 1..9999, what Parquet/Delta readers and Python hold. PostgreSQL's date/timestamp infinity (Debezium
# writes far-out numbers for it) falls outside: quarantined rather than written as a nonsense date.
_MIN_EPOCH_S = -62_135_596_800
_MAX_EPOCH_S = 253_402_300_800
# Debezium's encodings of PostgreSQL's date infinities (days since the epoch, measured with Debezium 3.6:
# JDBC's LocalDate extremes in a snapshot, the pgoutput text through its own offsets while streaming) and of
# an interval beyond what a long of microseconds holds (saturated). Recognised so that they become
# unrepresentable values, and clamp to the right end, instead of a date 1.7 million years BC.
DATE_PLUS_INFINITY = (-622_191_234, -2_147_472_692)
DATE_MINUS_INFINITY = (-625_821_272, -2_147_472_691)
LONG_MAX, LONG_MIN = 2**63 - 1, -(2**63)
UNREPRESENTABLE_MODES = ("null", "clamp", "quarantine")
SOURCE_TYPE = "__debezium.source.column.type"


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    """How to decode what Debezium's schema leaves open.

    time_as: "long" (microseconds since midnight) or "string" ("HH:MM:SS.ffffff") for Time/MicroTime/NanoTime.
    variable_scale: the scale of DecimalType(38, scale) for io.debezium.data.VariableScaleDecimal (numeric
      without precision); a value needing more fractional or integer digits is quarantined, never rounded.
    binary_mode: binary.handling.mode of the connector. In base64/hex/base64-url-safe the schema says
      "string", so only columns whose schema carries `__debezium.source.column.type` = BYTEA (column or
      datatype.propagate.source.type) are decoded to BinaryType; other string columns stay strings.
    unrepresentable: what a value Spark cannot hold does to its row (infinite or out-of-range dates and
      timestamps, decimals beyond 38 digits or the DecimalType's scale, saturated intervals). "null" (the
      default): the row is kept, the column is null and its name is listed in `_pgcdc_unrepresentable`.
      "clamp": the same, but dates and timestamps hold the nearest representable instant (0001-01-01 or
      9999-12-31 23:59:59.999999; infinity to the top, -infinity to the bottom) instead of null.
      "quarantine": the whole record goes to the quarantine (key columns always do: a row needs its key).
    """

    time_as: str = "long"
    variable_scale: int = 18
    binary_mode: str = "bytes"
    unrepresentable: str = "null"

    def __post_init__(self) -> None:
        if self.unrepresentable not in UNREPRESENTABLE_MODES:
            raise ValueError(f"DecodeOptions.unrepresentable={self.unrepresentable!r}: expected one of "
                             f"{', '.join(UNREPRESENTABLE_MODES)}")
        if self.time_as not in ("long", "string"):
            raise ValueError(f"DecodeOptions.time_as={self.time_as!r}: expected long or string")


@dataclass(frozen=True, slots=True)
class FieldCodec:
    raw: T.DataType
    typed: T.DataType
    decode: Decode


_PRIMITIVE: dict[str, T.DataType] = {
    "int8": T.ByteType(), "int16": T.ShortType(), "int32": T.IntegerType(), "int64": T.LongType(),
    "float": T.FloatType(), "float32": T.FloatType(), "double": T.DoubleType(), "float64": T.DoubleType(),
    "boolean": T.BooleanType(), "string": T.StringType(), "bytes": T.StringType(),
}


def _same(c: Column) -> tuple[Column, Column | None]:
    return c, None


def _checked(value: Column, raw: Column) -> tuple[Column, Column | None]:
    """A try_-style conversion: null out of a non-null input means the value could not be converted."""
    return value, raw.isNotNull() & value.isNull()


# -- decimals ---------------------------------------------------------------------------------------------

def _two32() -> Column:
    return F.lit(Decimal(2 ** 32)).cast(T.DecimalType(MAX_PRECISION, 0))


def _let(value: Column, body: Callable[[Column], Column]) -> Column:
    """`body(value)` with `value` computed once: a lambda variable (Spark has no LET), so expressions that
    use it several times do not copy its tree (which hits the 64 KB generated-code limit on wide tables)."""
    return F.transform(F.array(value), body).getItem(0)


def unscaled_integer(b64: Column) -> Column:
    """Base64 big-endian two's-complement bytes -> DecimalType(38, 0), null when it needs more than 38 digits."""

    def from_hex(h: Column) -> Column:
        negative = F.substring(h, 1, 1) >= F.lit("8")
        padded = F.lpad(h, 32, F.when(negative, F.lit("F")).otherwise(F.lit("0")))
        dec = T.DecimalType(MAX_PRECISION, 0)

        def combine(p: Column) -> Column:
            chunks = [F.conv(F.substring(p, 1 + 8 * i, 8), 16, 10).cast(dec) for i in range(4)]
            value = F.when(negative, chunks[0] - _two32()).otherwise(chunks[0])
            for chunk in chunks[1:]:
                value = F.try_add(F.try_multiply(value, _two32()), chunk)
            return value

        return F.when(F.length(h) <= 32, _let(padded, combine))

    return _let(F.hex(F.unbase64(b64)), from_hex)


def _with_point(unscaled: Column, scale: Column) -> Column:
    """DecimalType(38,0) and a scale -> the decimal's exact text ('-12.345')."""

    def text(u: Column) -> Column:
        def pad(digits: Column) -> Column:
            return F.lpad(digits, F.greatest(F.length(digits), scale + 1), F.lit("0"))

        def point(padded: Column) -> Column:
            n = F.length(padded)
            whole = F.substring(padded, F.lit(1), n - scale)
            frac = F.substring(padded, n - scale + 1, scale)
            body = F.when(scale > 0, F.concat(whole, F.lit("."), frac)).otherwise(whole)
            return F.concat(F.when(u < 0, F.lit("-")).otherwise(F.lit("")), body)

        return _let(pad(F.abs(u).cast("string")), point)

    return _let(unscaled, text)


def _decimal_codec(schema: dict[str, Any]) -> FieldCodec:
    params = schema.get("parameters") or {}
    scale = int(params.get("scale", "0"))
    precision = int(params.get("connect.decimal.precision", MAX_PRECISION))
    if precision > MAX_PRECISION or precision < scale or precision <= 0:
        precision = MAX_PRECISION
    typed = T.DecimalType(precision, min(scale, MAX_PRECISION))

    def decode(c: Column) -> tuple[Column, Column | None]:
        value = _with_point(unscaled_integer(c), F.lit(scale)).try_cast(typed)
        return _checked(value, c)

    return FieldCodec(T.StringType(), typed, decode)


def _variable_decimal_codec(options: DecodeOptions) -> FieldCodec:
    raw = T.StructType([T.StructField("scale", T.IntegerType()), T.StructField("value", T.StringType())])
    typed = T.DecimalType(MAX_PRECISION, options.variable_scale)

    def decode(c: Column) -> tuple[Column, Column | None]:
        scale = c.getField("scale")
        text = _with_point(unscaled_integer(c.getField("value")), scale)
        value = F.when(scale <= options.variable_scale, text.try_cast(typed))
        return value, c.isNotNull() & value.isNull()

    return FieldCodec(raw, typed, decode)


# -- temporal ---------------------------------------------------------------------------------------------

def _instant(text: str, type_: T.DataType | None = None) -> Column:
    value = F.lit(text).cast(T.TimestampNTZType())
    return value if type_ is None else value.cast(type_)


def _timestamp_ntz(unit: str, divisor: int = 1) -> Callable[[dict[str, Any], DecodeOptions], FieldCodec]:
    def build(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
        per_second = {"MILLISECOND": 1000, "MICROSECOND": 1_000_000}[unit] * divisor
        low, high = _MIN_EPOCH_S * per_second, _MAX_EPOCH_S * per_second

        def decode(c: Column) -> tuple[Column, Column | None]:
            amount = c if divisor == 1 else F.floor(c / divisor)
            ok = (c >= low) & (c < high)
            value = F.when(ok, F.timestamp_add(unit, amount, F.lit(_EPOCH_NTZ).cast(T.TimestampNTZType())))
            if options.unrepresentable == "clamp":  # Debezium's infinities keep their sign (far out, ±)
                value = value.when(c >= high, _instant(_LAST_INSTANT)).when(c < low, _instant(_FIRST_INSTANT))
            return value, c.isNotNull() & ~ok

        return FieldCodec(T.LongType(), T.TimestampNTZType(), decode)

    return build


def _date(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        ok = (c >= _MIN_EPOCH_S // 86_400) & (c < _MAX_EPOCH_S // 86_400)
        value = F.when(ok, F.date_from_unix_date(c))
        if options.unrepresentable == "clamp":
            high = c.isin(*DATE_PLUS_INFINITY) | ((c >= 0) & ~ok)
            value = value.when(high, _instant(_LAST_INSTANT, T.DateType())).when(
                c.isNotNull(), _instant(_FIRST_INSTANT, T.DateType()))
        return value, c.isNotNull() & ~ok

    return FieldCodec(T.IntegerType(), T.DateType(), decode)


def _duration(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    """io.debezium.time.MicroDuration: Debezium saturates an interval beyond a long of microseconds."""

    def decode(c: Column) -> tuple[Column, Column | None]:
        saturated = c.isin(LONG_MAX, LONG_MIN)
        return (c if options.unrepresentable == "clamp" else F.when(~saturated, c)), saturated

    return FieldCodec(T.LongType(), T.LongType(), decode)


def _time(factor: int, divisor: int = 1) -> Callable[[dict[str, Any], DecodeOptions], FieldCodec]:
    """Time of day in some unit -> microseconds (long) or 'HH:MM:SS.ffffff' as configured."""

    def build(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
        raw = _PRIMITIVE[schema["type"]]

        def micros(c: Column) -> Column:
            out = c.cast("long") * factor if factor != 1 else c.cast("long")
            return F.floor(out / divisor).cast("long") if divisor != 1 else out

        if options.time_as == "string":
            def as_text(c: Column) -> tuple[Column, Column | None]:
                ts = F.timestamp_add("MICROSECOND", micros(c), F.lit(_EPOCH_NTZ).cast(T.TimestampNTZType()))
                return F.date_format(ts, "HH:mm:ss.SSSSSS"), None

            return FieldCodec(raw, T.StringType(), as_text)
        return FieldCodec(raw, T.LongType(), lambda c: (micros(c), None))

    return build


def _zoned_timestamp(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    return FieldCodec(T.StringType(), T.TimestampType(), lambda c: _checked(c.try_cast(T.TimestampType()), c))


def _iso_date(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        return _checked(F.regexp_replace(c, "Z$", "").try_cast(T.DateType()), c)

    return FieldCodec(T.StringType(), T.DateType(), decode)


def _iso_timestamp(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        return _checked(F.regexp_replace(c, "Z$", "").try_cast(T.TimestampNTZType()), c)

    return FieldCodec(T.StringType(), T.TimestampNTZType(), decode)


def _iso_time(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    if options.time_as == "string":
        return FieldCodec(T.StringType(), T.StringType(), lambda c: (F.regexp_replace(c, "Z$", ""), None))

    def decode(c: Column) -> tuple[Column, Column | None]:
        ts = F.concat(F.lit("1970-01-01 "), F.regexp_replace(c, "Z$", "")).try_cast(T.TimestampNTZType())
        return _checked(F.unix_micros(ts.cast(T.TimestampType())), c)

    return FieldCodec(T.StringType(), T.LongType(), decode)


# -- strings, bytes, structs -------------------------------------------------------------------------------

def _string(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    return FieldCodec(T.StringType(), T.StringType(), _same)


def _bytes(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    # The JsonConverter writes Connect bytes as base64 text.
    return FieldCodec(T.StringType(), T.BinaryType(), lambda c: _checked(F.try_to_binary(c, F.lit("base64")), c))


def _binary_string(mode: str) -> Decode:
    if mode == "hex":
        return lambda c: _checked(F.try_to_binary(c, F.lit("hex")), c)
    if mode == "base64-url-safe":
        standard = F.translate  # '-' -> '+', '_' -> '/', padding is present in Debezium's output
        return lambda c: _checked(F.try_to_binary(standard(c, "-_", "+/"), F.lit("base64")), c)
    return lambda c: _checked(F.try_to_binary(c, F.lit("base64")), c)


def _geometry(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    # io.debezium.data.geometry.{Geometry,Geography,Point}: a struct with wkb bytes and srid (and x/y for
    # Point); the generic struct rule already decodes wkb to binary.
    return _struct(schema, options)


def _struct(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    fields = [(f["field"], codec(f, options)) for f in schema.get("fields", [])]
    raw = T.StructType([T.StructField(name, fc.raw) for name, fc in fields])
    typed = T.StructType([T.StructField(name, fc.typed) for name, fc in fields])

    def decode(c: Column) -> tuple[Column, Column | None]:
        values, errors = [], []
        for name, fc in fields:
            v, e = fc.decode(c.getField(name))
            values.append(v.alias(name))
            if e is not None:
                errors.append(e)
        out = F.when(c.isNotNull(), F.struct(*values))
        return out, (_any(errors) if errors else None)

    return FieldCodec(raw, typed, decode)


def _array(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    item = codec(schema["items"], options)

    def decode(c: Column) -> tuple[Column, Column | None]:
        if _is_identity(item):
            return c, None
        values = F.transform(c, lambda x: item.decode(x)[0])
        if item.decode(F.lit(None).cast(item.raw))[1] is None:
            return values, None
        return values, F.exists(c, lambda x: F.coalesce(item.decode(x)[1], F.lit(False)))

    return FieldCodec(T.ArrayType(item.raw), T.ArrayType(item.typed), decode)


def _map(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    # The JsonConverter writes maps with string keys as JSON objects (hstore.handling.mode=map); maps with
    # other key types become arrays of [key, value] pairs, which are kept as text here.
    keys = schema.get("keys", {}).get("type")
    if keys != "string":
        return FieldCodec(T.StringType(), T.StringType(), _same)
    value = codec(schema["values"], options)

    def decode(c: Column) -> tuple[Column, Column | None]:
        if _is_identity(value):
            return c, None
        return F.transform_values(c, lambda k, v: value.decode(v)[0]), None

    return FieldCodec(T.MapType(T.StringType(), value.raw), T.MapType(T.StringType(), value.typed), decode)


def _is_identity(fc: FieldCodec) -> bool:
    return fc.raw == fc.typed and fc.decode is _same


def _any(conditions: list[Column]) -> Column:
    out = F.coalesce(conditions[0], F.lit(False))
    for cond in conditions[1:]:
        out = out | F.coalesce(cond, F.lit(False))
    return out


Builder = Callable[[dict[str, Any], DecodeOptions], FieldCodec]

LOGICAL: dict[str, Builder] = {
    "org.apache.kafka.connect.data.Decimal": lambda s, o: _decimal_codec(s),
    "io.debezium.data.VariableScaleDecimal": lambda s, o: _variable_decimal_codec(o),
    "org.apache.kafka.connect.data.Date": _date,
    "io.debezium.time.Date": _date,
    "org.apache.kafka.connect.data.Time": _time(1000),
    "io.debezium.time.Time": _time(1000),
    "io.debezium.time.MicroTime": _time(1),
    "io.debezium.time.NanoTime": _time(1, 1000),
    "org.apache.kafka.connect.data.Timestamp": _timestamp_ntz("MILLISECOND"),
    "io.debezium.time.Timestamp": _timestamp_ntz("MILLISECOND"),
    "io.debezium.time.MicroTimestamp": _timestamp_ntz("MICROSECOND"),
    "io.debezium.time.NanoTimestamp": _timestamp_ntz("MICROSECOND", 1000),
    "io.debezium.time.ZonedTimestamp": _zoned_timestamp,
    "io.debezium.time.IsoDate": _iso_date,
    "io.debezium.time.IsoTimestamp": _iso_timestamp,
    "io.debezium.time.IsoTime": _iso_time,
    "io.debezium.time.MicroDuration": _duration,
    "io.debezium.data.geometry.Geometry": _geometry,
    "io.debezium.data.geometry.Geography": _geometry,
    "io.debezium.data.geometry.Point": _geometry,
}
# Everything else named (Uuid, Json, Xml, Enum, EnumSet, Tsvector, Ltree, ZonedTime, Interval, MicroDuration,
# Bits, ...) keeps its Connect type: string stays string, int64 stays long, bytes become binary.


def codec(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    """The codec of one Connect schema (a field, an array's items, a map's values)."""
    build = LOGICAL.get(schema.get("name") or "")
    if build is not None:
        return build(schema, options)
    type_ = schema.get("type")
    if type_ == "struct":
        return _struct(schema, options)
    if type_ == "array":
        return _array(schema, options)
    if type_ == "map":
        return _map(schema, options)
    if type_ == "bytes":
        return _bytes(schema, options)
    if type_ == "string":
        params = schema.get("parameters") or {}
        if options.binary_mode != "bytes" and params.get(SOURCE_TYPE, "").upper() == "BYTEA":
            return FieldCodec(T.StringType(), T.BinaryType(), _binary_string(options.binary_mode))
        return _string(schema, options)
    raw = _PRIMITIVE.get(str(type_))
    if raw is None:
        raise ValueError(f"unknown Connect type {type_!r} in schema {schema.get('field') or schema.get('name')}")
    return FieldCodec(raw, raw, _same)


@dataclass(frozen=True, slots=True)
class RowCodec:
    """One row struct (a table's Value or Key schema): raw struct for from_json, typed columns, decoder."""

    names: tuple[str, ...]
    raw: T.StructType
    typed: T.StructType
    fields: tuple[FieldCodec, ...]

    def decode(self, row: Column) -> tuple[list[Column], Column]:
        """Typed columns (aliased by field name) and a column: null when fine, else the failing fields."""
        values, problems = [], []
        for name, fc in zip(self.names, self.fields):
            v, e = fc.decode(row.getField(name))
            values.append(v.alias(name))
            if e is not None:
                problems.append(F.when(e, F.lit(name)))
        error = F.concat_ws(",", *problems) if problems else F.lit("")
        return values, F.when(error != "", F.concat(F.lit("cannot represent value of "), error))

    def decode_keeping(self, row: Column, keys: tuple[str, ...], clamp: bool) -> tuple[list[Column], Column | None]:
        """Typed columns where a value Spark cannot hold is null (or, with `clamp`, what its codec clamped it
        to), and an array<string> column naming those columns (null when there are none; None when no
        column of this schema can fail). Key columns are left to the key's codec, which quarantines."""
        values, problems = [], []
        for name, fc in zip(self.names, self.fields):
            v, e = fc.decode(row.getField(name))
            if e is not None and name not in keys:
                failed = F.coalesce(e, F.lit(False))
                problems.append(F.when(failed, F.lit(name)))
                if not clamp:
                    v = F.when(~failed, v)
            values.append(v.alias(name))
        if not problems:
            return values, None
        names = F.filter(F.array(*problems), lambda x: x.isNotNull())
        return values, F.when(F.size(names) > 0, names)

    def can_fail(self, keys: tuple[str, ...]) -> bool:
        """Whether a non-key column of this schema can hold a value Spark cannot represent."""
        return any(fc.decode(F.lit(None).cast(fc.raw))[1] is not None
                   for name, fc in zip(self.names, self.fields) if name not in keys)


def row_codec(schema: dict[str, Any], options: DecodeOptions) -> RowCodec:
    if schema.get("type") != "struct":
        raise ValueError(f"expected a struct schema, got {schema.get('type')!r}")
    fields = tuple(schema.get("fields", []))
    codecs = tuple(codec(f, options) for f in fields)
    names = tuple(f["field"] for f in fields)
    return RowCodec(
        names,
        T.StructType([T.StructField(n, c.raw) for n, c in zip(names, codecs)]),
        T.StructType([T.StructField(n, c.typed) for n, c in zip(names, codecs)]),
        codecs,
    )


def envelope_fields(value_schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Envelope's fields by name (before, after, source, op, ...)."""
    return {f["field"]: f for f in value_schema.get("fields", [])}
