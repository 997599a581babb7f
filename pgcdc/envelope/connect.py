"""Kafka Connect schema JSON as JsonConverter writes it, and the key/value wrappers.

JsonConverter.asJsonSchema emits a schema's members in a fixed order: type, then fields/items/keys/values,
optional, name, version, doc, parameters, default; a struct field adds "field" last. We keep dicts in that
order so orjson writes the same bytes.
"""

from __future__ import annotations

from typing import Any

import orjson

from pgcdc.envelope.jsontext import jackson, needs_jackson

_ORDER = ("type", "fields", "items", "keys", "values", "optional", "name", "version", "doc", "parameters",
          "default", "field")
_RANK = {k: i for i, k in enumerate(_ORDER)}


def ordered(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(schema.items(), key=lambda kv: _RANK[kv[0]]))


def field(name: str, schema: dict[str, Any], optional: bool, default: Any = None) -> dict[str, Any]:
    out = {**schema, "optional": optional, "field": name}
    if default is not None:
        out["default"] = default
    return ordered(out)


def struct(name: str | None, fields: list[dict[str, Any]], optional: bool, version: int | None = None,
           doc: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "fields": fields, "optional": optional}
    if name is not None:
        out["name"] = name
    if version is not None:
        out["version"] = version
    if doc is not None:
        out["doc"] = doc
    return out


def as_field(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A whole schema reused as a struct field."""
    return ordered({**schema, "field": name})


def dumps(value: Any) -> bytes:
    """JSON bytes of `value` as JsonConverter writes them (no schema wrapper)."""
    body = orjson.dumps(value)
    # needs_jackson's first test, inlined for the common case: ASCII without a single escape.
    if (not body.isascii() or body.find(b"\\") >= 0) and needs_jackson(body):  # rare; see jsontext
        body = jackson(body)
    return body


class Wrapper:
    """Serializes a payload with or without the `{"schema":…,"payload":…}` wrapper (schemas.enable)."""

    __slots__ = ("prefix", "with_schema")

    def __init__(self, schema: dict[str, Any] | None, with_schema: bool) -> None:
        self.with_schema = with_schema and schema is not None
        self.prefix = jackson(b'{"schema":' + orjson.dumps(schema) + b',"payload":') if self.with_schema else b""

    def __call__(self, payload: Any) -> bytes:
        body = orjson.dumps(payload)
        if (not body.isascii() or body.find(b"\\") >= 0) and needs_jackson(body):  # rare; see jsontext
            body = jackson(body)
        if self.with_schema:
            return self.prefix + body + b"}"
        return body
