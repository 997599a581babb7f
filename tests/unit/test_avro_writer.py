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

from pgcdc.converters.avro_writer import WrittenSchemas, avro_writer

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


def test_registered_texts_with_special_float_defaults_are_read() -> None:
    """A float8/real column with DEFAULT 'NaN' or an infinity: the registered text carries the default as Avro's
    Java library writes it, which fastavro refuses to parse ("Default value <Infinity> must match schema type");
    the reader schema (pgcdc.spark's Arrow decoder) leaves the defaults out and keeps the logical types."""
    from pgcdc.converters.avro_schema import avro_schema_text, reader_schema

    connect = {"type": "struct", "name": "x.Value", "optional": True, "fields": [
        {"field": "d", "type": "double", "optional": True, "default": "NaN"},
        {"field": "r", "type": "float", "optional": False, "default": "Infinity"},
        {"field": "n", "type": "float", "optional": True, "default": "-Infinity"},
        {"field": "c", "type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
         "version": 1, "parameters": {"scale": "2"}}]}
    text = avro_schema_text(connect)
    with pytest.raises(Exception, match="Infinity"):
        fastavro.parse_schema(json.loads(text))
    parsed = fastavro.parse_schema(reader_schema(text))
    assert "logicalType" in json.dumps(reader_schema(text)) and '"default"' not in json.dumps(reader_schema(text))
    out = io.BytesIO()
    record = {"d": math.inf, "r": -math.inf, "n": None, "c": b"\x00\x96"}
    avro_writer(text, b"")(record)  # spavro writes it too
    fastavro.schemaless_writer(out, fastavro.parse_schema(reader_schema(text)), {**record, "c": None})
    back = fastavro.schemaless_reader(io.BytesIO(out.getvalue()), parsed)
    assert back == {"d": math.inf, "r": -math.inf, "n": None, "c": None}


def test_written_schemas_parse_a_header_s_text_on_first_lookup() -> None:
    written = WrittenSchemas()
    text = json.dumps({**SCHEMA, "fields": [{**f, "type": {"type": "int", "logicalType": "date"}} if f["name"] == "i"
                                            else f for f in SCHEMA["fields"]]})
    written.texts[b"\x00\x00\x00\x00\x07"] = text
    assert len(written) == 0  # nothing parsed until a reader asks
    schema = written[b"\x00\x00\x00\x00\x07"]
    assert schema is written[b"\x00\x00\x00\x00\x07"] and len(written) == 1
    # the text without its logical types and defaults (writer_schema), as fastavro parses it
    assert {f["name"]: f["type"] for f in schema["fields"]}["i"] == {"type": "int"}
    datum = {"i": 3, "s": "x"}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, datum)
    assert fastavro.schemaless_reader(io.BytesIO(out.getvalue()), schema, None)["s"] == "x"
    with pytest.raises(KeyError):
        written[b"\x00\x00\x00\x00\x08"]  # a header this process never wrote
