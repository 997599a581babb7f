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
    or is not base64 (unbase64 would fail the job: a decimal.format=NUMERIC number read as base64, say).

    A negative number is read as its bitwise complement (-v - 1 >= 0, hex digits flipped), then negated: adding
    non-negative chunks never passes the final magnitude, whereas summing from a negative top chunk does (just
    before the last chunk is added), which made the 38-digit values within 2**32 of -10**38 overflow to null."""

    def from_hex(h: Column) -> Column:
        negative = F.substring(h, 1, 1) >= F.lit("8")
        padded = F.lpad(h, 32, F.when(negative, F.lit("F")).otherwise(F.lit("0")))
        flipped = F.when(negative, F.translate(padded, "0123456789ABCDEF", "FEDCBA9876543210")).otherwise(padded)
        dec = T.DecimalType(MAX_PRECISION, 0)

        def combine(p: Column) -> Column:
            chunks = [F.conv(F.substring(p, 1 + 8 * i, 8), 16, 10).cast(dec) for i in range(4)]
            value = chunks[0]
            for chunk in chunks[1:]:
                value = F.try_add(F.try_multiply(value, _two32()), chunk)
            # -1 - value, where it fits: inside a lambda, try_subtract hands on an overflowed value unchecked
            top = F.lit(Decimal(10 ** MAX_PRECISION - 1)).cast(dec)
            return F.when(~negative, value).when(value < top, F.lit(Decimal(-1)).cast(dec) - value)

        return F.when(F.length(h) <= 32, _let(flipped, combine))

    return _let(F.hex(F.try_to_binary(b64, F.lit("base64"))), from_hex)


def _with_point(unscaled: Column, scale: Column) -> Column:
    """DecimalType(38,0) and a scale -> the decimal's exact text ('-12.345'). The digits come from the value's
    text with its sign dropped, not from abs(): Spark negates a decimal through a 34-digit context, so abs()
    rounded negative values of 35 to 38 digits (-123456789012345678901234567890123456 gave ...3500)."""

    def text(u: Column) -> Column:
        def pad(digits: Column) -> Column:
            return F.lpad(digits, F.greatest(F.length(digits), scale + 1), F.lit("0"))

        def point(padded: Column) -> Column:
            n = F.length(padded)
            whole = F.substring(padded, F.lit(1), n - scale)
            frac = F.substring(padded, n - scale + 1, scale)
            body = F.when(scale > 0, F.concat(whole, F.lit("."), frac)).otherwise(whole)
            return F.concat(F.when(u < 0, F.lit("-")).otherwise(F.lit("")), body)

        return _let(pad(F.regexp_replace(u.cast("string"), "^-", "")), point)

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
    if scale > MAX_PRECISION:
        return _beyond_scale(typed)
    if decimal_format == "numeric":
        return _numeric(scale, typed)

    def decode(c: Column) -> tuple[Column, Column | None]:
        value = _with_point(unscaled_integer(c), F.lit(scale)).try_cast(typed)
        return checked(value, c)

    return FieldCodec(T.StringType(), typed, decode)


def _beyond_scale(typed: T.DecimalType) -> FieldCodec:
    """A schema scale above 38 (numeric(60,45); PostgreSQL 15's negative scales, which the catalog gives as 2046
    and up): DecimalType(38, 38) would silently round every digit past the 38th place (1E-45 to 0E-38, and two
    such keys to one), so no value is read, whatever the format: JSON null stays null, any other value is
    unrepresentable. Its text is not needed (StringType reads a JSON number too, through a double)."""
    return FieldCodec(T.StringType(), typed, lambda c: (F.lit(None).cast(typed), c.isNotNull()))


def _numeric(scale: int, typed: T.DecimalType) -> FieldCodec:
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
