"""Canonical forms for `pgcdc verify`: a table keyed by pg_type.typname from a value (PostgreSQL's, as the
verify query selects it, or the target's, as pyarrow reads it) to one form, equal exactly when both mean
the same value. Pure Python: no Spark, no database.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

Canon = Callable[[Any], Any]


class Unrepresentable(str):
    """A source value that neither Python nor Spark holds (infinite or BC dates and timestamps, years past
    9999, NaN and infinite numerics), kept as PostgreSQL's text. The target has null there."""


def _f32(v: Any) -> Any:
    return repr(struct.unpack("f", struct.pack("f", float(v)))[0])


def _f64(v: Any) -> Any:
    return repr(float(v))


def _decimal(v: Any) -> Any:
    d = Decimal(str(v))
    if not d.is_finite():  # Connect decimals carry no NaN or infinity: the event has null there
        return Unrepresentable(str(v))
    return "0" if d == 0 else str(d.normalize())


def _micros_of_day(v: Any) -> Any:
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, str):  # PostgreSQL's text (24:00:00 is a time there), or time_as="string"
        hh, mm, ss = v.split(":")
        return (int(hh) * 60 + int(mm)) * 60_000_000 + int(Decimal(ss) * 1_000_000)
    return int(v)


def _timestamptz(v: Any) -> Any:
    if isinstance(v, str):
        return v
    if v.tzinfo is None:  # a Parquet reader without the UTC flag: the instant is UTC
        v = v.replace(tzinfo=dt.UTC)
    return v.astimezone(dt.UTC).isoformat()


def _iso(v: Any) -> Any:
    return v if isinstance(v, str) else v.isoformat()


