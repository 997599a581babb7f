"""Native rows (envelope/native.py) for the Avro parts path: doubles and reals as Python floats, numeric(p,s)
and bytea as bytes. Each native value is the one the JsonConverter form's text reads back as (for a real: as a
float32; for bytes: base64 decoded), and `json_rows` gives exactly the JsonConverter form's row back, on
PostgreSQL's texts of special and extreme values; a table with such a column in its key, or without one, gets no
native rows, nor does a column a rule rewrites."""

from __future__ import annotations

import base64
import math
import struct
from typing import Any

import orjson
import pytest

from pgcdc.envelope.native import json_rows, native_events
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import UNCHANGED_TOAST

# PostgreSQL's output texts (extra_float_digits=1): specials, zeros, the extremes, subnormals, both layouts
FLOAT8 = ["NaN", "Infinity", "-Infinity", "0", "-0", "1.7976931348623157e+308", "-2.2250738585072014e-308",
          "5e-324", "1e+23", "0.001", "0.0009999999999999998", "9999999.999999998", "10000000", "1.5", "-123456.75",
          "3.141592653589793"]
FLOAT4 = ["NaN", "Infinity", "-Infinity", "0", "-0", "3.4028235e+38", "-1.1754944e-38", "1e-45", "9e+09",
          "0.001", "9999999", "1e+07", "1.5", "0.1", "-16777217"]
NUMERIC = ["NaN", "Infinity", "-Infinity", "0", "-0.000", "1.50", "123456789012345678901234567890.123456789",
           "1e-400", "-99999999999999999999.99999999999999999999"]
# numeric(38,3) as PostgreSQL writes it (its scale's digits), and texts it does not write that way
DECIMAL = ["NaN", "0.000", "-0.001", "0.128", "-0.128", "99999999999999999999999999999999999.999",
           "-99999999999999999999999999999999999.999", "1.5", "12", "1e3"]
BYTEA = ["\\x", "\\x00", "\\xff", "\\x" + "00ff" * 300]


def table(key: str = "id", decimal: str = "double") -> TableEvents:
    columns = [ColumnSpec("id", "int4", "int4", -1, True), ColumnSpec("d", "float8", "float8", -1, False),
               ColumnSpec("r", "float4", "float4", -1, False), ColumnSpec("n", "numeric", "numeric", -1, False),
               ColumnSpec("s", "text", "text", -1, False),
               ColumnSpec("p", "numeric", "numeric", (38 << 16 | 3) + 4, False),
               ColumnSpec("b", "bytea", "bytea", -1, False)]
    modes = Modes(time="adaptive", interval="numeric", decimal=decimal, snapshot=False)
    return TableEvents("public", "t", columns, (key,), EnvelopeSettings("dbserver1", modes))


def rows(n: int) -> list[list[Any]]:
    return [[str(i), FLOAT8[i % len(FLOAT8)], FLOAT4[i % len(FLOAT4)], NUMERIC[i % len(NUMERIC)], "x",
             DECIMAL[i % len(DECIMAL)], BYTEA[i % len(BYTEA)]]
            for i in range(n)] + [["99", None, None, None, None, None, None]]


def bits(v: Any, float32: bool = False) -> bytes:
    return struct.pack("<f" if float32 else "<d", v)


@pytest.mark.parametrize("decimal", ["double", "precise"])
def test_native_values_are_the_json_forms_values_and_come_back_to_it(decimal: str) -> None:
    t = table(decimal=decimal)
    n = native_events(t)
    assert n is not None and n.whole is t
    kinds = {f: c.schema["type"] for f, c in zip(t.fields, t.converters)}
    natives = {f for f, _ in n.back}
    assert natives == ({"d", "r", "n", "p", "b"} if decimal == "double" else {"d", "r", "p", "b"})
    for values in rows(len(FLOAT8) * len(FLOAT4)):
        whole, native = t.row(values, 0), n.row(values, 0)
        assert orjson.dumps(json_rows(n, native)[0]) == orjson.dumps(whole)
        for field, kind in kinds.items():
            v, j = native[field], whole[field]
            if field not in natives or j is None:
                assert orjson.dumps(v) == orjson.dumps(j)
                continue
            if kind == "bytes":
                assert type(v) is bytes and v == base64.b64decode(j)
                continue
            assert type(v) is float
            parsed = orjson.loads(orjson.dumps(j))
            expected = float(parsed) if isinstance(parsed, str) else parsed
            if math.isnan(expected):
                assert math.isnan(v)
            else:  # the same bits (a real: the same float32, and a float32 itself; -0.0 is not 0.0)
                assert bits(v, kind == "float") == bits(expected, kind == "float"), (field, values)
                assert kind != "float" or struct.unpack("<f", bits(v, True))[0] == v


