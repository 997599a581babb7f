"""Connect values as the text Java makes of them, from a Connect schema (JsonConverter's JSON form) and a value
in JsonConverter's JSON form.

Two renderings, each compiled once per schema into nested closures:
- `to_string`: `String.valueOf(value)`, what StringConverter writes: `Struct.toString()` (`Struct{a=1,b=x}`,
  null fields left out, defaults not applied), `AbstractCollection`/`AbstractMap.toString()` (`[a, b]`,
  `{k=v, k2=v2}`), BigDecimal.toString, Double/Float.toString, `java.util.Date.toString()` for Connect's
  Date/Time/Timestamp, `java.nio.HeapByteBuffer[pos=0 lim=N cap=N]` for the values Debezium hands over as a
  ByteBuffer and `[B@<identity hash>` for those it hands over as a byte[] (Object.toString: an identity hash,
  which no two JVM runs share either).
- `header_text`: Kafka's `Values.convertToString`, what SimpleHeaderConverter writes: JSON-like text of
  structs (`{"a":1,"b":null}`, Struct.get, so defaults apply), lists, maps, base64 bytes and ISO dates
  (measured against Kafka Connect 4.3 and Debezium 3.6.3; the layout is Values.append's).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pgcdc.pgtypes.numbers import java_double_text
from pgcdc.transforms.java_calendar import fields as calendar_fields

Render = Callable[[Any], str]

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
# Struct schemas whose bytes field Debezium fills with a byte[] (a ByteBuffer everywhere else: bytea values,
# arrays of them, logical-decoding message content), and a bytes schema that is a byte[] itself (measured).
_BYTE_ARRAY_STRUCTS = frozenset({"io.debezium.data.VariableScaleDecimal", "io.debezium.data.geometry.Point",
                                 "io.debezium.data.geometry.Geometry", "io.debezium.data.geometry.Geography"})
BYTE_ARRAY_NAMES = frozenset({"io.debezium.data.Bits"})
_MS_PER_DAY = 86_400_000
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# java.util.Date counts in the Julian calendar before the Gregorian cutover (1582-10-15).


def java_double(v: Any) -> str:
    """Double.toString / Float.toString of a JSON number JsonConverter wrote (NaN and infinities are the
    strings Java prints); the digits are the JSON's, laid out as Java does."""
    if isinstance(v, str):
        return v
    return java_double_text(repr(float(v)))


def big_decimal(b64: str, scale: int) -> str:
    """BigDecimal.toString of a Connect decimal: Python's Decimal and Java's BigDecimal follow the same
    to-scientific-string rule (`1E-10`, `0.00`, `1.5E+21`)."""
    unscaled = int.from_bytes(base64.b64decode(b64), "big", signed=True)
    return str(Decimal((0 if unscaled >= 0 else 1, tuple(map(int, str(abs(unscaled)))), -scale)))


def java_date(ms: int) -> str:
    """java.util.Date.toString() in a JVM whose default time zone is UTC: `Sun Jul 20 00:00:00 UTC 1969`. A
    year before 1 is printed as its year of era, as Java does (Julian calendar before 1582-10-15)."""
    f = calendar_fields(ms)
    return (f"{_DAYS[(f.days + 3) % 7]} {_MONTHS[f.month - 1]} {f.day:02d} {f.hour:02d}:{f.minute:02d}:"
            f"{f.second:02d} UTC {f.year}")


def _identity(data: bytes) -> str:
    # Object.toString of a byte[]: `[B@` and an identity hash, a number no one can reproduce (a JVM draws it
    # per object); pgcdc writes one derived from the bytes.
    return f"[B@{zlib.crc32(data) & 0x7FFFFFFF:x}"


def _logical_ms(name: str | None) -> Callable[[int], int] | None:
    return {DATE: lambda d: d * _MS_PER_DAY, TIME: lambda t: t, TIMESTAMP: lambda t: t}.get(name or "")


