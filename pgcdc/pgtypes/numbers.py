"""Numbers as Kafka Connect's JsonConverter (Jackson) writes them after Debezium converts them.

Doubles and floats are written with Java's Double/Float.toString, e.g. `1.0E20`, `1.0E-5`, `100.0`. PostgreSQL
12+ prints float4/float8 in shortest round-trip form, which is the digit string Java's toString also
chooses, so we only re-layout the digits; no binary float conversion is needed.
"""

from __future__ import annotations

from binascii import b2a_base64 as _b2a
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from typing import Any

import orjson

NAN = orjson.Fragment(b'"NaN"')
POS_INF = orjson.Fragment(b'"Infinity"')
NEG_INF = orjson.Fragment(b'"-Infinity"')
_SPECIAL = {"NaN": NAN, "Infinity": POS_INF, "-Infinity": NEG_INF, "inf": POS_INF, "-inf": NEG_INF, "nan": NAN}


def java_double_text(text: str) -> str:
    """Lay out a decimal number string the way Java's Double.toString does."""
    d = Decimal(text)
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).lstrip("0")
    minus = "-" if sign else ""
    if not ds:
        return minus + "0.0"
    if len(ds) > 15:  # maybe not a double's digits: those of the nearest double (measured: 10^38-1 is 1.0E38)
        sign, digits, exp = Decimal(repr(float(d))).as_tuple()
        assert isinstance(exp, int)
        ds = "".join(map(str, digits)).lstrip("0")
    stripped = ds.rstrip("0")
    exp += len(ds) - len(stripped)
    ds = stripped
    sci = len(ds) + exp - 1  # exponent of the leading digit
    if -3 <= sci < 7:
        if sci >= 0:
            int_part = ds[: sci + 1].ljust(sci + 1, "0")
            frac = ds[sci + 1:] or "0"
        else:
            int_part = "0"
            frac = "0" * (-sci - 1) + ds
        return f"{minus}{int_part}.{frac}"
    return f"{minus}{ds[0]}.{ds[1:] or '0'}E{sci}"


def java_double(text: str) -> Any:
    special = _SPECIAL.get(text)
    if special is not None:
        return special
    # Fast path: PostgreSQL's plain decimal form already is Java's when 1e-3 <= |x| < 1e7. (A Fragment takes
    # the str as it is: no encode.)
    if "e" not in text:
        ip, dot, fp = text.lstrip("-").partition(".")
        # (numeric's text keeps trailing zeros of its scale, '1.50'; Java's shortest form has none)
        if dot and fp[-1:] != "0" and ((ip != "0" and len(ip) <= 7) or (ip == "0" and fp[:3] != "000")):
            return orjson.Fragment(text)
        if not dot and ip != "0" and len(ip) <= 7:
            return orjson.Fragment(text + ".0")
    return orjson.Fragment(java_double_text(text))


def python_float_to_java(value: float) -> Any:
    if value != value:
        return NAN
    if value in (float("inf"), float("-inf")):
        return POS_INF if value > 0 else NEG_INF
    return orjson.Fragment(java_double_text(repr(value)).encode())


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


_ZERO = orjson.Fragment(b"0.0")


def java_double_no_negative_zero(text: str) -> Any:
    if text == "-0":
        return _ZERO
    # java_double's fast path, inlined: one call per value instead of two.
    if "e" not in text and text not in _SPECIAL:
        ip, dot, fp = text.lstrip("-").partition(".")
        if dot and ((ip != "0" and len(ip) <= 7) or (ip == "0" and fp[:3] != "000")):
            return orjson.Fragment(text)
    return java_double(text)
