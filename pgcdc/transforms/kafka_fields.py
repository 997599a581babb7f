"""Kafka Connect's InsertField, ValueToKey and MaskField (connect-transforms 4.x), on JSON-form records."""

from __future__ import annotations

import math

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from pgcdc.errors import ConfigError
from pgcdc.pgtypes.java_float import float32_text
from pgcdc.pgtypes.numbers import python_float_to_java
from pgcdc.transforms import Record, Schema, Transform
from pgcdc.transforms import schema as S
from pgcdc.transforms.connect_values import to_double, to_float, to_integer
from pgcdc.transforms.kafka_connect import _list, _Side

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
_JAVA_DATES = frozenset({TIMESTAMP, "org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time"})
DECIMAL = "org.apache.kafka.connect.data.Decimal"
_SPECS = (("topic.field", "string"), ("partition.field", "int32"), ("offset.field", "int64"),
          ("timestamp.field", "int64"), ("static.field", "string"))


def _spec(text: str | None) -> tuple[str, bool] | None:
    """InsertionSpec.parse: `name`, `name?` (optional, the default) or `name!` (required)."""
    if text is None:
        return None
    if text.endswith("?"):
        return text[:-1], True
    if text.endswith("!"):
        return text[:-1], False
    return text, True


def insert_field(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        specs = {name: _spec(opts.get(name)) for name, _ in _SPECS}
        if not any(specs.values()):
            raise ConfigError(f"{where}: no field insertion configured (set one of "
                              f"{', '.join(n for n, _ in _SPECS)})")
        static = opts.get("static.value")
        if specs["static.field"] is not None and static is None:
            raise ConfigError(f"{where}.static.value: no value specified for static field "
                              f"{opts['static.field']!r}")
        added: list[Schema] = []
        for name, type_ in _SPECS:
            spec = specs[name]
            if spec is not None:
                sch: dict[str, Any] = {"type": type_, "optional": spec[1]}
                if name == "timestamp.field":
                    sch = {**sch, "name": TIMESTAMP, "version": 1}
                added.append(S.as_field(spec[0], sch))
        side = _Side(key)
        cache: dict[int, tuple[Schema, Schema]] = {}
        offset = specs["offset.field"]

        def values(r: Record) -> list[tuple[str, Any]]:
            out: list[tuple[str, Any]] = []
            if offset is not None:
                # InsertField reads the offset of a SinkRecord only (requireSinkRecord).
                raise ValueError("Only SinkRecord supported for [field insertion], found: "
                                 "org.apache.kafka.connect.source.SourceRecord")
            for name, v in (("topic.field", r.topic), ("partition.field", r.partition),
                            ("timestamp.field", r.timestamp), ("static.field", static)):
                spec = specs[name]
                if spec is not None and v is not None:
                    out.append((spec[0], v))
            return out

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if value is None:
                return r
            if schema is None:
                if not isinstance(value, dict):
                    raise ValueError(f"Only Map objects supported in absence of schema for [field insertion], "
                                     f"found: {type(value).__name__}")
                return side.set(r, None, {**value, **dict(values(r))})
            if not isinstance(value, dict) or schema.get("type") != "struct":
                raise ValueError("Only Struct objects supported for [field insertion]")
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                hit = cache[id(schema)] = (schema, S.copy_basics(schema, [*S.fields(schema), *added]))
            out = dict(value)
            for f in added:
                out.setdefault(f["field"], None)
            out.update(values(r))
            for f in added:
                if out[f["field"]] is None and not f["optional"]:
                    raise ValueError(f"Invalid value: null used for required field: \"{f['field']}\", "
                                     f"schema type: {f['type'].upper()}")
            return side.set(r, hit[1], out)
        return apply
    return make


def value_to_key(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
    names = _list(opts.get("fields", ""))
    if not names:
        raise ConfigError(f"{where}.fields: required (the value fields that make the key)")
    cache: dict[int, tuple[Schema, Schema]] = {}

    def apply(r: Record) -> Record:
        schema, value = r.value_schema, r.value
        if schema is None:
            if not isinstance(value, dict):
                raise ValueError(f"Only Map objects supported in absence of schema for [copying fields from value "
                                 f"to key], found: {'null' if value is None else type(value).__name__}")
            return r.new(key_schema=None, key={n: value.get(n) for n in names})
        if not isinstance(value, dict):
            raise ValueError("Only Struct objects supported for [copying fields from value to key], found: "
                             + ("null" if value is None else type(value).__name__))
        hit = cache.get(id(schema))
        if hit is None or hit[0] is not schema:
            fields = []
            for n in names:
                f = S.field(schema, n)
                if f is None:
                    raise ValueError(f"Field does not exist: {n}")
                fields.append(f)
            hit = cache[id(schema)] = (schema, {"type": "struct", "fields": fields, "optional": False})
        return r.new(key_schema=hit[1], key={n: value.get(n) for n in names})
    return apply


# Values.convertTo<type> of the replacement text (connect_values.py).
_NUMBERS: dict[str, Callable[[str, str], Any]] = {
    **dict.fromkeys(("int8", "int16", "int32", "int64"), to_integer),
    "float": lambda text, t: to_float(text), "double": lambda text, t: to_double(text)}
_ZERO: dict[str, Any] = {"boolean": False, "int8": 0, "int16": 0, "int32": 0, "int64": 0,
                         "float": orjson.Fragment(b"0.0"), "double": orjson.Fragment(b"0.0"), "string": "",
                         "array": [], "map": {}}


def _masker(where: str, f: Schema, replacement: str | None) -> Callable[[Any], Any]:
    """MaskField: the value's Java class decides the mask (PRIMITIVE_VALUE_MAPPING / REPLACEMENT_MAPPING_FUNC)."""
    t, name = f.get("type"), f.get("name")
    if name == DECIMAL:
        # BigDecimal.ZERO (or the replacement) has its own scale; JsonConverter refuses a scale other than the
        # schema's, so only a scale-0 decimal column can be masked.
        def fail(v: Any) -> Any:
            raise ValueError(f"Cannot mask decimal field {f['field']!r} of this scale (JsonConverter: BigDecimal "
                             "has mismatching scale value for given Decimal schema)")
        scale = (f.get("parameters") or {}).get("scale")
        if scale != "0":
            return fail
        import base64
        n = 0 if replacement is None else int(replacement)
        raw = n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True)
        masked = base64.b64encode(raw).decode()
        return lambda v: None if v is None else masked
    if replacement is None:
        if t not in _ZERO or t == "bytes":
            def cannot(v: Any) -> Any:
                if v is None:
                    return None
                raise ValueError(f"Cannot mask value of type {t} in field {f['field']!r}")
            return cannot
        zero = _ZERO[t]
        if t in ("array", "map"):
            return lambda v: None if v is None else type(zero)()
        return lambda v: None if v is None else zero
    if t in _NUMBERS:
        if name in _JAVA_DATES:  # a java.util.Date has no replacement mapping
            return _cannot(t, f)
        try:
            parsed = _NUMBERS[t](replacement, t)
        except ValueError as exc:
            # Parsed per masked value as MaskField does: a record whose field is null passes, the others fail.
            message = f"replacement {replacement!r} for field {f['field']!r}: {exc}"

            def unparsable(v: Any) -> Any:
                if v is None:
                    return None
                raise ValueError(message)
            return unparsable
        if t == "float":
            # FLOAT32 is written by Float.toString (16777217.5 is 1.6777218E7), not the double's text.
            fv = orjson.Fragment(float32_text(parsed).encode()) if math.isfinite(parsed) \
                else python_float_to_java(parsed)
        else:
            fv = python_float_to_java(parsed) if t == "double" else parsed
        return lambda v: None if v is None else fv
    if t == "string":
        return lambda v: None if v is None else replacement
    return _cannot(t, f)


def _cannot(t: Any, f: Schema) -> Callable[[Any], Any]:
    def cannot(v: Any) -> Any:
        if v is None:
            return None
        raise ValueError(f"Cannot mask value of type {t} in field {f['field']!r} with custom replacement.")
    return cannot


def mask_field(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        names = set(_list(opts.get("fields", "")))
        if not names:
            raise ConfigError(f"{where}.fields: required (the fields to mask)")
        replacement = opts.get("replacement")  # trimmed as ConfigDef does (config.py): blanks alone are empty
        if replacement == "":
            raise ConfigError(f"{where}.replacement: must not be empty")
        side = _Side(key)
        cache: dict[int, tuple[Schema, list[tuple[str, Callable[[Any], Any]]]]] = {}

        def apply(r: Record) -> Record:
            schema, value = side.get(r)
            if value is None:
                # Requirements.requireMap/requireStruct: a tombstone fails (filter tombstones first).
                raise ValueError("Only Map objects supported in absence of schema for [mask fields], found: null"
                                 if schema is None else "Only Struct objects supported for [mask fields], found: null")
            if schema is None:
                raise ValueError("pgcdc masks fields of records with a schema only")
            hit = cache.get(id(schema))
            if hit is None or hit[0] is not schema:
                hit = cache[id(schema)] = (schema, [(f["field"], _masker(where, f, replacement))
                                                    for f in S.fields(schema) if f["field"] in names])
            out = dict(value)
            for name, fn in hit[1]:
                out[name] = fn(out.get(name))
            return side.set(r, schema, out)
        return apply
    return make