def _timetz(v: Any) -> Any:
    """time with time zone: microseconds of the day in UTC. PostgreSQL's value comes as a time with its
    offset; Debezium's io.debezium.time.ZonedTime is already in UTC ('HH:MM:SS[.f]Z')."""
    if isinstance(v, str):
        v = dt.time.fromisoformat(v.removesuffix("Z") + "+00:00")
    offset = v.utcoffset() or dt.timedelta(0)
    return (_micros_of_day(v.replace(tzinfo=None)) - offset // dt.timedelta(microseconds=1)) % 86_400_000_000


def _bits(v: Any) -> Any:
    """bit and varbit as the number they spell: PostgreSQL's '0101' text; Debezium's boolean for bit(1) and
    io.debezium.data.Bits (little-endian bytes, Java BitSet's minimal length) for the others."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        return int(v, 2) if v else 0
    return int.from_bytes(bytes(v), "little")


def _point(v: Any) -> Any:
    """point: PostgreSQL's '(x,y)' text; Debezium's io.debezium.data.geometry.Point struct (x, y, wkb)."""
    if isinstance(v, dict):
        return repr(float(v["x"])), repr(float(v["y"]))
    x, y = v.strip("()").split(",")
    return repr(float(x)), repr(float(y))


def _inet(v: Any) -> Any:
    """inet/cidr with the prefix length always written: `::text` adds '/32' where the output omits it."""
    return str(ipaddress.ip_interface(v))


def _bytes(v: Any) -> Any:
    return bytes(v).hex()


def _json(v: Any) -> Any:
    if not isinstance(v, str | bytes):
        return json.dumps(v, sort_keys=True)
    try:
        return json.dumps(json.loads(v), sort_keys=True)
    except (ValueError, RecursionError):  # text PostgreSQL's json takes and Python's parser refuses (nesting
        # deeper than its recursion limit, ...): compared as it is
        return ("json text", v if isinstance(v, str) else bytes(v).decode())


_ISO_DURATION = re.compile(r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?"
                           r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?")
_US_PER_MONTH = 2_629_800_000_000  # 30.4375 days: Debezium's MicroDuration month


def _interval_parts(v: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of an ISO-8601 duration: PostgreSQL's IntervalStyle iso_8601 output
    ('P1Y2M3DT4H5M6.78S', 'P-1DT-1S') and Debezium's interval.handling.mode=string ('P0Y0M1DT0H0M-1S')."""
    m = _ISO_DURATION.fullmatch(v)
    if m is None:
        raise ValueError(f"not an ISO-8601 duration: {v!r}")
    y, mo, w, d, h, mi, s = (x or "0" for x in m.groups())
    micros = (int(h) * 3600 + int(mi) * 60) * 1_000_000 + int(Decimal(s) * 1_000_000)
    return int(y) * 12 + int(mo), int(w) * 7 + int(d), micros


def _interval_micros(v: Any) -> Any:
    """interval.handling.mode=numeric (io.debezium.time.MicroDuration): one number of microseconds."""
    if isinstance(v, str):
        months, days, micros = _interval_parts(v)
        return months * _US_PER_MONTH + days * 86_400_000_000 + micros
    return int(v)


def _interval_text(v: Any) -> Any:
    """interval.handling.mode=string: months, days and time stay apart (1 mon is not 30 days 10:30)."""
    return _interval_parts(v)


def _ewkb(v: Any) -> Any:
    """PostGIS geometry/geography: PostgreSQL's hex EWKB text, or the target's struct(wkb, srid). Debezium
    keeps the EWKB bytes and copies out its SRID, null when the EWKB has none (flag 0x20000000)."""
    if isinstance(v, dict):
        return bytes(v["wkb"]).hex(), v.get("srid")
    raw = bytes.fromhex(v)
    order = "<" if raw[0] == 1 else ">"
    (kind,) = struct.unpack_from(order + "I", raw, 1)
    srid = struct.unpack_from(order + "i", raw, 5)[0] if kind & 0x20000000 else None
    return raw.hex(), srid


def _string_map(v: Any) -> Any:
    """hstore: PostgreSQL's hstore as JSON text, the target's JSON string (hstore.handling.mode=json) or map
    (mode map, which Arrow gives as (key, value) pairs)."""
    if isinstance(v, str | bytes):
        v = json.loads(v)
    elif isinstance(v, list):
        v = dict(v)
    return json.dumps(v, sort_keys=True)


CANON: dict[str, Canon] = {
    "float4": _f32, "float8": _f64, "numeric": _decimal, "money": _decimal,
    "time": _micros_of_day, "timestamp": _iso, "timestamptz": _timestamptz, "date": _iso, "timetz": _timetz,
    "uuid": str, "json": _json, "jsonb": _json, "bytea": _bytes, "interval": _interval_micros,
    "geometry": _ewkb, "geography": _ewkb, "hstore": _string_map, "bit": _bits, "varbit": _bits,
    "point": _point, "inet": _inet, "cidr": _inet,
}
# The canonical form when the target column is a string, where it differs from the one above.
CANON_FOR_STRING_TARGET: dict[str, Canon] = {"interval": _interval_text}
# As text in the query (psycopg would parse them into other Python types than the target holds, or not at
# all: time 24:00:00); intervals in IntervalStyle iso_8601, which keeps months, days and time apart.
AS_TEXT = frozenset({"json", "jsonb", "xml", "uuid", "time", "inet", "cidr", "macaddr", "macaddr8", "tsvector", "ltree",
                     "interval", "geometry", "geography", "int4range", "int8range", "numrange", "tsrange",
                     "tstzrange", "daterange"})
# As JSON text: hstore's own cast to json (the hstore extension defines it).
AS_JSON = frozenset({"hstore"})
# As numeric: money's text has a currency symbol and group separators that depend on lc_monetary.
AS_NUMERIC = frozenset({"money"})


_EPOCH = dt.datetime(1970, 1, 1)


def integer_temporal(typname: str, precision: int, bits: int) -> Canon | None:
    """A target's integer for a date, time or timestamp column -> the value the column's canon takes (other
    values as they are); None: no such integer. Debezium's adaptive time types are numbers under a type name
    (io.debezium.time.Date: days, Time: milliseconds in 32 bits, MicroTime: microseconds, Timestamp:
    milliseconds for timestamp(0..3), MicroTimestamp: microseconds), and a record format that keeps no type
    names (Protobuf) lands the numbers. `precision`: the column's, -1 when unspecified."""
    if typname == "date":
        def convert(v: Any) -> Any:
            return (_EPOCH + dt.timedelta(days=v)).date()
    elif typname == "time" and bits == 32:
        def convert(v: Any) -> Any:
            return v * 1000
    elif typname == "timestamp":
        unit = dt.timedelta(milliseconds=1) if 0 <= precision <= 3 else dt.timedelta(microseconds=1)

        def convert(v: Any) -> Any:
            return _EPOCH + v * unit
    else:
        return None

    def guarded(v: Any) -> Any:
        """A number Python's dates cannot hold (Debezium's sentinels of infinity, BC dates) is Unrepresentable,
        as the source's value is."""
        if type(v) is not int:
            return v
        try:
            return convert(v)
        except OverflowError:
            return Unrepresentable(str(v))
    return guarded


def _canon_for(typname: str, typtype: str, string_target: bool = False) -> Canon:
    if typname.startswith("_"):
        element = _canon_for(typname[1:], "b", string_target)
        return lambda v: [None if x is None else element(x) for x in v]
    if typtype == "e":
        return str
    if string_target and typname in CANON_FOR_STRING_TARGET:
        return CANON_FOR_STRING_TARGET[typname]
    return CANON.get(typname, lambda v: v)
