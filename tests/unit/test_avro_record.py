"""The compiled record writer (converters/avro_record.py) against spavro's own writer of the same schema: the same
bytes for every value spavro writes, and spavro's own error for every value it refuses. Extreme and special
values of every branch type, values spavro promotes to another branch (an int for a double, text for bytes),
values of no branch, absent fields, a union with null second, a nested optional record and a named type used
twice."""

from __future__ import annotations

import copy
import io
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spavro.fast_binary import get_writer

from pgcdc.converters.avro_record import record_writer, unnamed_writer

INNER = {"type": "record", "name": "inner", "namespace": "t", "fields": [
    {"name": "x", "type": ["null", "long"], "default": None},
    {"name": "y", "type": "string"}]}
SCHEMA = {"type": "record", "name": "r", "namespace": "t", "fields": [
    {"name": "l", "type": ["null", "long"], "default": None},
    {"name": "i", "type": ["null", {"type": "int", "connect.name": "io.debezium.time.Date"}], "default": None},
    {"name": "req", "type": "long"},
    {"name": "d", "type": ["null", "double"], "default": None},
    {"name": "f", "type": ["null", "float"], "default": None},
    {"name": "s", "type": ["null", {"type": "string", "connect.version": 1,
                                    "connect.name": "io.debezium.time.ZonedTimestamp"}], "default": None},
    {"name": "second", "type": ["string", "null"], "default": "x"},
    {"name": "b", "type": ["null", "bytes"], "default": None},
    {"name": "dec", "type": ["null", {"type": "bytes", "scale": 2, "precision": 12, "connect.version": 1,
                                      "connect.parameters": {"scale": "2"}, "connect.name": "org.apache.kafka."
                                      "connect.data.Decimal", "logicalType": "decimal"}], "default": None},
    {"name": "flag", "type": ["null", "boolean"], "default": None},
    {"name": "three", "type": ["null", "long", "string"], "default": None},
    {"name": "arr", "type": ["null", {"type": "array", "items": ["null", "double"]}], "default": None},
    {"name": "n", "type": ["null", INNER], "default": None},
    {"name": "again", "type": ["null", "t.inner"], "default": None},
]}
OPTIONAL = {"type": ["null", SCHEMA]}["type"]  # a change event's `before`/`after`: null or the row
BASE: dict[str, Any] = {"l": 1, "i": 19000, "req": 7, "d": 1.5, "f": 2.5, "s": "2024-01-01T00:00:00Z",
                        "second": "y", "b": b"\x01", "dec": b"\x00\x9c", "flag": True, "three": "t",
                        "arr": [1.0, None], "n": {"x": 5, "y": "z"}, "again": None}

LONGS = [-(2 ** 63), 2 ** 63 - 1, 0, -1, 1, 63, 64, -64, -65, 2 ** 31, None]
INTS = [-(2 ** 31), 2 ** 31 - 1, 0, -1, None, 2 ** 31, -(2 ** 31) - 1]  # the last two: spavro refuses them
DOUBLES = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308, 1e23, None, 3]
FLOATS = [math.nan, math.inf, -math.inf, -0.0, 3.4028234663852886e38, 1.401298464324817e-45, None, 1]
TEXTS = ["", "é🎉\x00", "a" * 200, None]
BYTES_ = [b"", b"\x00\xff", bytes(300), None, "text for bytes"]
ODD = [True, False, 1.5, "1", b"1", [], {}, 2 ** 64, -(2 ** 63) - 1]  # of no branch, or beyond it


def spavro_result(schema: Any, datum: Any) -> bytes | tuple[type, str]:
    out = io.BytesIO()
    try:
        get_writer(schema)(out, datum)
    except Exception as exc:
        return type(exc), str(exc)
    return out.getvalue()


def compiled_result(schema: Any, datum: Any) -> bytes | tuple[type, str]:
    write = record_writer(schema)
    out = io.BytesIO()
    out.write(b"head")  # written into a buffer that already holds bytes, as an event's value is
    try:
        write(out, datum)
    except Exception as exc:
        return type(exc), str(exc)
    data = out.getvalue()
    assert data.startswith(b"head")
    return data[4:]


