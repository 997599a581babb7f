"""Double.toString and Float.toString as JDK 17 writes them (Debezium 3.6 runs on JDK 17; Kafka Connect's
JsonConverter writes FLOAT64/FLOAT32 through Jackson, which calls them), and Java's (float) of a double.

JDK 17's toString is FloatingDecimal's digit generation (JDK 19 replaced it), which is not always the shortest
text: an integer below 2^63 takes a long-arithmetic path that rounds off "insignificant" digits (9.0E9 as a
float, 8999999488, is written 8.9999995E9); outside 10^-3..10^8 at least two digits are generated whatever the
margins say (1.0E23 is written 9.999999999999999E22, 4.9E-324 the smallest double); and the margin tests are
strict and done in 32- or 64-bit integers that can overflow (8.409999999999999E21). So `_dtoa` is
FloatingDecimal's `BinaryToASCIIBuffer.dtoa` written out step for step (JDK 17 sources), overflow included,
shared by both widths as in Java (a float's 24 bits are shifted into a double's 53). Measured against JDK 17 on
millions of values (random bit patterns, subnormals, integers, powers of ten, short decimals): every text the
same; tests/data keeps a sample.
"""

from __future__ import annotations

import math
import struct
from functools import lru_cache

_F32 = struct.Struct("<f")
_BITS32 = struct.Struct("<I")
_DOUBLE = struct.Struct("<d")
_LONG = struct.Struct("<Q")
_INF, _NEG_INF = float("inf"), float("-inf")
# FDBigInteger's tables: the bit length of 5^i (0 for 5^0), and the digits a power of two's zero bits make up.
_N_5_BITS = (0, *((5 ** i).bit_length() for i in range(1, 27)))
_INSIGNIFICANT = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9,
                  9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17,
                  17, 17, 18, 18, 18, 19)


def to_float32(v: float) -> float:
    """Java's (float) of a double: the nearest float (beyond its range, an infinity)."""
    try:
        return float(_F32.unpack(_F32.pack(v))[0])
    except OverflowError:
        return v * float("inf")


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _quot(a: int, b: int) -> int:
    """Java's integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2: float = _DOUBLE.unpack(_LONG.pack(0x3FF0000000000000 | (fract_bits & 0x000FFFFFFFFFFFFF)))[0]
    return math.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981)


def _long_digits(value: int, insignificant: int) -> tuple[list[int], int]:
    """developLongDigits: the integer's digits, `insignificant` low ones rounded off half up."""
    exp = 0
    if insignificant:
        pow10 = 10 ** insignificant
        value, residue = divmod(value, pow10)
        exp = insignificant
        value += residue >= pow10 >> 1
    text = str(value)
    stripped = text.rstrip("0")
    return [int(c) for c in stripped], exp + len(text)


def _roundup(digits: list[int], dec_exponent: int) -> tuple[list[int], int]:
    i = len(digits) - 1
    while i >= 0 and digits[i] == 9:
        digits[i] = 0
        i -= 1
    if i < 0:
        digits[0] = 1
        return digits, dec_exponent + 1
    digits[i] += 1
    return digits, dec_exponent