@pytest.mark.parametrize("decimal", ["double", "precise"])
def test_fills_are_native_and_come_back_to_the_json_form(decimal: str) -> None:
    """A null (NOT NULL columns: the type's fallback), an absent column of a key-only old row (the default) and
    an unchanged TOASTed value (the placeholder) are native values too, and json_rows gives the JsonConverter
    form's back: every value of a native bytes column is bytes, so a row is its own Avro datum."""
    columns = [ColumnSpec("id", "int4", "int4", -1, True),
               ColumnSpec("d", "float8", "float8", -1, True, "'NaN'::double precision"),
               ColumnSpec("r", "float4", "float4", -1, True, "0.1"), ColumnSpec("r2", "float4", "float4", -1, True),
               ColumnSpec("p", "numeric", "numeric", (12 << 16 | 2) + 4, False, "1.5"),
               ColumnSpec("p2", "numeric", "numeric", (12 << 16 | 2) + 4, True),
               ColumnSpec("b", "bytea", "bytea", -1, True), ColumnSpec("b2", "bytea", "bytea", -1, False)]
    modes = Modes(time="adaptive", interval="numeric", decimal=decimal, snapshot=False)
    t = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("dbserver1", modes))
    n = native_events(t)
    assert n is not None
    kinds = {f: c.schema["type"] for f, c in zip(t.fields, t.converters) if f in dict(n.back)}
    # (a NOT NULL numeric in precise mode keeps its converter: NaN there stops, as Debezium does)
    assert set(kinds) == {"d", "r", "r2", "p", "b", "b2"} | ({"p2"} if decimal == "double" else set())
    toast = [UNCHANGED_TOAST] * len(columns)
    for values, key_only in [(["1"] + [None] * 7, True), (["1"] + [None] * 7, False),
                             (["1", "1.5", "0.5", "2", "3.25", "4.00", UNCHANGED_TOAST, UNCHANGED_TOAST], False),
                             (["1", "1.5", "0.5", "2", UNCHANGED_TOAST, "4.00", *toast[6:]], False)]:
        whole, native = t.row(values, 0, key_only), n.row(values, 0, key_only)
        assert orjson.dumps(json_rows(n, native)[0]) == orjson.dumps(whole), (values, key_only)
        for field, kind in kinds.items():
            v = native[field]
            if kind == "bytes":
                assert v is None or type(v) is bytes, (field, v)
            else:  # (an unchanged TOASTed numeric written as a double is null)
                assert v is None or type(v) is float, (field, v)
    assert math.isnan(n.row(["1"] + [None] * 7, 0, True)["d"])  # the default 'NaN'
    assert n.row(["1"] + [None] * 7, 0, True)["b"] == b""  # a NOT NULL bytea's fallback


def test_json_rows_keeps_nulls_placeholders_and_fragments() -> None:
    n = native_events(table())
    assert n is not None
    json_form = table().row(rows(1)[0], 0)
    assert json_rows(n, None, json_form) == [None, json_form]  # a row in JsonConverter's form stays it


@pytest.mark.parametrize("key", ["d", "r", "p", "b"])
def test_no_native_rows_with_a_double_in_the_key(key: str) -> None:
    assert native_events(table(key)) is None


def test_no_native_rows_without_doubles() -> None:
    columns = [ColumnSpec("id", "int4", "int4", -1, True), ColumnSpec("n", "numeric", "numeric", -1, False)]
    modes = Modes(time="adaptive", interval="numeric", decimal="precise", snapshot=False)
    assert native_events(TableEvents("public", "t", columns, ("id",), EnvelopeSettings("x", modes))) is None


def test_a_column_a_rule_rewrites_keeps_its_converter() -> None:
    t = table()
    i = t.names.index("b")
    t.fns = (*t.fns[:i], lambda text: "masked", *t.fns[i + 1:])  # as a column rule's replaced converter
    n = native_events(t)
    assert n is not None and n.row(rows(1)[0], 0)["b"] == "masked"
