"""Types beyond numbers, text and time: intervals, bits, money, points, hstore, enums, zoned times.

Every encoding here was measured on Debezium 3.6 (tests/conformance), e.g. an interval month is 30.4375 days
and bit strings are little-endian integers.
"""

from __future__ import annotations

import base64
import re
import struct
from decimal import Decimal
from typing import Any

import orjson

from pgcdc.pgtypes import numbers, temporal

# -- interval -------------------------------------------------------------------------------------------
_US_PER_MONTH = 2_629_800_000_000  # 30.4375 days: Debezium's MicroDuration month
_TIME = re.compile(r"^([-+]?)(\d+):(\d\d):(\d\d)(?:\.(\d+))?$")


def _interval_parts(text: str) -> tuple[int, int, int, int]:
    """(years, months, days, signed microseconds of the time part) of PostgreSQL's default interval output
    ('1 year 2 mons 3 days 04:05:06.789', '-1 days -00:00:01')."""
    years = months = days = us = 0
    parts = text.split()
    i = 0
    while i < len(parts):
        m = _TIME.match(parts[i])
        if m:
            sign, hh, mm, ss, frac = m.groups()
            t = ((int(hh) * 60 + int(mm)) * 60 + int(ss)) * 1_000_000 + int((frac or "0").ljust(6, "0")[:6])
            us += -t if sign == "-" else t
            i += 1
            continue
        n, unit = int(parts[i]), parts[i + 1]
        if unit.startswith("year"):
            years += n
        elif unit.startswith("mon"):
            months += n
        else:
            days += n
        i += 2
    return years, months, days, us


def interval_us(text: str) -> int:
    """io.debezium.time.MicroDuration, computed as Debezium 3.6 does (MicroDuration.durationMicros over pgjdbc's
    PGInterval): in doubles, the seconds rounded to whole microseconds, then cast to long, which truncates and
    saturates at ±2^63 (measured: '178000000 years' is Long.MAX_VALUE, '2147483647:59:59.999999' is
    7730941132800000000)."""
    years = months = days = hours = minutes = 0
    seconds = 0.0
    parts = text.split()
    for i in range(0, len(parts), 2):
        m = _TIME.match(parts[i])
        if m:
            sign, hh, mm, ss, frac = m.groups()
            # PGInterval keeps whole seconds and microseconds (Math.round(s * 1e6), exact for PostgreSQL's six
            # digits) and gives back whole + micros / 1e6.
            micros = int(frac.ljust(6, "0")[:6]) if frac else 0
            if sign == "-":
                hours, minutes, seconds = -int(hh), -int(mm), -int(ss) - micros / 1e6
            else:
                hours, minutes, seconds = int(hh), int(mm), int(ss) + micros / 1e6
            break
        n, unit = int(parts[i]), parts[i + 1]
        if unit.startswith("year"):
            years = n
        elif unit.startswith("mon"):
            months = n
        else:
            days = n
    day_count = float(years * 12 + months) * 30.4375 + days
    total_seconds = ((day_count * 24 + hours) * 60 + minutes) * 60 + seconds
    return java_long(total_seconds * 1e6)


LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


def java_long(x: float) -> int:
    """Java's (long) cast of a double: toward zero, NaN 0, saturating at the long range."""
    if x != x:
        return 0
    if x >= 9.223372036854775807e18:
        return LONG_MAX
    if x <= -9.223372036854775808e18:
        return LONG_MIN
    return int(x)


def interval_iso(text: str) -> str:
    """interval.handling.mode=string: ISO-8601 duration (PnYnMnDTnHnMnS)."""
    years, months, days, us = _interval_parts(text)
    secs = Decimal(us) / 1_000_000
    hours, rem = divmod(abs(secs), 3600)
    minutes, seconds = divmod(rem, 60)
    sign = "-" if secs < 0 else ""
    sec_text = format(seconds.normalize(), "f") if seconds else "0"

    def part(value: Any, text: str) -> str:  # the sign goes on non-zero parts only (measured: T0H0M-1S)
        return f"{sign}{text}" if value else text

    return (f"P{years}Y{months}M{days}DT{part(hours, str(int(hours)))}H{part(minutes, str(int(minutes)))}M"
            f"{part(seconds, sec_text)}S")


