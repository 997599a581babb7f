"""Connect decimals -> DecimalType, exactly: the two's-complement bytes are read as 32-bit chunks with integer
arithmetic and turned into decimal text; never through a double, which overflows and rounds (NOTES, PySpark)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.fieldcodec import DecodeOptions, FieldCodec, checked

MAX_PRECISION = 38


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


def decimal_codec(schema: dict[str, Any]) -> FieldCodec:
    params = schema.get("parameters") or {}
    scale = int(params.get("scale", "0"))
    precision = int(params.get("connect.decimal.precision", MAX_PRECISION))
    if precision > MAX_PRECISION or precision < scale or precision <= 0:
        precision = MAX_PRECISION
    typed = T.DecimalType(precision, min(scale, MAX_PRECISION))

    def decode(c: Column) -> tuple[Column, Column | None]:
        value = _with_point(unscaled_integer(c), F.lit(scale)).try_cast(typed)
        return checked(value, c)

    return FieldCodec(T.StringType(), typed, decode)


def variable_decimal_codec(options: DecodeOptions) -> FieldCodec:
    raw = T.StructType([T.StructField("scale", T.IntegerType()), T.StructField("value", T.StringType())])
    typed = T.DecimalType(MAX_PRECISION, options.variable_scale)

    def decode(c: Column) -> tuple[Column, Column | None]:
        scale = c.getField("scale")
        text = _with_point(unscaled_integer(c.getField("value")), scale)
        value = F.when(scale <= options.variable_scale, text.try_cast(typed))
        return value, c.isNotNull() & value.isNull()

    return FieldCodec(raw, typed, decode)
