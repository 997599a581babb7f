"""spavro's writer (converters/avro_writer.py) against fastavro on special values: the Avro conformance tier
compares whole change events with Confluent's converter; here the values where two encoders could part: NaN,
the infinities, -0.0, float32 rounding, the extreme longs and ints, empty strings and bytes, empty arrays,
null elements, nulls of optional fields and maps with null values."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import fastavro
import pytest

from pgcdc.converters.avro_writer import avro_writer

SCHEMA = {"type": "record", "name": "r", "namespace": "t", "fields": [
    {"name": "d", "type": ["null", "double"], "default": None},
    {"name": "f", "type": ["null", "float"], "default": None},
    {"name": "l", "type": ["null", "long"], "default": None},
    {"name": "i", "type": "int"},
    {"name": "s", "type": ["null", "string"], "default": None},
    {"name": "b", "type": ["null", "bytes"], "default": None},
    {"name": "a", "type": ["null", {"type": "array", "items": ["null", "double"]}], "default": None},
    {"name": "m", "type": ["null", {"type": "map", "values": ["null", "string"]}], "default": None},
    {"name": "n", "type": ["null", {"type": "record", "name": "inner", "fields": [
        {"name": "x", "type": ["null", "long"], "default": None}]}], "default": None},
]}
DOUBLES = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308, 1e23, None]
FLOATS = [math.nan, math.inf, -math.inf, -0.0, 3.4028234663852886e38, 1.401298464324817e-45, 9e9, None]
LONGS = [-(2 ** 63), 2 ** 63 - 1, 0, -1, None]
INTS = [-(2 ** 31), 2 ** 31 - 1, 0]
OTHERS: list[dict[str, Any]] = [
    {"s": "", "b": b"", "a": [], "m": {}, "n": {"x": None}},
    {"s": "é🎉\x00", "b": b"\x00\xff", "a": [None, 1.5, None, math.nan], "m": {"k": None, "": "v"}, "n": None},
    {"s": None, "b": None, "a": None, "m": None, "n": {"x": -(2 ** 63)}},
]


def cases() -> list[dict[str, Any]]:
    out = []
    for k, d in enumerate(DOUBLES):
        out.append({"d": d, "f": FLOATS[k % len(FLOATS)], "l": LONGS[k % len(LONGS)], "i": INTS[k % len(INTS)],
                    **OTHERS[k % len(OTHERS)]})
    return out


@pytest.mark.parametrize("datum", cases(), ids=lambda d: repr(d["d"]))
def test_the_same_bytes_as_fastavro(datum: dict[str, Any]) -> None:
    write = avro_writer(json.dumps(SCHEMA), b"\x00\x00\x00\x00\x07")
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(SCHEMA), datum)
    assert write(datum) == b"\x00\x00\x00\x00\x07" + out.getvalue()