def _dtoa(bin_exp: int, fract_bits: int, n_sig: int) -> tuple[list[int], int]:
    """BinaryToASCIIBuffer.dtoa(binExp, fractBits, nSignificantBits, isCompatibleFormat=true)."""
    tail = (fract_bits & -fract_bits).bit_length() - 1
    n_fract = 53 - tail
    n_tiny = max(0, n_fract - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny == 0:  # an integer: the long path
        insignificant = 0
        if bin_exp > n_sig:
            p2 = bin_exp - n_sig - 1
            insignificant = _INSIGNIFICANT[p2] if 1 < p2 < len(_INSIGNIFICANT) else 0
        value = fract_bits << (bin_exp - 52) if bin_exp >= 52 else fract_bits >> (52 - bin_exp)
        return _long_digits(value, insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5, s5 = max(0, -dec_exp), max(0, dec_exp)
    b2, s2 = b5 + n_tiny + bin_exp, s5 + n_tiny
    m5, m2 = b5, b5 + n_tiny + bin_exp - n_sig
    fract_bits >>= tail
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if n_fract == 1:  # FloatingDecimal's "HACK" for exact powers of two
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    digits: list[int] = []
    b_bits = n_fract + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    tens_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    if b_bits < 64 and tens_bits < 64:  # int or long arithmetic, overflow and all
        w = 32 if b_bits < 32 and tens_bits < 32 else 64
        b, s, m = _wrap((fract_bits * 5 ** b5) << b2, w), _wrap(5 ** s5 << s2, w), _wrap(5 ** m5 << m2, w)
        tens = _wrap(s * 10, w)
        q = _quot(b, s)
        b, m = _wrap(10 * (b - s * q), w), _wrap(m * 10, w)
        low, high = b < m, _wrap(b + m, w) > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            low = high = False
        while not low and not high:
            q = _quot(b, s)
            b, m = _wrap(10 * (b - s * q), w), _wrap(m * 10, w)
            if m > 0:
                low, high = b < m, _wrap(b + m, w) > tens
            else:  # m overflowed
                low = high = True
            digits.append(q)
        low_difference = _wrap(_wrap(b << 1, w) - tens, w)
    else:  # FDBigInteger: exact
        big_s, big_b = 5 ** s5 << s2, (fract_bits * 5 ** b5) << b2
        big_m, ten_s = 5 ** (m5 + 1) << (m2 + 1), 5 ** (s5 + 1) << (s2 + 1)
        q, big_b = divmod(big_b, big_s)
        big_b *= 10
        low, high = big_b < big_m, big_b + big_m >= ten_s
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            low = high = False
        while not low and not high:
            q, big_b = divmod(big_b, big_s)
            big_b *= 10
            big_m *= 10
            low, high = big_b < big_m, big_b + big_m >= ten_s
            digits.append(q)
        low_difference = (big_b << 1) - ten_s if high and low else 0
    dec_exponent = dec_exp + 1
    if high and (not low or low_difference > 0 or (low_difference == 0 and digits[-1] & 1)):
        return _roundup(digits, dec_exponent)
    return digits, dec_exponent


def _layout(negative: bool, digits: list[int], dec_exponent: int) -> str:
    return _layout_text("-" if negative else "", "".join(map(str, digits)), dec_exponent)


def _layout_text(sign: str, ds: str, dec_exponent: int) -> str:
    """toJavaFormatString: plain between 10^-3 and 10^7, else d.dddEn; at least one digit after the point."""
    if 0 < dec_exponent < 8:
        whole = ds[:dec_exponent]
        if len(whole) < dec_exponent:
            return f"{sign}{whole}{'0' * (dec_exponent - len(whole))}.0"
        return f"{sign}{whole}.{ds[dec_exponent:] or '0'}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{ds}"
    return f"{sign}{ds[0]}.{ds[1:] or '0'}E{dec_exponent - 1}"


def _java_is_shortest(bin_exp: int, fract_bits: int, n_sig: int) -> bool:
    """Whether dtoa's digits are the shortest round-trip digits (given at least two of them, or an exponent
    where no second digit is forced): dtoa's prelude, then the cases where they may differ.

    - The long path rounds off "insignificant" digits of integers of 2^nSig and more, or writes all of them.
    - A power of two gets the narrower margin on both sides: it may need more digits.
    - Margin tests are strict; the shortest text may be an interval end when the mantissa is even, which is
      shorter than every inner candidate only when the ulp exceeds 1 (below, an end has one more digit than
      the value itself).
    - Int and long arithmetic: b < tens and m <= 10 * tens whenever tested, so b + m fits when tens has at
      most 27 (int) or 59 (long) bits; then the strict free-format loop stops at the shortest length and
      keeps the nearest digit, ties to even, as the shortest text does. FDBigInteger arithmetic is exact.
    """
    tail = (fract_bits & -fract_bits).bit_length() - 1
    n_fract = 53 - tail
    if n_fract == 1:
        return False
    n_tiny = max(0, n_fract - bin_exp - 1)
    if n_tiny == 0 and -21 <= bin_exp <= 62:
        return bin_exp < n_sig
    if bin_exp >= n_sig and n_fract != n_sig:  # an ulp above 1 and an even mantissa
        return False
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5, s5 = max(0, -dec_exp), max(0, dec_exp)
    b2, s2 = b5 + n_tiny + bin_exp, s5 + n_tiny
    m2 = b2 - n_sig
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if m2 < 0:
        b2, s2 = b2 - m2, s2 - m2
    b_bits = n_fract + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    tens_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    if b_bits < 64 and tens_bits < 64:
        return tens_bits <= (27 if b_bits < 32 and tens_bits < 32 else 59)
    return True


def _relayout(text: str) -> tuple[str, str, int]:
    """Sign, digits and decimal exponent (as toJavaFormatString counts it) of a decimal text ('1.5e-05')."""
    mantissa, _, exp = text.partition("e")
    sign = "-" if mantissa[0] == "-" else ""
    ip, _, fp = mantissa.lstrip("-").partition(".")
    ip = ip.lstrip("0")
    if ip:
        dec_exponent = len(ip)
        ds = ip + fp
    else:
        ds = fp.lstrip("0")
        dec_exponent = len(ds) - len(fp)
    return sign, ds.rstrip("0") or "0", dec_exponent + (int(exp) if exp else 0)


def _from_shortest(shortest: str, bin_exp: int, fract_bits: int, n_sig: int) -> str | None:
    sign, ds, dec_exponent = _relayout(shortest)
    if (len(ds) > 1 or -1 <= dec_exponent <= 8) and _java_is_shortest(bin_exp, fract_bits, n_sig):
        return _layout_text(sign, ds, dec_exponent)
    return None


def double_text(v: float) -> str:
    """Double.toString (JDK 17)."""
    if v != v:
        return "NaN"
    if v in (_INF, _NEG_INF):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:  # before the cache: 0.0 and -0.0 are equal keys
        return "-0.0" if _DOUBLE.pack(v)[7] else "0.0"
    bits = _LONG.unpack(_DOUBLE.pack(v))[0]
    exponent, fract = (bits >> 52) & 0x7FF, bits & 0xFFFFFFFFFFFFF
    if exponent:  # subnormals go to the port
        text = _from_shortest(repr(v), exponent - 1023, fract | 1 << 52, 53)
        if text is not None:
            return text
    return _finite_double_text(v)


@lru_cache(maxsize=4096)
def _finite_double_text(v: float) -> str:
    bits = _LONG.unpack(_DOUBLE.pack(v))[0]
    negative, exponent, fract = bool(bits >> 63), (bits >> 52) & 0x7FF, bits & 0xFFFFFFFFFFFFF
    if exponent == 0:  # a subnormal, normalized as getBinaryToASCIIConverter does
        leading = 64 - fract.bit_length()
        shift = leading - 11
        fract <<= shift
        bin_exp, n_sig = 1 - shift, 64 - leading
    else:
        fract |= 1 << 52
        bin_exp, n_sig = exponent, 53
    return _layout(negative, *_dtoa(bin_exp - 1023, fract, n_sig))


def _shortest32(f: float, text: str) -> bool:
    """Whether a text of the float f is its shortest: one digit less does not read back as f."""
    n = len(text.partition("e")[0].replace("-", "").replace(".", "").strip("0"))
    return n < 2 or to_float32(float(f"{f:.{n - 2}e}")) != f


def float32_text(f: float, shortest: str | None = None) -> str:
    """Float.toString of the float nearest `f` (JDK 17); `shortest`: that float's shortest text, if known (a
    longer one is noticed: then the port runs)."""
    if f != f:
        return "NaN"
    if f in (_INF, _NEG_INF):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0:  # before the cache: 0.0 and -0.0 are equal keys
        return "-0.0" if _DOUBLE.pack(f)[7] else "0.0"
    if shortest is not None:
        bits = _BITS32.unpack(_F32.pack(f))[0]
        exponent = (bits >> 23) & 0xFF
        if exponent and _shortest32(f, shortest):
            text = _from_shortest(shortest, exponent - 127, ((bits & 0x7FFFFF) | 1 << 23) << 29, 24)
            if text is not None:
                return text
    return _finite_float_text(f)


@lru_cache(maxsize=4096)
def _finite_float_text(f: float) -> str:
    bits = _BITS32.unpack(_F32.pack(to_float32(f)))[0]
    negative, exponent, fract = bool(bits >> 31), (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0:
        if fract == 0:  # a double below the smallest float's half
            return "-0.0" if negative else "0.0"
        leading = 32 - fract.bit_length()
        shift = leading - 8
        fract <<= shift
        bin_exp, n_sig = 1 - shift, 32 - leading
    else:
        fract |= 1 << 23
        bin_exp, n_sig = exponent, 24
    return _layout(negative, *_dtoa(bin_exp - 127, fract << 29, n_sig))
