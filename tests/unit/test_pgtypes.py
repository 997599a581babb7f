"""Value conversion helpers: text in, Debezium JSON value out."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pgcdc.pgtypes.arrays import parse_array
from pgcdc.pgtypes.numbers import decimal_bytes, java_double, java_double_text
from pgcdc.pgtypes.special import interval_iso, interval_us
from pgcdc.pgtypes.temporal import date_days, iso_utc, time_us, timestamp_us, timestamptz_us


@pytest.mark.parametrize(("pg", "java"), [
    ("1", "1.0"), ("1.5", "1.5"), ("100", "100.0"), ("1e+20", "1.0E20"), ("1e-05", "1.0E-5"),
    ("0.001", "0.001"), ("0.0001", "1.0E-4"), ("1234567", "1234567.0"), ("12345678", "1.2345678E7"),
    ("-0", "-0.0"), ("0", "0.0"), ("-3.14", "-3.14"), ("1e-300", "1.0E-300"),
    ("1.7976931348623157e+308", "1.7976931348623157E308"), ("123456.7", "123456.7"),
])
def test_java_double_layout(pg: str, java: str) -> None:
    assert java_double_text(pg) == java


@pytest.mark.parametrize(("pg", "json"), [("NaN", b'"NaN"'), ("Infinity", b'"Infinity"'),
                                          ("-Infinity", b'"-Infinity"'), ("2.5", b"2.5")])
def test_java_double_json(pg: str, json: bytes) -> None:
    assert orjson.dumps(java_double(pg)) == json


@pytest.mark.parametrize(("unscaled", "b64"), [
    (0, "AA=="), (1, "AQ=="), (127, "fw=="), (128, "AIA="), (-1, "/w=="), (-128, "gA=="), (-129, "/38="),
    (150, "AJY="), (256, "AQA="),
])
def test_decimal_bytes_match_java_biginteger(unscaled: int, b64: str) -> None:
    assert decimal_bytes(unscaled) == b64


@pytest.mark.parametrize(("text", "days"), [
    ("1970-01-01", 0), ("1970-01-02", 1), ("1969-12-31", -1), ("2000-02-29", 11016),
    ("0001-01-01 BC", -719528), ("10000-01-01", 2932897),
])
def test_date_days(text: str, days: int) -> None:
    assert date_days(text) == days


@pytest.mark.parametrize(("text", "us"), [
    ("00:00:00", 0), ("12:34:56.789", 45296789000), ("23:59:59.999999", 86399999999), ("24:00:00", 86400000000),
])
def test_time_us(text: str, us: int) -> None:
    assert time_us(text) == us


@pytest.mark.parametrize(("text", "us"), [
    ("1970-01-01 00:00:00", 0), ("2024-01-02 03:04:05.5", 1704164645500000),
    ("1969-12-31 23:59:59.999999", -1), ("0001-01-01 00:00:00 BC", -62167219200000000),
])
def test_timestamp_us(text: str, us: int) -> None:
    assert timestamp_us(text) == us


@pytest.mark.parametrize(("text", "digits", "iso"), [
    ("2024-01-02 03:04:05.123+01", 6, "2024-01-02T02:04:05.123000Z"),
    ("2024-01-02 03:04:05.12+05:30", 3, "2024-01-01T21:34:05.120Z"),
    ("1970-01-01 00:00:00+00", 6, "1970-01-01T00:00:00.000000Z"),
    ("1970-01-01 00:00:00+00", 0, "1970-01-01T00:00:00Z"),
    ("2024-06-30 23:59:59.999999-07", 6, "2024-07-01T06:59:59.999999Z"),
])
def test_timestamptz(text: str, digits: int, iso: str) -> None:
    assert iso_utc(timestamptz_us(text), digits) == iso


@pytest.mark.parametrize(("text", "parsed"), [
    ("{}", []), ("{1,2,NULL}", ["1", "2", None]), ('{"a b","c\\"d",""}', ["a b", 'c"d', ""]),
    ("{{1,2},{3,4}}", [["1", "2"], ["3", "4"]]), ('{"NULL",NULL}', ["NULL", None]),
    ("[0:1]={5,6}", ["5", "6"]),
])
def test_parse_array(text: str, parsed: list) -> None:
    assert parse_array(text) == parsed


def test_parse_array_malformed() -> None:
    with pytest.raises(ValueError, match="malformed array literal"):
        parse_array("{1,2")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_fast_path_agrees_with_layout(x: float) -> None:
    # PostgreSQL prints float8 like %.17g shortest: plain decimal for exponents -4..14, else 'e' notation.
    text = f"{x:.17g}" if "e" in repr(x) else repr(x).removesuffix(".0")
    assert orjson.dumps(java_double(text)).decode() == java_double_text(text)


@given(st.integers(min_value=-(10**15), max_value=253_402_300_799_999_999))
def test_iso_utc_fast_path_agrees_with_slow_path(us: int) -> None:
    from pgcdc.pgtypes import temporal

    days, rest = divmod(us, temporal.US_PER_DAY)
    secs, micros = divmod(rest, 1_000_000)
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    expected = f"{temporal._far_date(days)}T{hh:02d}:{mm:02d}:{ss:02d}.{micros:06d}Z"
    assert iso_utc(us) == expected


@pytest.mark.parametrize(("text", "scale", "expected"), [
    ("123456789012345678901234567890.123456789", 9, 123456789012345678901234567890123456789),
    ("-0.01", 2, -1), ("1.25", 1, 12), ("0.00", 2, 0), ("-100", 0, -100),
    ("9" * 5000 + ".5", 1, 10**5001 - 5),
], ids=["39 digits", "-0.01", "1.25", "0.00", "-100", "5001 digits"])
def test_unscaled_is_exact_beyond_28_and_4300_digits(text: str, scale: int, expected: int) -> None:
    from decimal import Decimal

    from pgcdc.pgtypes.numbers import unscaled

    assert unscaled(Decimal(text), scale) == expected


def test_a_value_that_cannot_be_converted_names_table_column_type_and_lsn() -> None:
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.errors import ConversionError
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("b", "bytea", "bytea", -1, False)]
    events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes()))
    with pytest.raises(ConversionError) as err:
        events.row(["1", "escape-format"], 0x16_B374D848)  # bytea_output=escape is not what pgcdc reads
    assert "public.t.b (bytea)" in str(err.value) and "at LSN 16/B374D848" in str(err.value)


@pytest.mark.parametrize(("type_name", "typmod"), [("numeric", -1), ("numeric(5,2)", 327686)])
def test_a_not_null_numeric_nan_stops_with_the_table_column_and_value(type_name: str, typmod: int) -> None:
    # Measured on Debezium 3.6: it stops ("Invalid value: null used for required field"); a nullable column is
    # written null (tests/conformance/test_zoo_vs_debezium.py).
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.errors import ConversionError
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("n", type_name, "numeric", typmod, True),
               ColumnSpec("o", type_name, "numeric", typmod, False)]
    events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes()))
    assert events.row(["1", "1.50", "NaN"], 0)["o"] is None
    for special in ("NaN", "-Infinity"):
        with pytest.raises(ConversionError) as err:
            events.row(["1", special, "1.50"], 0x16_B374D848)
        message = str(err.value)
        assert f"public.t.n ({type_name}) value '{special}' at LSN 16/B374D848" in message and "\n" not in message
    for mode in ("string", "double"):  # Debezium's string and double carry NaN
        events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(decimal=mode)))
        assert events.row(["1", "NaN", "NaN"], 0)["n"] is not None


@pytest.mark.parametrize("mode", ["precise", "double", "string"])
@pytest.mark.parametrize(("type_name", "typmod"), [("numeric[]", -1), ("numeric(5,2)[]", 327686)])
def test_a_not_null_numeric_array_with_a_nan_element_stops(type_name: str, typmod: int, mode: str) -> None:
    # Measured on Debezium 3.6, in every decimal.handling.mode: the array becomes null, which a NOT NULL column's
    # required field refuses, and it stops ("Invalid value: null used for required field"); a nullable column is
    # written null.
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.errors import ConversionError
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("a", type_name, "_numeric", typmod, True),
               ColumnSpec("o", type_name, "_numeric", typmod, False)]
    events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(decimal=mode)))
    assert events.row(["1", "{1.50,NULL}", "{NaN,1}"], 0)["o"] is None
    assert events.row(["1", "{}", "{}"], 0)["a"] == []
    for special in ("{NaN,1.5}", "{Infinity}", "{{1,-Infinity}}"):
        with pytest.raises(ConversionError) as err:
            events.row(["1", special, "{1.50}"], 0x16_B374D848)
        message = str(err.value)
        assert f"public.t.a ({type_name}) value '{special}' at LSN 16/B374D848" in message and "\n" not in message


def test_a_not_null_unknown_type_array_with_a_null_element_stops() -> None:
    # Measured on Debezium 3.6 (include.unknown.datatypes): such an array is null, which a NOT NULL column's
    # required field refuses, and it stops; a nullable column is written null.
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.errors import ConversionError
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("a", "box[]", "_box", -1, True),
               ColumnSpec("o", "box[]", "_box", -1, False)]
    events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(include_unknown=True)))
    assert events.converters[1].schema["type"] == "array"
    assert events.row(["1", "{(1,1),(0,0)}", "{NULL}"], 0)["o"] is None
    assert len(events.row(["1", "{(1,1),(0,0)}", "{}"], 0)["a"]) == 1
    with pytest.raises(ConversionError) as err:
        events.row(["1", "{NULL}", "{}"], 0x16_B374D848)
    assert "public.t.a (box[]) value '{NULL}' at LSN 16/B374D848" in str(err.value)


def test_an_unknown_type_is_left_out_unless_include_unknown_datatypes() -> None:
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("q", "tsquery", "tsquery", -1, False)]
    dropped = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes()))
    assert dropped.names == ("id",) and dropped.row(["1", "'a'"], 0) == {"id": 1}
    kept = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(include_unknown=True)))
    assert kept.row(["1", "'a'"], 0) == {"id": 1, "q": "J2En"}


@pytest.mark.parametrize(("text", "value"), [
    ("{1,2}", ["MQ==", "Mg=="]), ("{}", []),
    # Measured on Debezium 3.6 (tests/conformance/test_types_more.py, unknown type arrays with null elements):
    # a null element, or an inner array of a multi-dimensional one, makes the whole array null.
    ("{1,NULL}", None), ("{NULL}", None), ("{{1,2},{3,4}}", None),
])
def test_an_array_of_an_unknown_type_with_a_null_element_is_null(text: str, value: object) -> None:
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("a", "d_int[]", "_d_int", -1, False)]
    events = TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(include_unknown=True)))
    assert events.row(["1", text], 0) == {"id": 1, "a": value}


def test_a_type_debezium_maps_but_pgcdc_does_not_stops_with_the_table_and_column() -> None:
    from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
    from pgcdc.errors import ConversionError
    from pgcdc.pgtypes import Modes

    columns = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("v", "vector(3)", "vector", 3, False)]
    with pytest.raises(ConversionError, match=r"table public\.t: column 'v': type vector\(3\) \(vector\)"):
        TableEvents("public", "t", columns, ("id",), EnvelopeSettings("p", Modes(include_unknown=True)))


@pytest.mark.parametrize(("text", "us", "iso"), [
    ("1 year 2 mons 3 days 04:05:06.789", 37_091_106_789_000, "P1Y2M3DT4H5M6.789S"),
    ("-1 days -00:00:01", -86_401_000_000, "P0Y0M-1DT0H0M-1S"),
    # parts of mixed signs: PostgreSQL writes '+' on a positive time part (values measured on Debezium 3.6)
    ("-1 days +00:00:01", -86_399_000_000, "P0Y0M-1DT0H0M1S"),
    ("1 year 1 mon -1 days +01:01:01.25", 34_104_661_250_000, "P1Y1M-1DT1H1M1.25S"),
    ("-1 years +2 mons -3 days +04:05:06", -26_542_494_000_000, "P-1Y2M-3DT4H5M6S"),
])
def test_interval(text: str, us: int, iso: str) -> None:
    assert (interval_us(text), interval_iso(text)) == (us, iso)
