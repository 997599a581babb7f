"""Debezium's dates, times, timestamps and durations -> Spark types, with the values Spark cannot hold
(infinities, years outside 1..9999, saturated intervals) flagged, or clamped (DecodeOptions.unrepresentable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.fieldcodec import PRIMITIVE, DecodeOptions, FieldCodec, checked

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

def _instant(text: str, type_: T.DataType | None = None) -> Column:
    value = F.lit(text).cast(T.TimestampNTZType())
    return value if type_ is None else value.cast(type_)


def timestamp_ntz(unit: str, divisor: int = 1) -> Callable[[dict[str, Any], DecodeOptions], FieldCodec]:
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


def date_codec(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        ok = (c >= _MIN_EPOCH_S // 86_400) & (c < _MAX_EPOCH_S // 86_400)
        value = F.when(ok, F.date_from_unix_date(c))
        if options.unrepresentable == "clamp":
            high = c.isin(*DATE_PLUS_INFINITY) | ((c >= 0) & ~ok)
            value = value.when(high, _instant(_LAST_INSTANT, T.DateType())).when(
                c.isNotNull(), _instant(_FIRST_INSTANT, T.DateType()))
        return value, c.isNotNull() & ~ok

    return FieldCodec(T.IntegerType(), T.DateType(), decode)


def duration(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    """io.debezium.time.MicroDuration: Debezium saturates an interval beyond a long of microseconds."""

    def decode(c: Column) -> tuple[Column, Column | None]:
        saturated = c.isin(LONG_MAX, LONG_MIN)
        return (c if options.unrepresentable == "clamp" else F.when(~saturated, c)), saturated

    return FieldCodec(T.LongType(), T.LongType(), decode)


def time_codec(factor: int, divisor: int = 1) -> Callable[[dict[str, Any], DecodeOptions], FieldCodec]:
    """Time of day in some unit -> microseconds (long) or 'HH:MM:SS.ffffff' as configured."""

    def build(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
        raw = PRIMITIVE[schema["type"]]

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


def zoned_timestamp(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    return FieldCodec(T.StringType(), T.TimestampType(), lambda c: checked(c.try_cast(T.TimestampType()), c))


def iso_date(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        return checked(F.regexp_replace(c, "Z$", "").try_cast(T.DateType()), c)

    return FieldCodec(T.StringType(), T.DateType(), decode)


def iso_timestamp(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    def decode(c: Column) -> tuple[Column, Column | None]:
        return checked(F.regexp_replace(c, "Z$", "").try_cast(T.TimestampNTZType()), c)

    return FieldCodec(T.StringType(), T.TimestampNTZType(), decode)


def iso_time(schema: dict[str, Any], options: DecodeOptions) -> FieldCodec:
    if options.time_as == "string":
        return FieldCodec(T.StringType(), T.StringType(), lambda c: (F.regexp_replace(c, "Z$", ""), None))

    def decode(c: Column) -> tuple[Column, Column | None]:
        ts = F.concat(F.lit("1970-01-01 "), F.regexp_replace(c, "Z$", "")).try_cast(T.TimestampNTZType())
        return checked(F.unix_micros(ts.cast(T.TimestampType())), c)

    return FieldCodec(T.StringType(), T.LongType(), decode)
