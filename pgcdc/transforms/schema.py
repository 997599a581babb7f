"""Connect schema operations on JsonConverter's schema JSON (dicts kept in its member order)."""

from __future__ import annotations

from typing import Any

from pgcdc.envelope.connect import ordered
from pgcdc.transforms import Schema

OPTIONAL_STRING: Schema = {"type": "string", "optional": True}
STRING: Schema = {"type": "string", "optional": False}


def fields(schema: Schema) -> list[Schema]:
    return schema.get("fields") or []


def field(schema: Schema, name: str) -> Schema | None:
    for f in fields(schema):
        if f["field"] == name:
            return f
    return None


def unfield(schema: Schema) -> Schema:
    """A struct field's schema on its own (without the `field` member)."""
    return {k: v for k, v in schema.items() if k != "field"}


def as_field(name: str, schema: Schema) -> Schema:
    return ordered({**{k: v for k, v in schema.items() if k != "field"}, "field": name})


def copy_basics(schema: Schema, fields_: list[Schema]) -> Schema:
    """SchemaUtil.copySchemaBasics(schema, SchemaBuilder.struct()) plus fields: name, version, doc and parameters
    are kept; optional and default are not (the builder's own defaults: required, no default)."""
    seen: set[str] = set()
    for f in fields_:
        if f["field"] in seen:  # SchemaBuilder.field refuses a second field of a name
            raise ValueError(f"Cannot create field because of field name duplication {f['field']}")
        seen.add(f["field"])
    out: dict[str, Any] = {"type": "struct", "fields": fields_, "optional": False}
    for k in ("name", "version", "doc", "parameters"):
        if k in schema:
            out[k] = schema[k]
    return out


def basics_optional(schema: Schema) -> Schema:
    """SchemaUtil.copySchemaBasics(schema).optional(): the type (and a struct's fields), name, version, doc,
    parameters; optional, without a default."""
    out = {k: v for k, v in schema.items() if k not in ("default", "field")}
    out["optional"] = True
    return ordered(out)
