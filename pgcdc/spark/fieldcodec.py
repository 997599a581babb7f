"""What every field decoder shares: DecodeOptions, FieldCodec (raw type, typed type, decode expression) and
the Connect primitives. The decoders per family are in decimals.py, temporal.py and schema.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pyspark.sql import Column
from pyspark.sql import types as T

Decode = Callable[[Column], tuple[Column, Column | None]]
Check = Callable[[Column, Column], Column]

UNREPRESENTABLE_MODES = ("null", "clamp", "quarantine")
DECIMAL_FORMATS = ("base64", "numeric")
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

    Flattened records (ExtractNewRecordState; recognised by a value schema named `*.Value`, see flattened.py):
    exact: refuse (one line, nothing applied) a topic whose flattened records cannot give the exact table:
      without `deleted_field` (delete.tombstone.handling.mode other than rewrite/rewrite-with-tombstone), an
      LSN field or `op_field`. False applies them anyway, ordered by Kafka offset where no LSN is given.
    lsn_fields, op_field, deleted_field: the names `add.fields` gave them (`lsn` -> `__lsn`, `source.lsn` ->
      `__source_lsn`, `op` -> `__op`); the first of lsn_fields present is used.
    added_prefix: `add.fields.prefix`. Fields with it at the end of the value (where the transform appends
      them) are not columns of the table.

    decimal_format: the value converter's `decimal.format` (JsonConverter, JsonSchemaConverter): "base64" (the
      default: a Connect Decimal is base64 text of its two's-complement bytes) or "numeric" (a JSON number);
      any case, as Kafka takes it. The two cannot be told apart from the records (a digit string is also
      base64), so it must say what the converter was set to.
    key_decimal_format: the key converter's `decimal.format`; None (the default): the same as decimal_format.
    Avro and Protobuf records carry decimals as bytes whatever these say.
    """

    time_as: str = "long"
    variable_scale: int = 18
    binary_mode: str = "bytes"
    unrepresentable: str = "null"
    exact: bool = True
    lsn_fields: tuple[str, ...] = ("__lsn", "__source_lsn")
    op_field: str = "__op"
    deleted_field: str = "__deleted"
    added_prefix: str = "__"
    decimal_format: str = "base64"
    key_decimal_format: str | None = None

    def __post_init__(self) -> None:
        if self.unrepresentable not in UNREPRESENTABLE_MODES:
            raise ValueError(f"DecodeOptions.unrepresentable={self.unrepresentable!r}: expected one of "
                             f"{', '.join(UNREPRESENTABLE_MODES)}")
        if self.time_as not in ("long", "string"):
            raise ValueError(f"DecodeOptions.time_as={self.time_as!r}: expected long or string")
        for name in ("decimal_format", "key_decimal_format"):
            value = getattr(self, name)
            if value is None and name == "key_decimal_format":
                continue
            low = value.strip().lower() if isinstance(value, str) else None
            if low not in DECIMAL_FORMATS:
                raise ValueError(f"DecodeOptions.{name}={value!r}: expected base64 or numeric (the converter's "
                                 f"decimal.format, any case)")
            object.__setattr__(self, name, low)

    def for_key(self) -> DecodeOptions:
        """These options for the record's key: its decimals in the key converter's format."""
        key = self.key_decimal_format or self.decimal_format
        return self if key == self.decimal_format else replace(self, decimal_format=key)


@dataclass(frozen=True, slots=True)
class FieldCodec:
    """`raw`: the type from_json reads the JSON value into; `typed`: the Spark type of the column; `decode`: raw
    column -> (typed value, error or None). A codec whose raw type can lose a value silently (from_json gives
    null for a number a DecimalType cannot hold, as for JSON null) also has `text`, a type the JSON is read
    into a second time to see whether a value was there, and `check`: (typed value, text column) -> true when
    the JSON held a value the typed one lacks."""

    raw: T.DataType
    typed: T.DataType
    decode: Decode
    text: T.DataType | None = None
    check: Check | None = None


PRIMITIVE: dict[str, T.DataType] = {
    "int8": T.ByteType(), "int16": T.ShortType(), "int32": T.IntegerType(), "int64": T.LongType(),
    "float": T.FloatType(), "float32": T.FloatType(), "double": T.DoubleType(), "float64": T.DoubleType(),
    "boolean": T.BooleanType(), "string": T.StringType(), "bytes": T.StringType(),
}


def same(c: Column) -> tuple[Column, Column | None]:
    return c, None


def checked(value: Column, raw: Column) -> tuple[Column, Column | None]:
    """A try_-style conversion: null out of a non-null input means the value could not be converted."""
    return value, raw.isNotNull() & value.isNull()
