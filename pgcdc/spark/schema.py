"""Connect schema -> Spark types and decoding expressions: a table keyed by logical name, built per schema.

A Debezium event written by the JsonConverter carries its Connect schema. For every field we derive three
things once per schema version (never per row):

- `raw`: the Spark type `from_json` parses the JSON payload value into (bytes stay base64 text, times stay
  numbers), so parsing happens in the JVM;
- `typed`: the natural Spark type (DecimalType, TimestampNTZType, DateType, BinaryType, ...);
- `decode(col) -> (value, error)`: built-in Spark expressions turning the raw column into the typed one, and
  a boolean expression that is true when a value cannot be represented (then the value is null and named
  in `_pgcdc_unrepresentable`, or the record quarantined: DecodeOptions.unrepresentable; never written wrong).

The families with their own rules are in decimals.py (exact, never through a double) and temporal.py; this
module holds the table that picks a decoder per logical name and the nested types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark import temporal as tm
from pgcdc.spark.decimals import decimal_codec, lost, variable_decimal_codec
from pgcdc.spark.fieldcodec import PRIMITIVE, SOURCE_TYPE, Decode, DecodeOptions, FieldCodec, checked, same

__all__ = ["SOURCE_TYPE", "DecodeOptions", "FieldCodec", "RowCodec", "codec", "envelope_fields", "row_codec"]

# -- strings, bytes, structs -------------------------------------------------------------------------------

def _string(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    return FieldCodec(T.StringType(), T.StringType(), same)


def _bytes(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    # The JsonConverter writes Connect bytes as base64 text.
    return FieldCodec(T.StringType(), T.BinaryType(), lambda c: checked(F.try_to_binary(c, F.lit("base64")), c))


def _binary_string(mode: str) -> Decode:
    if mode == "hex":
        return lambda c: checked(F.try_to_binary(c, F.lit("hex")), c)
    if mode == "base64-url-safe":
        standard = F.translate  # '-' -> '+', '_' -> '/', padding is present in Debezium's output
        return lambda c: checked(F.try_to_binary(standard(c, "-_", "+/"), F.lit("base64")), c)
    return lambda c: checked(F.try_to_binary(c, F.lit("base64")), c)


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

    checks = [(name, fc.check, fc.text) for name, fc in fields if fc.check is not None and fc.text is not None]
    if not checks:
        return FieldCodec(raw, typed, decode)
    text = T.StructType([T.StructField(name, t) for name, _, t in checks])

    def check(v: Column, t: Column) -> Column:
        return _any([each(v.getField(name), t.getField(name)) for name, each, _ in checks])

    return FieldCodec(raw, typed, decode, text, check)


def _array(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    item = codec(schema["items"], options)

    def decode(c: Column) -> tuple[Column, Column | None]:
        if _is_identity(item):
            return c, None
        values = F.transform(c, lambda x: item.decode(x)[0])
        if item.decode(F.lit(None).cast(item.raw))[1] is None:
            return values, None
        return values, F.exists(c, lambda x: F.coalesce(item.decode(x)[1], F.lit(False)))

    raw, typed = T.ArrayType(item.raw), T.ArrayType(item.typed)
    item_check = item.check
    if item_check is None or item.text is None:
        return FieldCodec(raw, typed, decode)

    def check(v: Column, t: Column) -> Column:
        pairs = F.zip_with(v, t, lambda a, b: F.coalesce(item_check(a, b), F.lit(False)))
        return lost(v, t) | F.coalesce(F.exists(pairs, lambda x: x), F.lit(False))

    return FieldCodec(raw, typed, decode, T.ArrayType(item.text), check)


def _map(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    # The JsonConverter writes maps with string keys as JSON objects (hstore.handling.mode=map); maps with
    # other key types become arrays of [key, value] pairs, which are kept as text here.
    keys = schema.get("keys", {}).get("type")
    if keys != "string":
        return FieldCodec(T.StringType(), T.StringType(), same)
    value = codec(schema["values"], options)

    def decode(c: Column) -> tuple[Column, Column | None]:
        if _is_identity(value):
            return c, None
        return F.transform_values(c, lambda k, v: value.decode(v)[0]), None

    raw, typed = T.MapType(T.StringType(), value.raw), T.MapType(T.StringType(), value.typed)
    value_check = value.check
    if value_check is None or value.text is None:
        return FieldCodec(raw, typed, decode)

    def check(v: Column, t: Column) -> Column:
        pairs = F.map_zip_with(v, t, lambda k, a, b: F.coalesce(value_check(a, b), F.lit(False)))
        return lost(v, t) | F.coalesce(F.exists(F.map_values(pairs), lambda x: x), F.lit(False))

    return FieldCodec(raw, typed, decode, T.MapType(T.StringType(), value.text), check)


def _is_identity(fc: FieldCodec) -> bool:
    return fc.raw == fc.typed and fc.decode is same


def _any(conditions: list[Column]) -> Column:
    out = F.coalesce(conditions[0], F.lit(False))
    for cond in conditions[1:]:
        out = out | F.coalesce(cond, F.lit(False))
    return out


Builder = Callable[[dict[str, Any], DecodeOptions], FieldCodec]

LOGICAL: dict[str, Builder] = {
    "org.apache.kafka.connect.data.Decimal": lambda s, o: decimal_codec(s, o.decimal_format),
    "io.debezium.data.VariableScaleDecimal": lambda s, o: variable_decimal_codec(o),
    "org.apache.kafka.connect.data.Date": tm.date_codec,
    "io.debezium.time.Date": tm.date_codec,
    "org.apache.kafka.connect.data.Time": tm.time_codec(1000),
    "io.debezium.time.Time": tm.time_codec(1000),
    "io.debezium.time.MicroTime": tm.time_codec(1),
    "io.debezium.time.NanoTime": tm.time_codec(1, 1000),
    "org.apache.kafka.connect.data.Timestamp": tm.timestamp_ntz("MILLISECOND"),
    "io.debezium.time.Timestamp": tm.timestamp_ntz("MILLISECOND"),
    "io.debezium.time.MicroTimestamp": tm.timestamp_ntz("MICROSECOND"),
    "io.debezium.time.NanoTimestamp": tm.timestamp_ntz("MICROSECOND", 1000),
    "io.debezium.time.ZonedTimestamp": tm.zoned_timestamp,
    "io.debezium.time.IsoDate": tm.iso_date,
    "io.debezium.time.IsoTimestamp": tm.iso_timestamp,
    "io.debezium.time.IsoTime": tm.iso_time,
    "io.debezium.time.MicroDuration": tm.duration,
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
    raw = PRIMITIVE.get(str(type_))
    if raw is None:
        raise ValueError(f"unknown Connect type {type_!r} in schema {schema.get('field') or schema.get('name')}")
    return FieldCodec(raw, raw, same)


@dataclass(frozen=True, slots=True)
class RowCodec:
    """One row struct (a table's Value or Key schema): raw struct for from_json, typed columns, decoder."""

    names: tuple[str, ...]
    raw: T.StructType
    typed: T.StructType
    fields: tuple[FieldCodec, ...]
    # The fields whose JSON is read a second time (FieldCodec.text), in those types; None when there are none.
    text: T.StructType | None = None

    def _decode(self, row: Column, text: Column | None, name: str, fc: FieldCodec) -> tuple[Column, Column | None]:
        v, e = fc.decode(row.getField(name))
        if fc.check is None:
            return v, e
        if text is None:
            raise ValueError(f"field {name}: its JSON must be read as text too (RowCodec.text)")
        gone = F.coalesce(fc.check(v, text.getField(name)), F.lit(False))
        return v, (gone if e is None else F.coalesce(e, F.lit(False)) | gone)

    def decode(self, row: Column, text: Column | None = None) -> tuple[list[Column], Column]:
        """Typed columns (aliased by field name) and a column: null when fine, else the failing fields.
        `text`: the row read into `self.text` (needed when that is not None)."""
        values, problems = [], []
        for name, fc in zip(self.names, self.fields):
            v, e = self._decode(row, text, name, fc)
            values.append(v.alias(name))
            if e is not None:
                problems.append(F.when(e, F.lit(name)))
        error = F.concat_ws(",", *problems) if problems else F.lit("")
        return values, F.when(error != "", F.concat(F.lit("cannot represent value of "), error))

    def decode_keeping(self, row: Column, keys: tuple[str, ...], clamp: bool,
                       text: Column | None = None) -> tuple[list[Column], Column | None]:
        """Typed columns where a value Spark cannot hold is null (or, with `clamp`, what its codec clamped it
        to), and an array<string> column naming those columns (null when there are none; None when no
        column of this schema can fail). Key columns are left to the key's codec, which quarantines."""
        values, problems = [], []
        for name, fc in zip(self.names, self.fields):
            v, e = self._decode(row, text, name, fc)
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
        return any(fc.check is not None or fc.decode(F.lit(None).cast(fc.raw))[1] is not None
                   for name, fc in zip(self.names, self.fields) if name not in keys)


def row_codec(schema: dict[str, Any], options: DecodeOptions) -> RowCodec:
    if schema.get("type") != "struct":
        raise ValueError(f"expected a struct schema, got {schema.get('type')!r}")
    fields = tuple(schema.get("fields", []))
    codecs = tuple(codec(f, options) for f in fields)
    names = tuple(f["field"] for f in fields)
    text = [T.StructField(n, c.text) for n, c in zip(names, codecs) if c.check is not None and c.text is not None]
    return RowCodec(
        names,
        T.StructType([T.StructField(n, c.raw) for n, c in zip(names, codecs)]),
        T.StructType([T.StructField(n, c.typed) for n, c in zip(names, codecs)]),
        codecs,
        T.StructType(text) if text else None,
    )


def envelope_fields(value_schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Envelope's fields by name (before, after, source, op, ...)."""
    return {f["field"]: f for f in value_schema.get("fields", [])}