# -- bits --------------------------------------------------------------------------------------------------
def bits_bytes(text: str) -> str:
    """io.debezium.data.Bits: the bit string read as an integer, little-endian, minimal length (Java BitSet)."""
    value = int(text, 2) if text else 0
    return base64.b64encode(value.to_bytes((value.bit_length() + 7) // 8, "little")).decode()


def bit_bool(text: str) -> bool:
    return text == "1"


# -- money ---------------------------------------------------------------------------------------------------
def money_value(text: str) -> Decimal:
    """PostgreSQL's money text ('$1,234.50', '-$1.00', '($1.00)' in some locales) as a number."""
    d = Decimal(re.sub(r"[^0-9.]", "", text))
    return -d if text.startswith("-") or text.startswith("(") else d


def money_parser(scale: int) -> Any:
    def convert(text: str) -> str:
        return numbers.decimal_bytes(numbers.unscaled(money_value(text), scale))

    return convert


def money_double(text: str) -> Any:
    """decimal.handling.mode=double: BigDecimal.doubleValue() written by Double.toString (measured)."""
    return numbers.python_float_to_java(float(money_value(text)))


# -- point ---------------------------------------------------------------------------------------------------
POINT_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "double", "optional": False, "field": "x"},
        {"type": "double", "optional": False, "field": "y"},
        {"type": "bytes", "optional": True, "field": "wkb"},
        {"type": "int32", "optional": True, "field": "srid"},
    ],
    "name": "io.debezium.data.geometry.Point",
    "version": 1,
    "doc": "Geometry (POINT)",
}


def point(text: str) -> dict[str, Any]:
    x_text, y_text = text.strip("()").split(",")
    x, y = float(x_text), float(y_text)
    wkb = struct.pack("<BIdd", 1, 1, x, y)  # little-endian WKB POINT
    return {"x": numbers.python_float_to_java(x), "y": numbers.python_float_to_java(y),
            "wkb": base64.b64encode(wkb).decode(), "srid": None}


# -- hstore ---------------------------------------------------------------------------------------------------
_HSTORE_ITEM = re.compile(r'"((?:[^"\\]|\\.)*)"=>(?:"((?:[^"\\]|\\.)*)"|(NULL))')


def hstore_pairs(text: str) -> dict[str, str | None]:
    def unescape(s: str) -> str:
        return re.sub(r"\\(.)", r"\1", s)

    return {unescape(k): (None if null else unescape(v)) for k, v, null in _HSTORE_ITEM.findall(text)}


def hstore_json(text: str) -> str:
    """hstore.handling.mode=json: a compact JSON object with sorted keys."""
    return orjson.dumps(hstore_pairs(text), option=orjson.OPT_SORT_KEYS).decode()


def hstore_map(text: str) -> dict[str, str | None]:
    return dict(sorted(hstore_pairs(text).items()))


# -- time with time zone ---------------------------------------------------------------------------------
def timetz_utc(text: str) -> str:
    """io.debezium.time.ZonedTime: the time moved to UTC, fraction as PostgreSQL printed it, then 'Z'."""
    cut = max(text.rfind("+"), text.rfind("-"))
    local, zone = text[:cut], text[cut:]
    frac = ""
    if "." in local:
        local, frac = local.split(".", 1)
        frac = "." + frac
    us = temporal.time_us(local) - temporal._offset_seconds(zone) * 1_000_000
    secs = (us // 1_000_000) % 86_400
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    return f"{hh:02d}:{mm:02d}:{ss:02d}{frac}Z"
