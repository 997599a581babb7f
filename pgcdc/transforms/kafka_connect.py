"""Kafka Connect's own transforms (org.apache.kafka.connect.transforms, connect-transforms 4.x) that pgcdc has."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.envelope.connect import ordered
from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema, Transform
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec

_JAVA_GROUP = re.compile(r"\\(.)|\$(\d)|\$\{(\w+)\}|([\\])")


def java_replacement(text: str) -> str:
    """Matcher.replaceFirst's replacement syntax (`$1`, `${name}`, `\\$`) in Python's re.sub syntax."""
    def sub(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(1).replace("\\", "\\\\")
        if m.group(2) is not None:
            return f"\\g<{m.group(2)}>"
        if m.group(3) is not None:
            return f"\\g<{m.group(3)}>"
        return "\\\\"
    return _JAVA_GROUP.sub(sub, text)


def _required(where: str, opts: Mapping[str, str], name: str, what: str) -> str:
    value = opts.get(name)
    if value is None or value == "":
        raise ConfigError(f"{where}.{name}: required ({what})")
    return value


def _list(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def regex_router(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    pattern = _required(where, opts, "regex", "a Java regular expression matched against the whole topic")
    replacement = opts.get("replacement")
    if replacement is None:
        raise ConfigError(f"{where}.replacement: required (the new topic, $1... for the regex's groups)")
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{where}.regex: not a valid regular expression {pattern!r}: {exc}") from None
    repl = java_replacement(replacement)

    def apply(r: Record) -> Record:
        if rx.fullmatch(r.topic) is None:
            return r
        return r.new(topic=rx.sub(repl, r.topic, count=1))
    return apply


def filter_(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    return lambda r: None


def drop_headers(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    names = frozenset(_list(_required(where, opts, "headers", "a list of header names")))
    return lambda r: r.new(headers=tuple(h for h in r.headers if h[0] not in names))


_DATE_LIKE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2})")


def insert_header(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    name = _required(where, opts, "header", "the header's name")
    if "value.literal" not in opts:
        raise ConfigError(f"{where}.value.literal: required (the header's value)")
    literal = opts["value.literal"]
    # Values.parseString infers a schema from the text; pgcdc has the string, boolean and integer cases.
    schema: Schema
    value: Any
    if literal.strip().lower() in ("true", "false"):
        schema, value = {"type": "boolean", "optional": False}, literal.strip().lower() == "true"
    elif re.fullmatch(r"-?\d+", literal.strip()):
        value = int(literal)
        kind = next(t for t, bits in (("int8", 8), ("int16", 16), ("int32", 32), ("int64", 64), ("", 0))
                    if not bits or -(1 << (bits - 1)) <= value < 1 << (bits - 1))
        if not kind:
            raise ConfigError(f"{where}.value.literal: {literal!r} does not fit a 64-bit integer")
        schema = {"type": kind, "optional": False}
    elif literal.strip()[:1] in ("[", "{", "-", ".") or literal.strip()[:1].isdigit() or _DATE_LIKE.match(literal):
        raise ConfigError(f"{where}.value.literal: {literal!r} would parse as a number, date, array or map; "
                          "pgcdc supports string, boolean and integer literals so far")
    else:
        schema, value = {"type": "string", "optional": False}, literal
    header = (name, Codec().encode(schema, value, ctx.header_schemas) or b"null")
    return lambda r: r.new(headers=(*r.headers, header))


class _Side:
    """Key or value half of a $Key/$Value transform."""

    def __init__(self, key: bool) -> None:
        self.key = key

    def get(self, r: Record) -> tuple[Schema | None, Any]:
        return (r.key_schema, r.key) if self.key else (r.value_schema, r.value)

    def set(self, r: Record, schema: Schema | None, value: Any) -> Record:
        return r.new(key_schema=schema, key=value) if self.key else r.new(value_schema=schema, value=value)


def field_path(where: str, opts: Mapping[str, str], name: str) -> list[str]:
    """SingleFieldPath: with field.syntax.version=V2 a dotted path into nested structs (a `backticked` step may
    hold dots); with V1 (the default) the whole name is one field."""
    version = opts.get("field.syntax.version", "V1").strip().upper()
    if version not in ("V1", "V2"):
        raise ConfigError(f"{where}.field.syntax.version: expected V1 or V2 (got {opts['field.syntax.version']!r})")
    if version == "V1" or "." not in name:
        return [name]
    steps, i = [], 0
    while i <= len(name):
        if name.startswith("`", i):
            end = name.find("`", i + 1)
            while end >= 0 and not (end + 1 == len(name) or name[end + 1] == "."):
                end = name.find("`", end + 1)
            if end >= 0:
                steps.append(name[i + 1:end])
                i = end + 2
                continue
        end = name.find(".", i)
        end = len(name) if end < 0 else end
        steps.append(name[i:end])
        i = end + 1
    return steps


def extract_field(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        name = _required(where, opts, "field", "the field to extract")
        path = field_path(where, opts, name)
        side = _Side(key)
        cache: dict[int, tuple[Schema, Schema]] = {}

        def value_at(value: Any) -> Any:
            for step in path:
                if not isinstance(value, dict):
                    return None
                value = value.get(step)
            return value

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if schema is None:
                if value is None:
                    return side.set(r, None, None)
                if not isinstance(value, dict):
                    raise ValueError(f"Only Map objects supported in absence of schema for [field extraction], "
                                     f"found: {type(value).__name__}")
                return side.set(r, None, value_at(value))
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                sub: Schema | None = schema
                for step in path:
                    f = S.field(sub, step) if sub is not None and sub.get("type") == "struct" else None
                    sub = S.unfield(f) if f is not None else None
                if sub is None:
                    raise ValueError(f"Unknown field: {name}")
                hit = cache[id(schema)] = (schema, sub)
            return side.set(r, hit[1], None if value is None else value_at(value))
        return apply
    return make


def hoist_field(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        name = _required(where, opts, "field", "the field to wrap the data in")
        side = _Side(key)
        cache: dict[int, tuple[Schema, Schema]] = {}

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if schema is None:
                return side.set(r, None, {name: value})
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                hit = cache[id(schema)] = (schema, {"type": "struct", "fields": [S.as_field(name, schema)],
                                                    "optional": False})
            return side.set(r, hit[1], {name: value})
        return apply
    return make


def replace_field(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        exclude = set(_list(opts.get("exclude", "")))
        include = set(_list(opts.get("include", "")))
        renames: dict[str, str] = {}
        for pair in _list(opts.get("renames", "")):
            old, sep, new = pair.partition(":")
            if not sep or not old or not new:
                raise ConfigError(f"{where}.renames: expected old:new pairs separated by commas (got {pair!r})")
            renames[old] = new
        side = _Side(key)

        def keep(name: str) -> bool:
            return name not in exclude and (not include or name in include)
        cache: dict[int, tuple[Schema, Schema]] = {}

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if value is None:
                return r
            if schema is None:
                return side.set(r, None, {renames.get(k, k): v for k, v in value.items() if keep(k)})
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                kept = [S.as_field(renames.get(f["field"]) or f["field"], f) for f in S.fields(schema)
                        if keep(f["field"])]
                hit = cache[id(schema)] = (schema, S.copy_basics(schema, kept))
            return side.set(r, hit[1], {renames.get(k, k): v for k, v in value.items() if keep(k)})
        return apply
    return make


def set_schema_metadata(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        name = opts.get("schema.name")
        version: int | None = None
        if opts.get("schema.version") is not None:
            try:
                version = int(opts["schema.version"])
            except ValueError:
                raise ConfigError(f"{where}.schema.version: expected an integer "
                                  f"(got {opts['schema.version']!r})") from None
        side = _Side(key)
        cache: dict[int, tuple[Schema, Schema]] = {}

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if schema is None:
                if value is None:
                    return r
                raise ValueError("Schema required for [updating schema metadata]")
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                # new ConnectSchema(...): every member kept but the name and version given.
                out = dict(schema)
                if name is not None:
                    out["name"] = name
                if version is not None:
                    out["version"] = version
                hit = cache[id(schema)] = (schema, ordered(out))
            return side.set(r, hit[1], value)
        return apply
    return make
