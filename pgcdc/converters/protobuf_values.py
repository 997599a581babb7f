"""Values in JsonConverter's JSON form -> the fields of a Protobuf message, as Confluent 7.0.16's
ProtobufData.fromConnectData sets them: nulls and empty arrays left unset (proto3 then writes nothing for a zero or
empty value either), a struct set even when all its fields are at their defaults, Connect's Decimal as
confluent.type.Decimal with BigDecimal's precision, Date/Time/Timestamp as Java's calendar splits them; a
wrapper-typed field (wrapper.for.nullables) set to a wrapper holding the value, and a proto3 `optional` field
(optional.for.nullables) set even to zero or empty, so both write a present field for every non-null value. A null
array element and a non-empty array of maps fail, as they fail Confluent's converter.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from pgcdc.converters.protobuf_schema import DECIMAL, LOGICAL, WRAPPERS

Names = Callable[[str], str]  # a Connect field name -> the Protobuf field's (scrub.invalid.names)
_WRAPPER_NAMES = frozenset(WRAPPERS.values())


class NullElement(ValueError):
    pass


def _float(v: Any) -> float:
    return float(v)  # "NaN", "Infinity", "-Infinity" are JSON strings in JsonConverter's form


def _bytes(v: Any) -> bytes:
    return base64.b64decode(v)


_SCALAR_VALUE: dict[str, Callable[[Any], Any] | None] = {
    "float": _float, "double": _float, "bytes": _bytes}

_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # google.protobuf.Timestamp's range (Timestamps.checkValid)
_GREGORIAN_START_DAY = -141427  # 1582-10-15: java.util.GregorianCalendar's default cutover


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The year, month and day java.util.GregorianCalendar (UTC) gives for a day count: Julian before the
    1582 cutover, and the year of its era (1 BC is year 1)."""
    jdn = days + 2440588
    if days >= _GREGORIAN_START_DAY:
        a = jdn + 32044
        b = (4 * a + 3) // 146097
        c = a - 146097 * b // 4
    else:
        b = 0
        c = jdn + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = 100 * b + d - 4800 + m // 10
    return (year if year > 0 else 1 - year), month, day


def _set_date(msg: Any, days: int) -> None:
    msg.year, msg.month, msg.day = civil_from_days(days)


def _set_time(msg: Any, ms: int) -> None:
    if ms < 0 or ms > 86_400_000:
        raise ValueError("Time values must use number of millis greater than 0 and less than 86400000")
    msg.hours, rest = (ms // 3_600_000) % 24, ms % 3_600_000
    msg.minutes, rest = rest // 60_000, rest % 60_000
    msg.seconds, msg.nanos = rest // 1000, (rest % 1000) * 1_000_000


def _set_timestamp(msg: Any, ms: int) -> None:
    seconds, millis = divmod(ms, 1000)
    if not _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        raise ValueError(f"Timestamp is not valid: {ms} ms")
    msg.seconds, msg.nanos = seconds, millis * 1_000_000


def _decimal_setter(scale: int) -> Callable[[Any, Any], None]:
    def set_decimal(msg: Any, v: Any) -> None:
        raw = base64.b64decode(v)
        unscaled = int.from_bytes(raw, "big", signed=True)
        msg.value, msg.precision, msg.scale = raw, len(str(abs(unscaled))), scale  # BigDecimal.precision()
    return set_decimal


def _wrapper_setter(t: str) -> Callable[[Any, Any], None]:
    conv = _SCALAR_VALUE.get(t)
    if conv is None:
        return lambda msg, v: setattr(msg, "value", v)
    return lambda msg, v: setattr(msg, "value", conv(v))


def _message_setter(s: dict[str, Any], desc: Any, names: Names) -> Callable[[Any, Any], None]:
    """Fills a message of descriptor `desc` (a struct, a map entry, a logical type or a wrapper) from a value of
    `s`."""
    if desc.full_name in _WRAPPER_NAMES:
        return _wrapper_setter(s["type"])
    name = s.get("name")
    if name == DECIMAL:
        return _decimal_setter(int((s.get("parameters") or {}).get("scale", 0)))
    if name in LOGICAL:
        return {"google.type.Date": _set_date, "google.type.TimeOfDay": _set_time,
                "google.protobuf.Timestamp": _set_timestamp}[LOGICAL[name]]
    return filler(s, desc, names)


def _field_setter(s: dict[str, Any], fd: Any, names: Names) -> Callable[[Any, Any], None]:
    """(message, value) -> None for a non-null value of field schema `s` and field descriptor `fd`."""
    attr = fd.name
    t = s["type"]
    if t == "array":
        items = s["items"]
        if items["type"] == "map":  # ProtobufData hands the runtime a list of lists: IllegalArgumentException
            def refuse(msg: Any, v: Any) -> None:
                raise ValueError(f"field {attr}: an array of maps (Confluent's converter fails on it)")
            return refuse
        if fd.message_type is not None:
            sub = _message_setter(items, fd.message_type, names)

            def add_messages(msg: Any, v: Any) -> None:
                if None in v:
                    raise NullElement(f"field {attr}: a null array element (Confluent's converter fails on it)")
                container = getattr(msg, attr)
                for x in v:
                    sub(container.add(), x)
            return add_messages
        conv = _SCALAR_VALUE.get(items["type"])

        def extend(msg: Any, v: Any) -> None:
            if None in v:
                raise NullElement(f"field {attr}: a null array element (Confluent's converter fails on it)")
            getattr(msg, attr).extend(v if conv is None else [conv(x) for x in v])
        return extend
    if t == "map":
        entry = fd.message_type
        key = _field_setter(s["keys"], entry.fields_by_name["key"], names)
        value = _field_setter(s["values"], entry.fields_by_name["value"], names)
        string_keys = s["keys"]["type"] == "string" and not s["keys"].get("optional", False)

        def add_entries(msg: Any, v: Any) -> None:
            container = getattr(msg, attr)
            for k, x in (v.items() if string_keys else v):
                e = container.add()
                if k is not None:
                    key(e, k)
                if x is not None:
                    value(e, x)
        return add_entries
    if fd.message_type is not None:
        sub = _message_setter(s, fd.message_type, names)

        def set_message(msg: Any, v: Any) -> None:
            child = getattr(msg, attr)
            child.SetInParent()  # present even when every field is at its default (a wrapper of 0 too), as Java's
            # builder sets it
            sub(child, v)
        return set_message
    conv = _SCALAR_VALUE.get(t)
    if conv is None:
        return lambda msg, v: setattr(msg, attr, v)
    return lambda msg, v: setattr(msg, attr, conv(v))


def _same(name: str) -> str:
    return name


def filler(s: dict[str, Any], desc: Any, names: Names = _same) -> Callable[[Any, Any], None]:
    work = [(f["field"], _field_setter(f, desc.fields_by_name[names(f["field"])], names)) for f in s["fields"]]

    def fill(msg: Any, value: Any) -> None:
        for name, setter in work:
            v = value.get(name)
            if v is not None and v != []:  # ProtobufData leaves an empty list unset
                setter(msg, v)
    return fill

