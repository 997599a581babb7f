"""Kafka Connect's Flatten$Key/$Value (org.apache.kafka.connect.transforms.Flatten, 4.x): nested structs (or maps
without a schema) become top-level fields named `outer<delimiter>inner`.

With a schema, a flattened field keeps its type, name, version, doc and parameters (SchemaUtil.copySchemaBasics),
is optional when it or any enclosing struct is, and keeps its default (else the enclosing struct default's
value for it); the record's struct keeps its own name, version and doc. The flattened schema and the list of
value paths are built once per input schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.envelope.connect import ordered
from pgcdc.transforms import Record, Schema, Transform
from pgcdc.transforms import schema as S

Path = tuple[str, ...]


def _flat_schema(schema: Schema, delim: str) -> tuple[Schema, list[tuple[str, Path]]]:
    fields: list[Schema] = []
    paths: list[tuple[str, Path]] = []

    def walk(s: Schema, prefix: str, path: Path, optional: bool) -> None:
        parent_default = s.get("default") if isinstance(s.get("default"), dict) else None
        for f in S.fields(s):
            name = f"{prefix}{delim}{f['field']}" if prefix else f["field"]
            opt = optional or bool(f.get("optional"))
            if f.get("type") == "struct":
                walk(f, name, (*path, f["field"]), opt)
                continue
            out = {k: v for k, v in f.items() if k not in ("optional", "default", "field")}
            out["optional"] = opt
            default = f.get("default")
            if default is None and parent_default is not None:
                default = parent_default.get(f["field"])
            if default is not None:
                out["default"] = default
            fields.append(S.as_field(name, ordered(out)))
            paths.append((name, (*path, f["field"])))
    walk(schema, "", (), bool(schema.get("optional")))
    return S.copy_basics(schema, fields), paths


def _flat_map(value: dict[str, Any], prefix: str, delim: str, out: dict[str, Any]) -> dict[str, Any]:
    for k, v in value.items():
        name = f"{prefix}{delim}{k}" if prefix else k
        if isinstance(v, dict):
            _flat_map(v, name, delim, out)
        else:
            out[name] = v
    return out


def flatten(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        delim = opts.get("delimiter", ".")
        cache: dict[int, tuple[Schema, Schema, list[tuple[str, Path]]]] = {}

        def apply(r: Record) -> Record:
            schema, value = (r.key_schema, r.key) if key else (r.value_schema, r.value)
            if value is None:
                return r
            if schema is None:
                if not isinstance(value, dict):
                    raise ValueError("Only Map objects supported in absence of schema for [flattening], found: "
                                     + type(value).__name__)
                out_schema, out = None, _flat_map(value, "", delim, {})
            else:
                if schema.get("type") != "struct" or not isinstance(value, dict):
                    raise ValueError(f"Only Struct objects supported for [flattening], found: {type(value).__name__}")
                hit = cache.get(id(schema))
                if hit is None or hit[0] is not schema:
                    hit = cache[id(schema)] = (schema, *_flat_schema(schema, delim))
                out_schema, paths = hit[1], hit[2]
                out = {}
                for name, path in paths:
                    v: Any = value
                    for p in path:
                        v = v.get(p) if v is not None else None
                    out[name] = v
            if key:
                return r.new(key_schema=out_schema, key=out)
            return r.new(value_schema=out_schema, value=out)
        return apply
    return make
