"""Float/Double.toString as JDK 17 writes them, against measured texts (tests/data/jdk17_float_to_string.txt,
jdk17_double_to_string.txt): the digits FloatingDecimal chooses, which are not always the shortest (8.9999995E9
for 9.0E9 as a float, 9.999999999999999E22 for 1.0E23), both directly and through the column converters fed
PostgreSQL's shortest text (fast path included)."""

from __future__ import annotations

import struct
from pathlib import Path

import orjson
import pytest

from pgcdc.pgtypes import numbers
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


@pytest.mark.parametrize(("bits", "text"), MEASURED)
def test_float_to_string_as_jdk17(bits: str, text: str) -> None:
    assert float32_text(struct.unpack("<f", struct.pack("<I", int(bits)))[0]) == text


def test_rounding_to_float() -> None:
    assert float32_text(to_float32(9e9)) == "8.9999995E9"
    assert to_float32(16777217.0) == 16777216.0 and to_float32(1e39) == float("inf")
