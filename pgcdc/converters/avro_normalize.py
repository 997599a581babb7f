"""The text Confluent's AvroConverter registers with `normalize.schemas=true`: AvroSchema.normalize() (Confluent
7.0.16's AvroSchemaUtils.toNormalizedString, then the schema parsed again and written by Avro's Schema.toString).

Normalizing changes the order of each schema's properties and little else in the schemas pgcdc writes (checked
against the JVM's own normalize() on every recorded Debezium schema: tests/unit/test_avro_normalize.py, and under
Debezium: test_avro_vs_debezium.py): a logical type's `logicalType` (a decimal's `precision`, and its `scale`
unless 0) comes first, then the other properties sorted by name, an object-valued property
(`connect.parameters`) with its members sorted too; a named type of no namespace takes the enclosing one.
Names, fields, defaults (NaN and infinities included) and numbers' text stay as Avro writes them.
"""

from __future__ import annotations

from typing import Any

import json

import orjson

from pgcdc.converters.avro_schema import schema_json

# What Avro writes of a schema, a field or a named type itself, in its own order; everything else is a property.
_SCHEMA_KEYS = ("type", "name", "namespace", "doc", "fields", "items", "values", "symbols", "size", "aliases")
_FIELD_KEYS = ("name", "type", "doc", "default", "order", "aliases")


def normalized_schema_text(text: str) -> str:
    """`text` (an Avro schema as pgcdc writes it) as normalize.schemas=true registers it."""
    # Numbers keep their text (Java's 1.0E20, not 1e+20): parsed as raw JSON fragments.
    return schema_json(_schema(json.loads(text, parse_float=orjson.Fragment), None))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _schema(node: Any, space: str | None) -> Any:
    """`node` normalized, inside a named type of namespace `space`. A named type of no namespace (`"namespace":
    ""`) is written by its bare name and read back in the enclosing namespace (measured)."""
    if isinstance(node, list):
        return [_schema(b, space) for b in node]
    if not isinstance(node, dict):
        return node
    if "name" in node:
        inner = node.get("namespace") or space
        node = {k: v for k, v in node.items() if k != "namespace" or inner != space}
        space = inner
    out: dict[str, Any] = {}
    for k in _SCHEMA_KEYS:
        if k in node:
            v = node[k]
            out[k] = ([_field(f, space) for f in v] if k == "fields" else _schema(v, space)
                      if k in ("type", "items", "values") else v)
    if "logicalType" in node:
        out["logicalType"] = node["logicalType"]
        if node["logicalType"] == "decimal":
            out["precision"] = node["precision"]
            if node.get("scale"):
                out["scale"] = node["scale"]
    out.update((k, _sorted(node[k])) for k in sorted(node) if k not in out and k not in _SCHEMA_KEYS)
    return out


def _field(field: dict[str, Any], space: str | None) -> dict[str, Any]:
    out = {k: (_schema(field[k], space) if k == "type" else field[k]) for k in _FIELD_KEYS if k in field}
    out.update((k, _sorted(field[k])) for k in sorted(field) if k not in _FIELD_KEYS)
    return out
