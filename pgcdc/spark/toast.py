"""Unchanged TOASTed values: under REPLICA IDENTITY DEFAULT an update that leaves an out-of-line value alone does
not send it, and Debezium (and pgcdc) write `unavailable.value.placeholder` in the column's type instead. The
targets keep the value the row had, so the table stays an exact copy.

Which decoded values are the placeholder, per Spark type (the forms Debezium 3.6 writes, envelope/placeholders.py):
string columns (text, varchar, json, jsonb, xml, ranges, numeric in string mode, bytea in hex mode) hold the
placeholder text itself, bytea its bytes, a text array a one-element array of it, a uuid[] a one-element array
of the name-based UUID of its bytes, an int[] or bigint[] the placeholder's bytes as signed integers, a date[]
those integers as days since 1970-01-01, an hstore map {placeholder: placeholder}. The other columns Debezium
writes null for (other arrays, doubles, decimals, PostGIS values, bit strings): those stay null in the target
(docs/spark.md). `placeholder` is the connector's setting, a `hex:` value too.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.envelope.placeholders import placeholder_bytes, placeholder_codes, placeholder_uuid

PLACEHOLDER = "__debezium_unavailable_value"
_INTEGRAL = (T.IntegerType, T.LongType)  # int[] and bigint[]: smallint[]'s placeholder is null
_EPOCH = datetime.date(1970, 1, 1)


Test = Callable[[Column], Column]


def placeholder_test(t: T.DataType, placeholder: str) -> Test | None:
    """A function: a value Column of type `t` -> whether it is the placeholder (None: `t` cannot hold one).
    Never null: a null value is a value."""
    raw = placeholder_bytes(placeholder)
    text = raw.decode("utf-8", "replace")
    if isinstance(t, T.StringType):
        return lambda c: F.coalesce(c == F.lit(text), F.lit(False))
    if isinstance(t, T.BinaryType):
        return lambda c: F.coalesce(c == F.lit(bytearray(raw)), F.lit(False))
    if isinstance(t, T.ArrayType) and isinstance(t.elementType, T.StringType):  # text[] and the like, uuid[]
        one = F.lit(text), F.lit(placeholder_uuid(raw))
        return lambda c: F.coalesce((F.size(c) == 1) & c.getItem(0).isin(*one), F.lit(False))
    if isinstance(t, T.ArrayType) and isinstance(t.elementType, _INTEGRAL):
        codes = F.array(*(F.lit(b) for b in placeholder_codes(raw))).cast(t)
        return lambda c: F.coalesce(c == codes, F.lit(False))
    if isinstance(t, T.ArrayType) and isinstance(t.elementType, T.DateType):  # date[] as days (not in connect mode)
        days = F.array(*(F.lit(_EPOCH + datetime.timedelta(days=b)) for b in placeholder_codes(raw))).cast(t)
        return lambda c: F.coalesce(c == days, F.lit(False))
    if isinstance(t, T.MapType) and isinstance(t.keyType, T.StringType) and isinstance(t.valueType, T.StringType):
        return lambda c: F.coalesce((F.size(c) == 1) & (c.getItem(text) == F.lit(text)), F.lit(False))
    return None


def placeholder_tests(schema: T.StructType, keys: tuple[str, ...], placeholder: str) -> dict[str, Test]:
    """column name -> its placeholder test, for the data columns that can hold one (keys never do)."""
    tests = {f.name: placeholder_test(f.dataType, placeholder) for f in schema.fields if f.name not in keys}
    return {name: test for name, test in tests.items() if test is not None}
