"""Numbers as Kafka Connect's JsonConverter (Jackson) writes them after Debezium converts them.

Doubles and floats are written with JDK 17's Double/Float.toString, e.g. `1.0E20`, `1.0E-5`, `100.0`, which is
not always the shortest text PostgreSQL 12+ prints (1e+23 is 9.999999999999999E22, real 9e+09 is 8.9999995E9):
java_float.py computes it, from the shortest text where it can tell the two agree. Between 10^-3 and 10^7
(Java's plain layout) they did on every value measured (5.2 million texts against JDK 17), so PostgreSQL's
plain text is written as it is: there FloatingDecimal forces no second digit, and an ulp of at most 1 makes the
interval's ends longer decimals than the value itself, so its strict margin tests pick the same shortest,
nearest digits. (Its 32/64-bit margin arithmetic could overflow there in principle; none of these did.)"""

from __future__ import annotations

from binascii import b2a_base64 as _b2a
from collections.abc import Callable
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from typing import Any

import orjson

from pgcdc.pgtypes.java_float import double_text, float32_text, to_float32

NAN = orjson.Fragment(b'"NaN"')
POS_INF = orjson.Fragment(b'"Infinity"')
NEG_INF = orjson.Fragment(b'"-Infinity"')
_SPECIAL = {"NaN": NAN, "Infinity": POS_INF, "-Infinity": NEG_INF, "inf": POS_INF, "-inf": NEG_INF, "nan": NAN}


def java_double_text(text: str) -> str:
    """Double.toString of the double nearest a decimal number string."""
    return double_text(float(text))


def _java_number(to_text: Callable[[float, str | None], str], shortest: bool) -> Callable[[str], Any]:
    """A converter of PostgreSQL's float4/float8 text to Java's; `shortest`: the texts are PostgreSQL 12+'s
    shortest ones (extra_float_digits >= 1), not the 9 or 18 digits of older servers."""

    def java(text: str) -> Any:
        out = to_text(float(text), text if shortest else None)
        return _SPECIAL.get(out) or orjson.Fragment(out)  # (a text past the type's range reads as infinite)

    def convert(text: str) -> Any:
        special = _SPECIAL.get(text)
        if special is not None:
            return special
        # Plain text between 10^-3 and 10^7 already is Java's (see above). A Fragment takes the str as it is.
        if "e" not in text:
            ip, dot, fp = text.lstrip("-").partition(".")
            # (numeric's text keeps trailing zeros of its scale, '1.50'; Java's shortest form has none)
            if dot and fp[-1:] != "0" and ((ip != "0" and len(ip) <= 7) or (ip == "0" and fp[:3] != "000")):
                return orjson.Fragment(text)
            if not dot and ip != "0" and len(ip) <= 7:
                return orjson.Fragment(text + ".0")
        return java(text)

    def convert_long(text: str) -> Any:
        special = _SPECIAL.get(text)
        return special if special is not None else java(text)

    return convert if shortest else convert_long


# Negative zero stays -0.0, in columns and arrays alike (measured on 3.6: '-0' real and float8 columns).
java_double = _java_number(lambda v, _: double_text(v), True)  # (repr is its shortest text, whatever PostgreSQL's)
java_float = _java_number(lambda v, text: float32_text(to_float32(v), text), True)  # (past its range: infinite)
# The texts of PostgreSQL 11 and older (18 and 9 significant digits: '0.100000000000000006').
java_double_long = _java_number(lambda v, _: double_text(v), False)
java_float_long = _java_number(lambda v, _: float32_text(to_float32(v)), False)


def float32(text: str) -> float:
    """A real's value: the float32 nearest PostgreSQL's text, as Java's (float) of the double gives."""
    return to_float32(float(text))


def float32_to_java(v: float) -> Any:
    """java_float's JSON number (a string for NaN and the infinities) of a float32 value."""
    text = float32_text(v)
    return _SPECIAL.get(text) or orjson.Fragment(text)


def base64_text(b: bytes) -> str:
    """Bytes as JsonConverter writes them: base64."""
    return _b2a(b, newline=False).decode("ascii")


def python_float_to_java(value: float) -> Any:
    """Double.toString of a Python float, as a JSON number (a string for NaN and the infinities)."""
    if 1e-3 <= abs(value) < 1e7:  # repr is plain here, and Java's (see above)
        return orjson.Fragment(repr(value))
    if value != value:
        return NAN
    if value in (float("inf"), float("-inf")):
        return POS_INF if value > 0 else NEG_INF
    return orjson.Fragment(double_text(value))


def decimal_bytes(unscaled: int) -> str:
    """Base64 of Java BigInteger.toByteArray(): minimal big-endian two's complement."""
    # binascii directly: base64.b64encode is a Python wrapper around it (a third of this function's cost).
    return _b2a((unscaled).to_bytes((unscaled + (unscaled < 0)).bit_length() // 8 + 1, "big", signed=True),
                newline=False).decode("ascii")


def parse_numeric(text: str) -> Decimal | None:
    """A PostgreSQL numeric literal; None for NaN and infinities, which Connect decimals cannot carry."""
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a numeric literal: {text!r}") from None
    return d if d.is_finite() else None


def unscaled(d: Decimal, scale: int) -> int:
    """d * 10**scale as an integer (half-even when d has more fraction digits), exactly: the default decimal
    context rounds to 28 digits, and int(str) refuses more than 4300 digits."""
    _, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    context = Context(prec=len(digits) + max(exp + scale, 0) + 1, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX,
                      Emin=MIN_EMIN)
    return int(d.scaleb(scale, context).to_integral_value(context=context))
