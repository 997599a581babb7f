"""Connect JSON values -> Python values, driven by the Connect schema that travels with each record.

The table is keyed by the schema's logical name (then by its type); one decoder function is built per schema
and reused. Values a Python type cannot hold (Debezium's encodings of `infinity`, dates before year 1) are
returned as they are in the JSON, so nothing is lost.
"""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

Decoder = Callable[[Any], Any]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MIDNIGHT = dt.datetime(1970, 1, 1)


def _identity(v: Any) -> Any:
    return v


def _safe(fn: Callable[[Any], Any]) -> Decoder:
    def decode(v: Any) -> Any:
        if v is None:
            return None
        try:
            return fn(v)
        except (OverflowError, ValueError, TypeError, ArithmeticError):
            return v  # out of Python's range (e.g. Debezium's infinity encodings): keep the JSON value

    return decode


def _unscaled(b64: str) -> int:
    return int.from_bytes(base64.b64decode(b64), "big", signed=True)


def _exact(unscaled: int, scale: int) -> Decimal:
    """unscaled × 10^-scale with every digit kept (Decimal arithmetic would round to 28 digits)."""
    t = Decimal(unscaled).as_tuple()
    return Decimal((t.sign, t.digits, -scale))


def _decimal(schema: dict[str, Any]) -> Decoder:
    scale = int((schema.get("parameters") or {}).get("scale", 0))
    return _safe(lambda v: _exact(_unscaled(v), scale))


def _variable_decimal(v: dict[str, Any]) -> Decimal:
    return _exact(_unscaled(v["value"]), int(v["scale"]))


def _time_of_day(micros: int) -> dt.time:
    if not 0 <= micros < 86_400_000_000:  # 24:00:00 is a PostgreSQL time, not a Python one: the number stays
        raise ValueError(micros)
    return (_MIDNIGHT + dt.timedelta(microseconds=micros)).time()


def _zoned_time(v: str) -> dt.time:
    return dt.time.fromisoformat(v.replace("Z", "+00:00"))


def _zoned_timestamp(v: str) -> dt.datetime:
    return dt.datetime.fromisoformat(v.replace("Z", "+00:00"))


def _bits(v: str) -> bytes:
    return base64.b64decode(v)


_BY_NAME: dict[str, Callable[[dict[str, Any]], Decoder]] = {
    "org.apache.kafka.connect.data.Decimal": _decimal,
    "io.debezium.data.VariableScaleDecimal": lambda s: _safe(_variable_decimal),
    "io.debezium.time.Date": lambda s: _safe(lambda v: _EPOCH_DATE + dt.timedelta(days=v)),
    "org.apache.kafka.connect.data.Date": lambda s: _safe(lambda v: _EPOCH_DATE + dt.timedelta(days=v)),
    "io.debezium.time.Time": lambda s: _safe(lambda v: _time_of_day(v * 1000)),
    "org.apache.kafka.connect.data.Time": lambda s: _safe(lambda v: _time_of_day(v * 1000)),
    "io.debezium.time.MicroTime": lambda s: _safe(_time_of_day),
    "io.debezium.time.NanoTime": lambda s: _safe(lambda v: _time_of_day(v // 1000)),
    "io.debezium.time.Timestamp": lambda s: _safe(lambda v: _EPOCH + dt.timedelta(milliseconds=v)),
    "org.apache.kafka.connect.data.Timestamp": lambda s: _safe(lambda v: _EPOCH + dt.timedelta(milliseconds=v)),
    "io.debezium.time.MicroTimestamp": lambda s: _safe(lambda v: _EPOCH + dt.timedelta(microseconds=v)),
    "io.debezium.time.NanoTimestamp": lambda s: _safe(lambda v: _EPOCH + dt.timedelta(microseconds=v // 1000)),
    "io.debezium.time.ZonedTimestamp": lambda s: _safe(_zoned_timestamp),
    "io.debezium.time.ZonedTime": lambda s: _safe(_zoned_time),
    "io.debezium.time.MicroDuration": lambda s: _safe(lambda v: dt.timedelta(microseconds=v)),
    "io.debezium.data.Uuid": lambda s: _safe(uuid.UUID),
    "io.debezium.data.Bits": lambda s: _safe(_bits) if s.get("type") == "bytes" else _identity,
}


def decoder(schema: dict[str, Any] | None) -> Decoder:
    """The function that turns a JSON value of `schema` into a Python value."""
    if not schema:
        return _identity
    name = schema.get("name")
    if name in _BY_NAME:
        return _BY_NAME[name](schema)
    kind = schema.get("type")
    if kind == "bytes":  # binary.handling.mode=bytes: base64 in the JSON
        return _safe(base64.b64decode)
    if kind == "struct":
        return struct_decoder(schema)
    if kind == "array":
        item = decoder(schema.get("items"))
        if item is _identity:
            return _identity
        return lambda v: None if v is None else [item(x) for x in v]
    if kind == "map":
        key, value = decoder(schema.get("keys")), decoder(schema.get("values"))
        if key is _identity and value is _identity:
            return _identity
        return lambda v: None if v is None else {key(k): value(x) for k, x in v.items()}
    return _identity


def struct_decoder(schema: dict[str, Any]) -> Callable[[Any], dict[str, Any] | None]:
    fields = [(f["field"], decoder(f)) for f in schema.get("fields", ())]

    def decode(v: Any) -> dict[str, Any] | None:
        if v is None:
            return None
        return {name: fn(v.get(name)) for name, fn in fields}

    return decode
