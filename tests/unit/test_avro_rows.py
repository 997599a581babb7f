"""The Avro parts path's compiled row datum (converters/avro_rows.py) against the general way (the row
serialized, parsed, then avro_schema.datum_function), on the capture's own forms of special values: Java's
double text as orjson.Fragment (NaN, the infinities, -0.0, the extremes), base64 bytes (empty included), nulls,
arrays with nulls, a nested struct, and names that need quoting."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from pgcdc.converters.avro_rows import row_datum
from pgcdc.converters.avro_schema import datum_function
from pgcdc.pgtypes.numbers import NAN, NEG_INF, POS_INF

SCHEMA: dict[str, Any] = {"type": "struct", "optional": True, "field": "after", "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "d", "type": "double", "optional": True},
    {"field": "f", "type": "float", "optional": True},
    {"field": "b", "type": "bytes", "optional": True},
    {"field": "n", "type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
     "parameters": {"scale": "2"}},
    {"field": "fa", "type": "array", "optional": True, "items": {"type": "double", "optional": True}},
    {"field": "vs", "type": "struct", "optional": True, "name": "io.debezium.data.VariableScaleDecimal",
     "fields": [{"field": "scale", "type": "int32", "optional": False},
                {"field": "value", "type": "bytes", "optional": False}]},
    {"field": "it's \"q\"\\", "type": "string", "optional": True},
    {"field": "ok", "type": "boolean", "optional": True},
]}

FRAGMENTS = [NAN, POS_INF, NEG_INF, orjson.Fragment(b"-0.0"), orjson.Fragment(b"1.7976931348623157E308"),
             orjson.Fragment(b"4.9E-324"), orjson.Fragment(b"9.999999999999999E22"), orjson.Fragment(b"0.0")]


def general(row: dict[str, Any]) -> Any:
    fn = datum_function(SCHEMA, tuples=False)
    assert fn is not None
    return fn(orjson.loads(orjson.dumps(row)))


@pytest.mark.parametrize("double", [*FRAGMENTS, None, 1.5])
def test_compiled_datum_is_the_general_one(double: Any) -> None:
    row = {"id": -9223372036854775808, "d": double, "f": orjson.Fragment(b"3.4028235E38"), "b": "",
           "n": "AP8=", "fa": [NAN, None, orjson.Fragment(b"-0.0"), POS_INF],
           "vs": {"scale": 3, "value": "gA=="}, "it's \"q\"\\": "", "ok": False}
    before = orjson.dumps(row)
    ours = row_datum(SCHEMA)(row)
    assert orjson.dumps(row) == before  # the capture's row is not changed: the general way can still follow
    assert repr(ours) == repr(general(row))
    # A snapshot row arrives as JSON bytes: parsed, its doubles are floats or "NaN" and the like.
    assert repr(row_datum(SCHEMA)(orjson.loads(before))) == repr(ours)


def test_nulls_everywhere() -> None:
    row = {f["field"]: None for f in SCHEMA["fields"]}
    row["id"] = 0
    assert repr(row_datum(SCHEMA)(row)) == repr(general(row))


def test_a_missing_column_raises_for_the_general_way() -> None:
    with pytest.raises(KeyError):
        row_datum(SCHEMA)({"id": 1})
