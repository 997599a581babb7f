"""The Kafka Connect schema behind a JSON Schema that Confluent's JsonSchemaConverter registered: the reader's half
of jsonschema_schema.py, as io.confluent.connect.json.JsonSchemaData.toConnectSchema reads the `connect.*`
annotations.

A record in JsonSchemaConverter's wire format is the magic byte, the schema id and the value's JSON, which is
JsonConverter's payload for the same record; with this schema in JsonConverter's JSON form beside it, a reader
of JsonConverter records (pgcdc.spark) reads it unchanged. Defaults are not carried back (a reader of values
has no use for them).
"""

from __future__ import annotations

from typing import Any

_INTEGERS = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64"}
_NUMBERS = {"float32": "float", "float64": "double", "bytes": "bytes"}  # a Decimal is a number of type bytes


def connect_schema(js: dict[str, Any]) -> dict[str, Any]:
    """JsonConverter's JSON form of the Connect schema a registered JSON Schema describes. Raises ValueError for
    a JSON Schema JsonSchemaData did not write (no Connect schema stands behind it)."""
    if "oneOf" in js:  # an optional schema: null and the schema
        branches = js["oneOf"]
        other = [b for b in branches if b.get("type") != "null"]
        if len(branches) != 2 or len(other) != 1:
            raise ValueError(f"a oneOf other than null and one schema: {str(js)[:120]}")
        return {**connect_schema(other[0]), "optional": True}
    t, ct = js.get("type"), js.get("connect.type")
    s: dict[str, Any]
    if ct == "map":
        if t == "object":  # string keys
            s = {"type": "map", "keys": {"type": "string", "optional": False},
                 "values": connect_schema(js["additionalProperties"])}
        else:  # an array of {key, value} objects
            entry = js["items"]["properties"]
            s = {"type": "map", "keys": connect_schema(entry["key"]), "values": connect_schema(entry["value"])}
    elif t == "integer":
        s = {"type": _INTEGERS.get(ct, "int64")}
    elif t == "number":
        s = {"type": _NUMBERS.get(ct, "double")}
    elif t == "string":
        s = {"type": "bytes" if ct == "bytes" else "string"}
    elif t == "boolean":
        s = {"type": "boolean"}
    elif t == "array":
        s = {"type": "array", "items": connect_schema(js["items"])}
    elif t == "object":
        props = js.get("properties") or {}
        order = sorted(props, key=lambda name: _index(props[name]))
        s = {"type": "struct", "fields": [{**connect_schema(props[name]), "field": name} for name in order]}
    else:
        raise ValueError(f"no Connect type for a JSON Schema of type {t!r}")
    s["optional"] = False
    if "title" in js:
        s["name"] = js["title"]
    if "connect.version" in js:
        s["version"] = int(js["connect.version"])
    if "description" in js:
        s["doc"] = js["description"]
    if js.get("connect.parameters"):
        s["parameters"] = dict(js["connect.parameters"])
    return s


def _index(js: dict[str, Any]) -> int:
    """A property's connect.index: on the oneOf of an optional field, else on the field's schema."""
    if "connect.index" not in js:
        raise ValueError("a struct property without connect.index")
    return int(js["connect.index"])
