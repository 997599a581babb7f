"""Cast's float32 text against JDK 17's Float.toString, measured (tests/data/jdk17_float_to_string.txt): the
digits FloatingDecimal chooses, which are not always the shortest (8.9999995E9 for 9.0E9 as a float)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pgcdc.transforms.java_float import float32_text, to_float32

DATA = Path(__file__).resolve().parents[1] / "data" / "jdk17_float_to_string.txt"
MEASURED = [line.split() for line in DATA.read_text().splitlines() if not line.startswith("#")]


@pytest.mark.parametrize(("bits", "text"), MEASURED)
def test_float_to_string_as_jdk17(bits: str, text: str) -> None:
    assert float32_text(struct.unpack("<f", struct.pack("<I", int(bits)))[0]) == text


def test_rounding_to_float() -> None:
    assert float32_text(to_float32(9e9)) == "8.9999995E9"
    assert to_float32(16777217.0) == 16777216.0 and to_float32(1e39) == float("inf")
