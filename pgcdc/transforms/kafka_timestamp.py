"""Kafka Connect's TimestampConverter$Key/$Value (org.apache.kafka.connect.transforms.TimestampConverter, 4.x): a
field (or the whole key/value) converted between unix time, Connect's Timestamp/Date/Time and a formatted string.

The input type is read from the schema as Kafka Connect reads it: Connect's logical Timestamp, Date and Time by
name, any other int64 as unix time in `unix.precision` (so Debezium's MicroTimestamp is unix time, read in
milliseconds unless unix.precision says otherwise), a string as text in `format`. Everything goes through
milliseconds since the epoch in UTC, as java.util.Date does; a string is parsed as SimpleDateFormat.parse does
(kafka_time_parse.py) and formatted as SimpleDateFormat.format does (kafka_time.py), both through
GregorianCalendar (java_calendar.py: Julian before 1582-10-15, eras, years far beyond 9999).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.envelope.connect import ordered
from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema, Transform
from pgcdc.transforms import schema as S
from pgcdc.transforms.kafka_time import simple_date_format
from pgcdc.transforms.kafka_time_parse import ParseError, simple_date_parser

_DAY = 86_400_000
_CONNECT = "org.apache.kafka.connect.data."
TYPES = ("string", "unix", "Date", "Time", "Timestamp")
_UNIX = {"seconds": 1_000, "milliseconds": 1, "microseconds": -1_000, "nanoseconds": -1_000_000}
OPTIONS = ("target.type", "field", "format", "unix.precision", "replace.null.with.default")


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _saturated(v: int) -> int:
    """TimeUnit's conversions to a finer unit stop at Long.MIN_VALUE/MAX_VALUE instead of overflowing."""
    return _LONG_MIN if v < _LONG_MIN else _LONG_MAX if v > _LONG_MAX else v


def _java_date(millis: int) -> int:
    """A Date target's day count: Calendar sets the time of day to midnight (which before Long.MIN_VALUE wraps
    round, and then is no midnight: Date.fromLogical refuses it), Date.fromLogical `(int)`s the days."""
    midnight = (millis // _DAY * _DAY + 2**63) % 2**64 - 2**63
    if midnight % _DAY:
        raise ValueError("Kafka Connect Date type should not have any time fields set to non-zero values.")
    return (_java_div(midnight, _DAY) + 2**31) % 2**32 - 2**31


def _java_div(a: int, b: int) -> int:
    """Java's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class _Converter:
    def __init__(self, where: str, opts: Mapping[str, str]) -> None:
        target = opts.get("target.type", "").strip()
        if target not in TYPES:
            raise ConfigError(f"{where}.target.type: expected one of {', '.join(TYPES)} (got {target!r})")
        self.target = target
        self.format = opts.get("format", "")
        if target == "string" and not self.format.strip():
            raise ConfigError(f"{where}.format: required with target.type=string (a SimpleDateFormat pattern)")
        self.fmt: Callable[[int], str] | None = None
        if self.format.strip():
            try:
                self.fmt = simple_date_format(self.format)
            except ValueError as exc:
                raise ConfigError(f"{where}.format: {exc}") from None
        precision = opts.get("unix.precision", "milliseconds").strip()
        if precision not in _UNIX:
            raise ConfigError(f"{where}.unix.precision: expected one of {', '.join(_UNIX)} (got {precision!r})")
        self.unit = _UNIX[precision]

    def reader(self, schema: Schema | None, value: Any) -> Callable[[Any], int]:
        """Milliseconds since the epoch from a value of `schema` (or, schemaless, of the value's type)."""
        name = schema.get("name") if schema is not None else None
        kind = schema.get("type") if schema is not None else ("string" if isinstance(value, str) else "int64")
        if name == _CONNECT + "Timestamp":
            return int
        if name == _CONNECT + "Date":
            return lambda v: int(v) * _DAY
        if name == _CONNECT + "Time":
            return int
        if kind == "int64":
            u = self.unit
            return (lambda v: _saturated(int(v) * u)) if u > 0 else (lambda v: _java_div(int(v), -u))
        if kind == "string":
            return self._parser()
        raise ValueError(f"Schema {schema} does not correspond to a known timestamp type format")

    def _parser(self) -> Callable[[Any], int]:
        """SimpleDateFormat.parse of `format` (kafka_time_parse.py), failing a record as Kafka Connect does."""
        pattern = self.format
        if not pattern.strip():
            raise ValueError("TimestampConverter requires format option to be specified when using string "
                             "timestamps")
        parse = simple_date_parser(pattern)  # a letter pgcdc cannot parse with: ValueError, naming it

        def read(v: Any) -> int:
            try:
                return parse(str(v))
            except ParseError:
                raise ValueError(f"Could not parse timestamp: value ({v}) does not match pattern ({pattern})") \
                    from None
        return read

    def schema(self, optional: bool) -> Schema:
        out: dict[str, Any] = {"type": "string" if self.target == "string" else
                               "int32" if self.target in ("Date", "Time") else "int64", "optional": optional}
        if self.target not in ("string", "unix"):
            out.update(name=_CONNECT + self.target, version=1)
        return ordered(out)

    def write(self, millis: int) -> Any:
        if self.target == "Timestamp":
            return millis
        if self.target == "Date":
            return _java_date(millis)
        if self.target == "Time":
            return millis % _DAY
        if self.target == "unix":
            return _java_div(millis, self.unit) if self.unit > 0 else _saturated(millis * -self.unit)
        assert self.fmt is not None
        return self.fmt(millis)


def timestamp_converter(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        conv = _Converter(where, opts)
        field = opts.get("field", "")
        cache: dict[int, tuple[Schema, Schema, Callable[[Any], int]]] = {}

        def apply(r: Record) -> Record:
            schema, value = (r.key_schema, r.key) if key else (r.value_schema, r.value)
            if not field:
                if value is None:
                    out_schema, out = (conv.schema(True) if schema is not None else None), None
                else:
                    out_schema = conv.schema(bool(schema.get("optional"))) if schema is not None else None
                    out = conv.write(conv.reader(schema, value)(value))
            elif value is None:
                return r
            elif schema is None:
                if not isinstance(value, dict):
                    raise ValueError("Only Map objects supported in absence of schema for [converting timestamp "
                                     f"formats], found: {type(value).__name__}")
                v = value.get(field)
                out_schema, out = None, {**value, field: None if v is None else conv.write(conv.reader(None, v)(v))}
            else:
                hit = cache.get(id(schema))
                if hit is None or hit[0] is not schema:
                    f = S.field(schema, field)
                    if f is None:
                        raise ValueError(f"{field} is not a valid field name")
                    fields = [S.as_field(x["field"], conv.schema(bool(x.get("optional")))) if x["field"] == field
                              else x for x in S.fields(schema)]
                    hit = cache[id(schema)] = (schema, S.copy_basics(schema, fields),
                                               conv.reader(S.unfield(f), value.get(field)))
                v = value.get(field)
                out_schema, out = hit[1], {**value, field: None if v is None else conv.write(hit[2](v))}
            if key:
                return r.new(key_schema=out_schema, key=out)
            return r.new(value_schema=out_schema, value=out)
        return apply
    return make
