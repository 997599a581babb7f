"""Debezium's TimezoneConverter (io.debezium.transforms.TimezoneConverter, 3.6): the timestamps of `before` and
`after` moved to `converted.timezone`, as Debezium computes them.

Timestamp, MicroTimestamp, NanoTimestamp and Connect's Timestamp hold a UTC wall-clock time; Debezium reads it as
a local time in the target zone (the zone's offset at that local time) and writes the instant that local time
is there, i.e. the value minus the offset. ZonedTimestamp keeps its instant and is written with the target
zone's offset at its wall-clock time; ZonedTime with the zone's offset now. Dates and times without a zone are
left as they are. `include.list` / `exclude.list` are not supported yet. Which fields to convert is worked out
once per table version.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema
from pgcdc.transforms import schema as S

OPTIONS = ("converted.timezone", "include.list", "exclude.list")
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})(?::(\d{2}))?$")
_EPOCH = dt.datetime(1970, 1, 1)


def _zone(where: str, name: str) -> dt.tzinfo:
    m = _OFFSET.match(name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)),
                                               seconds=int(m.group(4) or 0)))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}.converted.timezone: {name!r} is neither a time zone (America/Los_Angeles) "
                          "nor a UTC offset (+08:00)") from None


def _iso_offset(seconds: int) -> str:
    if seconds == 0:
        return "Z"
    sign = "-" if seconds < 0 else "+"
    seconds = abs(seconds)
    return f"{sign}{seconds // 3600:02d}:{seconds % 3600 // 60:02d}"


def _fraction(nanos: int) -> str:
    return "" if not nanos else "." + f"{nanos:09d}".rstrip("0")


class TimezoneConverter:
    def __init__(self, where: str, opts: Mapping[str, str]) -> None:
        name = opts.get("converted.timezone", "").strip()
        if not name:
            raise ConfigError(f"{where}.converted.timezone: required")
        self.zone = _zone(where, name)
        for option in ("include.list", "exclude.list"):
            if opts.get(option, "").strip():
                raise ConfigError(f"{where}.{option}: not supported by pgcdc yet")
        self._plans: dict[int, tuple[Schema, list[tuple[str, list[tuple[str, Callable[[Any], Any]]]]]]] = {}

    def _offset(self, local: dt.datetime) -> int:
        off = local.replace(tzinfo=self.zone).utcoffset()
        assert off is not None
        return int(off.total_seconds())

    def _epoch(self, per_second: int) -> Callable[[Any], Any]:
        def conv(v: Any) -> Any:
            v = int(v)
            local = _EPOCH + dt.timedelta(microseconds=v * 1_000_000 // per_second)
            return v - self._offset(local) * per_second
        return conv

    def _zoned(self, v: Any) -> Any:
        t = dt.datetime.fromisoformat(str(v).replace("Z", "+00:00"))
        nanos = t.microsecond * 1000
        offset = self._offset(t.replace(tzinfo=None))
        out = t.astimezone(dt.timezone(dt.timedelta(seconds=offset)))
        return out.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(nanos) + _iso_offset(offset)

    def _zoned_time(self, v: Any) -> Any:
        text = str(v).replace("Z", "+00:00")
        t = dt.datetime.fromisoformat("1970-01-01T" + text)
        now = dt.datetime.now(self.zone).utcoffset()  # ZoneRules.getOffset(Instant.now())
        offset = int(now.total_seconds()) if now is not None else 0
        out = t.astimezone(dt.timezone(dt.timedelta(seconds=offset)))
        return out.strftime("%H:%M:%S") + _fraction(t.microsecond * 1000) + _iso_offset(offset)

    def _converter(self, name: str | None) -> Callable[[Any], Any] | None:
        return {"io.debezium.time.Timestamp": self._epoch(1_000),
                "org.apache.kafka.connect.data.Timestamp": self._epoch(1_000),
                "io.debezium.time.MicroTimestamp": self._epoch(1_000_000),
                "io.debezium.time.NanoTimestamp": self._epoch(1_000_000_000),
                "io.debezium.time.ZonedTimestamp": self._zoned,
                "io.debezium.time.ZonedTime": self._zoned_time}.get(name or "")

    def _plan(self, vs: Schema) -> list[tuple[str, list[tuple[str, Callable[[Any], Any]]]]]:
        hit = self._plans.get(id(vs))
        if hit is None or hit[0] is not vs:
            plan = []
            for side in ("before", "after"):
                row = S.field(vs, side)
                convs = [(f["field"], c) for f in (S.fields(S.unfield(row)) if row else [])
                         if (c := self._converter(f.get("name"))) is not None]
                if convs:
                    plan.append((side, convs))
            hit = self._plans[id(vs)] = (vs, plan)
        return hit[1]

    def __call__(self, r: Record) -> Record:
        vs = r.value_schema
        if r.value is None or vs is None or not str(vs.get("name", "")).endswith(".Envelope") \
                or not isinstance(r.value, dict):
            return r
        plan = self._plan(vs)
        if not plan:
            return r
        value = dict(r.value)
        for side, convs in plan:
            row = value.get(side)
            if row is None:
                continue
            row = dict(row)
            for name, conv in convs:
                if row.get(name) is not None:
                    row[name] = conv(row[name])
            value[side] = row
        return r.new(value=value)
