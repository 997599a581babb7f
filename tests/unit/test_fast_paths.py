"""Converters' fast paths give exactly what their general paths give (hypothesis over the input space)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pgcdc.envelope.table import ColumnSpec
from pgcdc.pgtypes import numbers, temporal
from pgcdc.pgtypes.registry import Modes, converter_for


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 6), st.datetimes(), st.booleans())
def test_timestamptz_utc_text(digits: int, when: object, whole: bool) -> None:
    conv = converter_for(ColumnSpec("c", f"timestamp({digits}) with time zone", "timestamptz", digits, False),
                         Modes())
    us = 0 if whole or not digits else when.microsecond // 10 ** (6 - digits)  # type: ignore[attr-defined]
    frac = f".{us:0{digits}d}".rstrip("0").rstrip(".") if digits else ""
    text = when.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0") + frac + "+00"  # type: ignore[attr-defined]
    assert conv.fn is not None
    assert conv.fn(text) == temporal.iso_utc(temporal.timestamptz_us(text), digits)


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 8), st.integers(-(10**30), 10**30))
def test_fixed_numeric_text(scale: int, value: int) -> None:
    conv = converter_for(ColumnSpec("n", f"numeric(40,{scale})", "numeric", ((40 << 16) | scale) + 4, False),
                         Modes())
    digits = str(abs(value)).rjust(scale + 1, "0")
    text = ("-" if value < 0 else "") + (digits[:-scale] + "." + digits[-scale:] if scale else digits)
    d = numbers.parse_numeric(text)
    assert d is not None and conv.fn is not None
    assert conv.fn(text) == numbers.decimal_bytes(numbers.unscaled(d, scale))
    assert conv.fn("NaN") is None
