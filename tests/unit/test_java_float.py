"""Float/Double.toString as JDK 17 writes them, against measured texts (tests/data/jdk17_float_to_string.txt,
jdk17_double_to_string.txt): the digits FloatingDecimal chooses, which are not always the shortest (8.9999995E9
for 9.0E9 as a float, 9.999999999999999E22 for 1.0E23), both directly and through the column converters fed
PostgreSQL's shortest text (fast path included), and PostgreSQL 11's texts of every digit (extra_float_digits=3:
18 significant digits for a double, 9 for a real, which are not Java's even between 10^-3 and 10^7)."""

from __future__ import annotations

import struct
from pathlib import Path

import orjson
import pytest

from pgcdc.envelope.table import ColumnSpec
from pgcdc.pgtypes import Modes, converter_for, numbers
from pgcdc.pgtypes.java_float import double_text, float32_text, to_float32

DATA = Path(__file__).resolve().parents[1] / "data" / "jdk17_float_to_string.txt"
MEASURED = [line.split() for line in DATA.read_text().splitlines() if not line.startswith("#")]
DOUBLES = [line.split() for line in (DATA.parent / "jdk17_double_to_string.txt").read_text().splitlines()
           if not line.startswith("#")]


def _double(bits: str) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", int(bits)))[0])


def _float(bits: str) -> float:
    return float(struct.unpack("<f", struct.pack("<I", int(bits)))[0])


def _pg_text(v: float, digits: int) -> str:
    """PostgreSQL 12+'s float4/float8 text: the shortest round-trip digits, %g-style layout."""
    if v != v or v in (float("inf"), float("-inf")):
        return "NaN" if v != v else "Infinity" if v > 0 else "-Infinity"
    for n in range(1, digits + 1):
        text = f"{v:.{n}g}"
        if (to_float32(float(text)) if digits == 9 else float(text)) == v:
            return text
    raise AssertionError(v)


def _json(text: str) -> bytes:
    return (f'"{text}"' if text[-1] in "yN" else text).encode()


@pytest.mark.parametrize(("bits", "text"), DOUBLES)
def test_double_to_string_as_jdk17(bits: str, text: str) -> None:
    assert double_text(_double(bits)) == text


@pytest.mark.parametrize(("bits", "text"), DOUBLES)
def test_double_column_as_jdk17(bits: str, text: str) -> None:
    v = _double(bits)
    pg = _pg_text(v, 17)
    assert orjson.dumps(numbers.java_double(pg)) == _json(text)
    assert orjson.dumps(numbers.python_float_to_java(v)) == _json(text)


@pytest.mark.parametrize(("bits", "text"), MEASURED)
def test_real_column_as_jdk17(bits: str, text: str) -> None:
    pg = _pg_text(_float(bits), 9)
    assert orjson.dumps(numbers.java_float(pg)) == _json(text)


@pytest.mark.parametrize(("bits", "text"), DOUBLES)
def test_double_column_of_postgresql_11_as_jdk17(bits: str, text: str) -> None:
    v = _double(bits)
    pg = f"{v:.18g}".replace("inf", "Infinity").replace("nan", "NaN")  # float8out: "%.*g", DBL_DIG + 3
    assert orjson.dumps(numbers.java_double_long(pg)) == _json(text)


@pytest.mark.parametrize(("bits", "text"), MEASURED)
def test_real_column_of_postgresql_11_as_jdk17(bits: str, text: str) -> None:
    v = _float(bits)
    pg = f"{v:.9g}".replace("inf", "Infinity").replace("nan", "NaN")  # float4out: "%.*g", FLT_DIG + 3
    assert orjson.dumps(numbers.java_float_long(pg)) == _json(text)


def test_postgresql_11_texts() -> None:
    """Measured on PostgreSQL 11 with extra_float_digits=3; the column converters by server version."""
    for text, java in [("0.100000000000000006", b"0.1"), ("-1.79769313486231571e+308", b"-1.7976931348623157E308"),
                       ("9.99999999999999916e+22", b"9.999999999999999E22"), ("-0", b"-0.0"), ("100", b"100.0"),
                       ("4.94065645841246544e-324", b"4.9E-324")]:
        assert orjson.dumps(numbers.java_double_long(text)) == java
    for text, java in [("0.100000001", b"0.1"), ("3.40282347e+38", b"3.4028235E38"), ("1.40129846e-45", b"1.4E-45")]:
        assert orjson.dumps(numbers.java_float_long(text)) == java
    # The shortest-text converter taking an 18-digit text as it is: why the server's version picks one.
    assert orjson.dumps(numbers.java_double("0.100000000000000006")) == b"0.100000000000000006"
    column = ColumnSpec("f", "float8", "float8", -1, False, None)
    assert converter_for(column, Modes(shortest_floats=False)).fn is numbers.java_double_long
    assert converter_for(column, Modes()).fn is numbers.java_double
    array = ColumnSpec("a", "_float4", "_float4", -1, False, None)
    assert orjson.dumps(converter_for(array, Modes(shortest_floats=False)).fn("{0.100000001,NULL}")) == b"[0.1,null]"


def test_texts_past_the_range_are_infinite() -> None:
    """PostgreSQL 11's default 15 digits round the largest double past it: Java reads that as an infinity,
    which JsonConverter writes as a string (raw, it was no JSON)."""
    for convert in (numbers.java_double, numbers.java_double_long):
        assert orjson.dumps(convert("-1.79769313486232e+308")) == b'"-Infinity"'
    for convert in (numbers.java_float, numbers.java_float_long):
        assert orjson.dumps(convert("3.40282e+39")) == b'"Infinity"'


@pytest.mark.parametrize(("bits", "text"), MEASURED)
def test_float_to_string_as_jdk17(bits: str, text: str) -> None:
    assert float32_text(struct.unpack("<f", struct.pack("<I", int(bits)))[0]) == text


def test_rounding_to_float() -> None:
    assert float32_text(to_float32(9e9)) == "8.9999995E9"
    assert to_float32(16777217.0) == 16777216.0 and to_float32(1e39) == float("inf")