def variants() -> list[dict[str, Any]]:
    rows = []
    for field, values in [("l", LONGS + ODD), ("i", INTS + ODD), ("req", LONGS + ODD), ("d", DOUBLES + ODD),
                          ("f", FLOATS + ODD), ("s", TEXTS + ODD), ("second", TEXTS + ODD), ("b", BYTES_ + ODD),
                          ("dec", BYTES_ + ODD), ("flag", [True, False, None, *ODD[2:], 1, 0]),
                          ("three", [5, "x", None, *ODD]), ("arr", [[], [math.nan, None], None, *ODD]),
                          ("n", [None, {"x": None, "y": ""}, {"y": "only"}, {"x": "1", "y": "x"}, {}, *ODD]),
                          ("again", [{"x": -(2 ** 63), "y": "🎉"}, None, *ODD])]:
        rows += [{**BASE, field: v} for v in values]
    rows.append({k: v for k, v in BASE.items() if k not in ("l", "s")})  # absent: written as null
    rows.append({k: v for k, v in BASE.items() if k != "req"})  # absent and required: refused
    return rows


@pytest.mark.parametrize("datum", variants(), ids=repr)
def test_the_same_bytes_or_error_as_spavro(datum: dict[str, Any]) -> None:
    assert compiled_result(SCHEMA, datum) == spavro_result(SCHEMA, datum)
    assert compiled_result(OPTIONAL, datum) == spavro_result(OPTIONAL, datum)


@pytest.mark.parametrize("datum", [None, "row", [], 5], ids=repr)
def test_an_optional_record_of_another_value(datum: Any) -> None:
    assert compiled_result(OPTIONAL, datum) == spavro_result(OPTIONAL, datum)


def test_a_failed_record_raises_spavro_error_naming_the_field() -> None:
    result = compiled_result(SCHEMA, {**BASE, "l": True})
    assert result[0] is TypeError and "fieldname: 'l'" in str(result[1])


@pytest.mark.parametrize("schema, datum", [
    ("long", 5), ("long", None), (["null", "string"], "x"), ({"type": "array", "items": "long"}, [1, -1]),
    (["null", "long", "string"], 3)])
def test_other_schemas_are_written_by_spavro(schema: Any, datum: Any) -> None:
    assert compiled_result(schema, datum) == spavro_result(schema, datum)


_values = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 64), max_value=2 ** 64),
                    st.floats(allow_nan=True), st.text(max_size=5), st.binary(max_size=5))


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={f["name"]: _values for f in SCHEMA["fields"]}))
def test_any_values(datum: dict[str, Any]) -> None:
    assert compiled_result(SCHEMA, datum) == spavro_result(SCHEMA, datum)


def test_a_document_met_again_is_not_compiled_again_and_a_changed_one_is() -> None:
    """`before` and `after` share their writer; the same record name with another column (a table changed
    mid-stream) gets its own, writing its own fields."""
    assert record_writer(OPTIONAL) is record_writer(copy.deepcopy(OPTIONAL))
    changed = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "added", "type": ["null", "long"], "default": None}]}
    assert record_writer(changed) is not record_writer(SCHEMA)
    datum = {**BASE, "added": 2 ** 40}
    assert compiled_result(changed, datum) == spavro_result(changed, datum) != spavro_result(SCHEMA, datum)
    assert compiled_result(SCHEMA, datum) == spavro_result(SCHEMA, datum)


UNNAMED = [("long", [0, -1, 2**63 - 1, -(2**63)]), (["null", "double"], [None, math.nan, -math.inf, -0.0, 5e-324]),
           (["null", {"type": "string", "connect.name": "io.debezium.time.ZonedTimestamp"}],
            [None, "", "\u00e9\U0001f600"]),
           ({"type": "array", "items": ["null", "int"]}, [[], [None, 2**31 - 1, -(2**31)]]),
           ({"type": "map", "values": ["null", "bytes"]}, [{}, {"k": None, "": b""}])]


@pytest.mark.parametrize(("schema", "values"), UNNAMED)
def test_a_schema_of_no_named_type_has_one_writer_that_writes_spavro_s_bytes(schema: Any, values: list[Any]) -> None:
    write = unnamed_writer(schema)
    assert unnamed_writer(copy.deepcopy(schema)) is write  # one writer per schema text, shared by the tables
    for value in values:
        ours, theirs = io.BytesIO(), io.BytesIO()
        write(ours, value)
        get_writer(schema)(theirs, value)
        assert ours.getvalue() == theirs.getvalue()


@pytest.mark.parametrize("schema", [INNER, ["null", INNER], {"type": "array", "items": "t.inner"},
                                    {"type": "enum", "name": "e", "symbols": ["A"]}])
def test_a_schema_that_names_or_uses_a_type_is_built_each_time(schema: Any) -> None:
    get_writer(INNER)  # `t.inner` known to spavro
    assert unnamed_writer(schema) is not unnamed_writer(schema)
