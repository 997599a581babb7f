"""Arrays whose schema or values Debezium 3.6 writes differently from "an array of the element" (measured), and
an array's element seen as a column."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pgcdc.pgtypes import temporal
from pgcdc.pgtypes.arrays import array_converter
from pgcdc.pgtypes.converter import ColumnLike, Converter, Fn, in_ms, items_schema, with_special

def _null(text: str) -> None:
    return None


def _bit_array(column: ColumnLike, element: Converter) -> Converter | None:
    # bit(n)[]: Debezium declares the element's own schema (Bits, or boolean for bit(1)) and writes null.
    return Converter(element.schema, _null)


def _numeric_array(column: ColumnLike, element: Converter) -> Converter | None:
    # numeric[] and numeric(p,s)[]: each element as the scalar column writes it, but an element Connect cannot
    # carry (NaN, ±Infinity) makes the whole array null (measured on 3.6, every decimal.handling.mode).
    convert = array_converter(element.fn)

    def whole(text: str) -> Any:
        return None if "NaN" in text or "Infinity" in text else convert(text)

    return Converter({"type": "array", "items": items_schema(element.schema, True)}, whole)


def _no_null_elements(column: ColumnLike, element: Converter) -> Converter | None:
    # ltree[], tsvector[] and enum arrays holding a null element are written null as a whole (measured).
    convert = array_converter(element.fn)

    def whole(text: str) -> Any:
        items = convert(text)
        return None if None in items else items

    return Converter({"type": "array", "items": items_schema(element.schema, column.base_type_name == "_ltree")},
                     whole)


def _time_array(column: ColumnLike, element: Converter) -> Converter | None:
    # time[] elements go through java.sql.Time: whole milliseconds, 24:00:00 as midnight (measured).
    name = element.schema.get("name")
    fn: Fn
    if name == "io.debezium.time.MicroTime":
        fn = _time_us_jdbc
    elif name == "io.debezium.time.IsoTime":
        fn = temporal.iso_time_jdbc
    else:  # milliseconds: io.debezium.time.Time, org.apache.kafka.connect.data.Time
        fn = temporal.time_ms_jdbc
    return Converter({"type": "array", "items": items_schema(element.schema, True)}, array_converter(fn))


def _time_us_jdbc(text: str) -> int:
    return temporal.time_ms_jdbc(text) * 1000


def _timetz_array(column: ColumnLike, element: Converter) -> Converter | None:
    # timetz[] elements lose their fraction of a second (measured: '23:59:59.999999-01' -> '00:59:59Z').
    convert = element.fn
    assert convert is not None
    return Converter({"type": "array", "items": items_schema(element.schema, True)},
                     array_converter(lambda t: convert(_without_fraction(t))))


def _without_fraction(text: str) -> str:
    dot = text.find(".")
    if dot < 0:
        return text
    end = dot + 1
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:dot] + text[end:]


def _date_array(column: ColumnLike, element: Converter) -> Converter | None:
    fn = temporal.iso_date_jdbc if element.schema["type"] == "string" else temporal.date_days_jdbc_or_infinity
    return Converter({"type": "array", "items": items_schema(element.schema, True)}, array_converter(fn))


def _timestamp_array(column: ColumnLike, element: Converter) -> Converter | None:
    name = element.schema.get("name")
    fn: Fn
    if name == "io.debezium.time.IsoTimestamp":
        fn = with_special(_iso_timestamp_jdbc, temporal.ISO_TIMESTAMP_INFINITY)
    elif name == "io.debezium.time.MicroTimestamp":
        fn = with_special(lambda t: temporal.java_epoch_micros(temporal.timestamp_us_jdbc(t)),
                          temporal.TIMESTAMP_US_INFINITY)
    else:  # milliseconds: io.debezium.time.Timestamp, org.apache.kafka.connect.data.Timestamp
        fn = with_special(in_ms(temporal.timestamp_us_jdbc), temporal.TIMESTAMP_MS_INFINITY)
    return Converter({"type": "array", "items": items_schema(element.schema, True)}, array_converter(fn))


def _iso_timestamp_jdbc(text: str) -> str:
    time_text = temporal.without_era(text).split(" ", 1)[1]
    days = temporal.timestamp_us_jdbc(text) // temporal.US_PER_DAY
    return f"{temporal.iso_date_of_days(days)}T{time_text}Z"


def _timestamptz_array(column: ColumnLike, element: Converter) -> Converter | None:
    convert = element.fn
    assert convert is not None
    return Converter({"type": "array", "items": items_schema(element.schema, True)},
                     array_converter(lambda t: convert(temporal.timestamptz_text_jdbc(t))))


# Arrays whose whole schema or value Debezium 3.6 writes differently from "array of the element" (measured);
# None from a builder means the ordinary array.
ARRAYS: dict[str, Callable[[ColumnLike, Converter], Converter | None]] = {
    "_bit": _bit_array,
    "_numeric": _numeric_array,
    "_ltree": _no_null_elements,
    "_tsvector": _no_null_elements,
    "_enum": _no_null_elements,
    "_time": _time_array,
    "_date": _date_array,
    "_timestamp": _timestamp_array,
    "_timestamptz": _timestamptz_array,
    "_timetz": _timetz_array,
}


@dataclass(frozen=True, slots=True)
class ElementColumn:
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
