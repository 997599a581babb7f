"""Kafka Connect's Values.convertToShort/Integer/Long/Float/Double of a string (connect-api 4.x), as MaskField reads
its `replacement`: `new BigDecimal(text)`, then `longValue()` narrowed by a Java cast, or `doubleValue()` (cast to
float for FLOAT32). Text BigDecimal refuses fails with Values.asLong's message.

Python's float() and int() read other texts than BigDecimal: float() takes "NaN", "inf", blanks and underscores,
int() refuses "1.9"; so the grammar is BigDecimal's, checked first, and the arithmetic Decimal's.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pgcdc.pgtypes.java_float import to_float32

# BigDecimal(String): a sign, digits with at most one point (Character.isDigit: any Unicode decimal digit, as
# Python's \d and Decimal), an exponent; nothing else, no blanks.
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+\.?(\d*)|\.(\d+))(?:[eE]([+-]?\d+))?")
_INT_MAX = 2**31 - 1
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def big_decimal(text: str) -> tuple[Decimal, int]:
    """`new BigDecimal(text)` as (value, scale); ValueError with Kafka Connect's message where Java throws."""
    m = _BIG_DECIMAL.fullmatch(text)
    if m is not None:
        exponent = int(m.group(3) or 0)
        scale = len(m.group(1) or m.group(2) or "") - exponent
        # "Exponent overflow." / "Scale out of range.": both an int in Java.
        if -_INT_MAX - 1 <= exponent <= _INT_MAX and -_INT_MAX - 1 <= scale <= _INT_MAX:
            return Decimal(text), scale
    raise ValueError(f"Unable to convert {text} (class java.lang.String) to a number")


def to_double(text: str) -> float:
    """BigDecimal.doubleValue: the nearest double; a zero is +0.0 (BigDecimal has no -0), a negative value that
    underflows is -0.0."""
    d, _ = big_decimal(text)
    return 0.0 if d.is_zero() else float(d)


def to_float(text: str) -> float:
    """Values.convertToFloat: `(float)` of the double (rounded twice: 16777217.5 is 1.6777218E7)."""
    return to_float32(to_double(text))


def to_integer(text: str, type_: str) -> int:
    """BigDecimal.longValue (truncated toward zero, its low 64 bits) then `(byte)`/`(short)`/`(int)`."""
    d, scale = big_decimal(text)
    if scale <= -64:  # longValue's shortcut: a multiple of 2**64 (and no huge integer built here)
        return 0
    bits = BITS[type_]
    v = int(d) & ((1 << bits) - 1)
    return v - (1 << bits) if v >> (bits - 1) else v
