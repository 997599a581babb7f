"""Connect decimals -> DecimalType, exactly: the two's-complement bytes are read as 32-bit chunks with integer
arithmetic and turned into decimal text; never through a double, which overflows and rounds (NOTES, PySpark).

With the converter's decimal.format=NUMERIC a Decimal is a JSON number (BigDecimal.toString: `1.50`, `0E-10`,
`1.23E-8`). from_json reads a number into StringType through a double (`1.50` -> `1.5`, a 38-digit fraction
-> `1.2345678901234568E36`), but into a DecimalType exactly (Jackson's BigDecimal), rounding only digits
beyond the type's scale (a Connect Decimal's value always has the schema's scale) and giving null for a value
with more digits than 38 - as for JSON null. So the number is read as DecimalType(38, scale), and once more
as text (FieldCodec.text), only to see that a value was there."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.fieldcodec import Decode, DecodeOptions, FieldCodec, checked, same

MAX_PRECISION = 38


def _two32() -> Column:
    return F.lit(Decimal(2 ** 32)).cast(T.DecimalType(MAX_PRECISION, 0))


def _let(value: Column, body: Callable[[Column], Column]) -> Column:
    """`body(value)` with `value` computed once: a lambda variable (Spark has no LET), so expressions that
    use it several times do not copy its tree (which hits the 64 KB generated-code limit on wide tables)."""
    return F.transform(F.array(value), body).getItem(0)


def unscaled_integer(b64: Column) -> Column:
    """Base64 big-endian two's-complement bytes -> DecimalType(38, 0), null when it needs more than 38 digits
    or is not base64 (unbase64 would fail the job: a decimal.format=NUMERIC number read as base64, say)."""

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

    return _let(F.hex(F.try_to_binary(b64, F.lit("base64"))), from_hex)


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


def _typed(schema: dict[str, Any]) -> tuple[int, T.DecimalType]:
    """The schema's scale and the Spark type of its values."""
    params = schema.get("parameters") or {}
    scale = int(params.get("scale", "0"))
    precision = int(params.get("connect.decimal.precision", MAX_PRECISION))
    if precision > MAX_PRECISION or precision < scale or precision <= 0:
        precision = MAX_PRECISION
    return scale, T.DecimalType(precision, min(scale, MAX_PRECISION))


def lost(value: Column, text: Column) -> Column:
    """The JSON held a value (its text is there) that the typed value lacks."""
    return text.isNotNull() & value.isNull()


def decimal_codec(schema: dict[str, Any], decimal_format: str = "base64") -> FieldCodec:
    scale, typed = _typed(schema)
    if decimal_format == "numeric":
        return _numeric(scale, typed)

    def decode(c: Column) -> tuple[Column, Column | None]:
        value = _with_point(unscaled_integer(c), F.lit(scale)).try_cast(typed)
        return checked(value, c)

    return FieldCodec(T.StringType(), typed, decode)


def _numeric(scale: int, typed: T.DecimalType) -> FieldCodec:
    if scale > MAX_PRECISION:
        # A DecimalType(38, 38) would round the digits past the 38th unseen: such a value is never read.
        return FieldCodec(T.StringType(), typed, lambda c: (F.lit(None).cast(typed), c.isNotNull()))
    raw = T.DecimalType(MAX_PRECISION, max(scale, 0))
    decode: Decode = same if raw == typed else (lambda c: (c.try_cast(typed), None))
    return FieldCodec(raw, typed, decode, T.StringType(), lost)


def variable_decimal_codec(options: DecodeOptions) -> FieldCodec:
    raw = T.StructType([T.StructField("scale", T.IntegerType()), T.StructField("value", T.StringType())])
    typed = T.DecimalType(MAX_PRECISION, options.variable_scale)

    def decode(c: Column) -> tuple[Column, Column | None]:
        scale = c.getField("scale")
        text = _with_point(unscaled_integer(c.getField("value")), scale)
        value = F.when(scale <= options.variable_scale, text.try_cast(typed))
        return value, c.isNotNull() & value.isNull()

    return FieldCodec(raw, typed, decode)
