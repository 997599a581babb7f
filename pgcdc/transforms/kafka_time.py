"""Kafka Connect's TimestampRouter (org.apache.kafka.connect.transforms.TimestampRouter, 4.x): the topic from
`topic.format` with `${topic}` and `${timestamp}` (the record timestamp in `timestamp.format`, a
java.text.SimpleDateFormat pattern, in UTC). Debezium's change events carry no record timestamp, so there it
fails the record as Kafka Connect does ("Timestamp missing on record"); the outbox EventRouter sets one.

The pattern is compiled once into a list of per-field formatters; each distinct timestamp's text is not cached
(timestamps change per record), the topic text per (topic, timestamp text) is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Transform
from pgcdc.transforms.java_calendar import Fields, fields, day_of_week_in_month, week_of_month, week_of_year, week_year

Part = Callable[[Fields], str]
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_ERAS = ("BC", "AD")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_TOKEN = re.compile(r"'([^']*)'|([A-Za-z])\2*|[^'A-Za-z]+")


def _number(get: Callable[[Fields], int], width: int) -> Part:
    return lambda t: str(get(t)).zfill(width)


def _week_year(n: int) -> Part:
    """`Y`: the week year, proleptic (1 BC is 0, 44 BC -43); DecimalFormat puts the sign before the zero padding,
    and two letters keep the last two digits."""
    def part(t: Fields) -> str:
        y = week_year(t)
        return ("-" if y < 0 else "") + str(abs(y) % 100 if n == 2 else abs(y)).zfill(n)
    return part


def _letter(ch: str, n: int) -> Part:
    """One SimpleDateFormat field: the letter and how many times it repeats."""
    if ch == "y":  # the year of its era: 1 BC is 1
        return (lambda t: str(t.year % 100).zfill(2)) if n == 2 else _number(lambda t: t.year, n)
    if ch == "Y":
        return _week_year(n)
    if ch == "G":
        return lambda t: _ERAS[t.era]
    if ch in "ML":  # L, the stand-alone month, has the same names in English
        if n >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if n == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return _number(lambda t: t.month, n)
    if ch == "E":
        return (lambda t: _DAYS[t.weekday]) if n >= 4 else (lambda t: _DAYS[t.weekday][:3])
    if ch == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if ch == "S":  # milliseconds as a number, zero-padded to the letter count
        return _number(lambda t: t.milli, n)
    if ch in ("Z", "X"):
        return lambda t: "Z" if ch == "X" else "+0000"
    if ch == "z":
        return lambda t: "UTC"
    numbers: dict[str, Callable[[Fields], int]] = {
        "d": lambda t: t.day, "H": lambda t: t.hour, "k": lambda t: t.hour or 24, "K": lambda t: t.hour % 12,
        "h": lambda t: t.hour % 12 or 12, "m": lambda t: t.minute, "s": lambda t: t.second,
        "D": lambda t: t.day_of_year, "u": lambda t: t.weekday + 1, "w": week_of_year, "W": week_of_month,
        "F": day_of_week_in_month,
    }
    if ch not in numbers:
        raise ValueError(f"Illegal pattern character '{ch}'")
    return _number(numbers[ch], n)


def _literal(text: str) -> Part:
    return lambda t: text


def simple_date_format(pattern: str) -> Callable[[int], str]:
    """A formatter of epoch milliseconds, in UTC, for a SimpleDateFormat pattern (GregorianCalendar's fields:
    java_calendar.py)."""
    parts: list[Part] = []
    for m in _TOKEN.finditer(pattern):
        if m.group(1) is not None:
            parts.append(_literal(m.group(1) or "'"))  # '' is a quote
        elif m.group(2) is not None:
            parts.append(_letter(m.group(2), len(m.group(0))))
        else:
            parts.append(_literal(m.group(0)))

    def fmt(millis: int) -> str:
        t = fields(millis)
        return "".join(p(t) for p in parts)
    return fmt


def timestamp_router(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    topic_format = opts.get("topic.format", "${topic}-${timestamp}")
    try:
        fmt = simple_date_format(opts.get("timestamp.format", "yyyyMMdd"))
    except ValueError as exc:
        raise ConfigError(f"{where}.timestamp.format: {exc}") from None

    def apply(r: Record) -> Record:
        if r.timestamp is None:
            raise ValueError(f"Timestamp missing on record: {r}")
        return r.new(topic=topic_format.replace("${topic}", r.topic).replace("${timestamp}", fmt(r.timestamp)))
    return apply
