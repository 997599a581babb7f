"""Debezium's TimezoneConverter (io.debezium.transforms.TimezoneConverter, 3.6): the timestamps of `before` and
`after` moved to `converted.timezone`, as Debezium computes them.

Timestamp, MicroTimestamp, NanoTimestamp and Connect's Timestamp hold a UTC wall-clock time; Debezium reads it as
a local time in the target zone (the zone's offset at that local time) and writes the instant that local time
is there, i.e. the value minus the offset. ZonedTimestamp keeps its instant and is written with the target
zone's offset at its wall-clock time; ZonedTime with the zone's offset now. Dates and times without a zone are
left as they are. `include.list` / `exclude.list` select records by topic or `source.table`
(`source:<table>[:<field>]`, `topic:<topic>[:<field>]`, `<name>:<field>`; a prefix carries over to the items
after it, as in Debezium) and fields (`after.x`, `before.x`, or `x` for both). Which fields to convert is worked
out once per table version, topic and table.
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
_PART = re.compile(r'^[".\w\s]+$')
Rules = tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]]]  # by topic, by table, unprefixed


def _rules(where: str, option: str, value: str) -> Rules:
    """TimezoneConverter.collectTablesAndTopics, with its LIST_PATTERN validation per item."""
    topics: dict[str, set[str]] = {}
    tables: dict[str, set[str]] = {}
    plain: dict[str, set[str]] = {}
    prefix: str | None = None
    for item in (x.strip() for x in value.split(",")):
        parts = item.split(":")
        if not 2 <= len(parts) <= 3 or not all(_PART.match(p) for p in parts):
            raise ConfigError(f"{where}.{option}: invalid format {item!r} (rules are source:<table>[:<field>], "
                              "topic:<topic>[:<field>] or <name>:<field>)")
        field: str | None
        if parts[0].lower() in ("source", "topic"):
            prefix, name, field = parts[0], parts[1], parts[2] if len(parts) == 3 else None
        else:
            name, field = parts[0], parts[1]
        target = topics if prefix == "topic" else tables if prefix == "source" else plain
        target.setdefault(name, set())
        if field is not None:
            target[name].add(field)
    return topics, tables, plain


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
        include, exclude = opts.get("include.list", "").strip(), opts.get("exclude.list", "").strip()
        if include and exclude:
            raise ConfigError(f"{where}.exclude.list: set either include.list or exclude.list")
        self.include = bool(include)
        self.rules: Rules = _rules(where, "include.list" if include else "exclude.list", include or exclude) \
            if include or exclude else ({}, {}, {})
        self.listed = bool(include or exclude)
        self._plans: dict[tuple[int, str, Any], tuple[Schema, list[tuple[str, list[tuple[str, Any]]]]]] = {}

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

    def _selection(self, topic: str, table: Any) -> tuple[str, set[str]] | None:
        """("all" | "include" | "exclude", fields) for a record, or None to leave it (handleInclude/Exclude)."""
        topics, tables, plain = self.rules
        if not self.listed:
            return "all", set()
        fields: set[str] | None = topics.get(topic)
        if fields is None:
            fields = tables.get(table) if table in tables else plain.get(topic, plain.get(table))
        if self.include:
            return None if fields is None else ("include", fields) if fields else ("all", set())
        if fields is None:
            return "all", set()
        return ("exclude", fields) if fields else None

    def _plan(self, vs: Schema, topic: str, table: Any) -> list[tuple[str, list[tuple[str, Any]]]]:
        key = (id(vs), topic, table)
        hit = self._plans.get(key)
        if hit is None or hit[0] is not vs:
            plan: list[tuple[str, list[tuple[str, Any]]]] = []
            selection = self._selection(topic, table)
            if selection is not None:
                kind, listed = selection
                per_side: dict[str, set[str]] = {"before": set(), "after": set(), "source": set()}
                for f in listed:
                    side, dot, rest = f.partition(".")
                    if dot and side in per_side:
                        per_side[side].add(rest)
                    else:
                        per_side["before"].add(f)
                        per_side["after"].add(f)
                for side in ("before", "after", "source"):
                    if side == "source" and not per_side["source"]:
                        continue
                    row = S.field(vs, side)
                    convs = [(f["field"], c) for f in (S.fields(S.unfield(row)) if row else [])
                             if (c := self._converter(f.get("name"))) is not None and
                             (kind == "all" or (f["field"] in per_side[side]) == (kind == "include"))]
                    if convs:
                        plan.append((side, convs))
            hit = self._plans[key] = (vs, plan)
        return hit[1]

    def __call__(self, r: Record) -> Record:
        vs = r.value_schema
        if r.value is None or vs is None or not str(vs.get("name", "")).endswith(".Envelope") \
                or not isinstance(r.value, dict):
            return r
        source = r.value.get("source")
        plan = self._plan(vs, r.topic, source.get("table") if isinstance(source, dict) else None)
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