def to_string(schema: dict[str, Any] | None, parent: str | None = None) -> Render:
    """String.valueOf of a value of this schema (`parent`: the name of the struct holding it)."""
    if schema is None:
        return _schemaless_string
    kind, name = schema["type"], schema.get("name")
    if name == DECIMAL:
        scale = int(schema.get("parameters", {}).get("scale", 0))
        return lambda v: big_decimal(v, scale)
    to_ms = _logical_ms(name)
    if to_ms is not None:
        return lambda v: java_date(to_ms(v))
    if kind == "struct":
        fields = [(f["field"], to_string(f, name)) for f in schema["fields"]]

        def struct(v: dict[str, Any]) -> str:
            return "Struct{" + ",".join(f"{n}={r(x)}" for n, r in fields if (x := v.get(n)) is not None) + "}"
        return struct
    if kind == "array":
        item = _nullable(to_string(schema["items"], parent))
        return lambda v: "[" + ", ".join(map(item, v)) + "]"
    if kind == "map":
        key, value = _nullable(to_string(schema["keys"])), _nullable(to_string(schema["values"]))
        return lambda v: "{" + ", ".join(f"{key(k)}={value(x)}" for k, x in _entries(v)) + "}"
    if kind in ("float", "double"):
        return java_double
    if kind == "boolean":
        return lambda v: "true" if v else "false"
    if kind == "bytes":
        if name in BYTE_ARRAY_NAMES or parent in _BYTE_ARRAY_STRUCTS:
            return lambda v: _identity(base64.b64decode(v))
        return _byte_buffer
    if kind == "string":
        return str
    return str  # int8 … int64


def _byte_buffer(v: str) -> str:
    n = len(base64.b64decode(v))
    return f"java.nio.HeapByteBuffer[pos=0 lim={n} cap={n}]"


def _nullable(render: Render) -> Render:
    return lambda v: "null" if v is None else render(v)


def _entries(v: Any) -> Any:
    # A map with non-string keys comes as a list of [key, value] pairs in JsonConverter's JSON.
    return v.items() if isinstance(v, dict) else v


def _schemaless_string(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double(v)
    if isinstance(v, list):
        return "[" + ", ".join(map(_schemaless_string, v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={_schemaless_string(x)}" for k, x in v.items()) + "}"
    return str(v)


def _quoted(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _iso(ms: int) -> str:
    """Values.dateFormatFor: a time of day below one day's millis (so every instant before 1970 too), a date at
    midnight, else a timestamp, all in UTC."""
    rest = ms % _MS_PER_DAY
    secs, milli = divmod(rest, 1000)
    clock = f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{milli:03d}Z"
    if ms < _MS_PER_DAY:
        return clock
    f = calendar_fields(ms)  # after 1970-01-02 here: the year of era is the year
    date = f"{f.year:04d}-{f.month:02d}-{f.day:02d}"
    return date if rest == 0 else f"{date}T{clock}"


def header_text(schema: dict[str, Any] | None, embedded: bool = False) -> Render:
    """Values.convertToString of a value of this schema (`embedded`: inside a struct, list or map, where
    strings and bytes are quoted)."""
    if schema is None:
        return lambda v: _schemaless_header(v, embedded)
    kind, name = schema["type"], schema.get("name")
    if name == DECIMAL:
        scale = int(schema.get("parameters", {}).get("scale", 0))
        return lambda v: big_decimal(v, scale)
    to_ms = _logical_ms(name)
    if to_ms is not None:
        return lambda v: _iso(to_ms(v))
    if kind == "struct":
        # Struct.get: a null field with a default is its default (the JSON has it so when the envelope
        # replaces nulls), a null field without one is `null`.
        fields = [(_quoted(f["field"]), f["field"], _nullable(header_text(f, True)), f.get("default"))
                  for f in schema["fields"]]

        def struct(v: dict[str, Any]) -> str:
            return "{" + ",".join(
                f"{q}:{r(d if (x := v.get(n)) is None else x)}" for q, n, r, d in fields) + "}"
        return struct
    if kind == "array":
        item = _nullable(header_text(schema["items"], True))
        return lambda v: "[" + ",".join(map(item, v)) + "]"
    if kind == "map":
        key, value = _nullable(header_text(schema["keys"], True)), _nullable(header_text(schema["values"], True))
        return lambda v: "{" + ",".join(f"{key(k)}:{value(x)}" for k, x in _entries(v)) + "}"
    if kind in ("float", "double"):
        return java_double
    if kind == "boolean":
        return lambda v: "true" if v else "false"
    if kind == "string" or kind == "bytes":  # bytes: base64, as in the JSON already
        return _quoted if embedded else str
    return str


def _schemaless_header(v: Any, embedded: bool) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double(v)
    if isinstance(v, str):
        return _quoted(v) if embedded else v
    if isinstance(v, list):
        return "[" + ",".join(_schemaless_header(x, True) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{_quoted(k)}:{_schemaless_header(x, True)}" for k, x in v.items()) + "}"
    return str(v)
