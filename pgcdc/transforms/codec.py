"""The envelope's JsonConverter bytes (`{"schema":…,"payload":…}`) to a schema and payload, and back.

A record's schema is the same object for every event of a table version: decoding finds it by the bytes before
the payload (the envelope writes them from one precomputed prefix per table), so only the payload is parsed per
record, and transforms can cache their work per schema object. Doubles keep Java's text (`1.0E20`): orjson reads
them as floats, and encoding writes the floats of the output's schema back in Java's form (only what is written
is walked: an unwrapped row, not the envelope it came from).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.envelope.connect import dumps
from pgcdc.envelope.jsontext import jackson
from pgcdc.pgtypes.numbers import python_float_to_java
from pgcdc.transforms import Schema

_MARK = b',"payload":'
_HEAD = b'{"schema":'
Fixer = Callable[[Any], Any]


def _float(v: Any) -> Any:
    if type(v) is not float:
        return v
    # Python's repr is Java's Double.toString text where neither uses an exponent and the value has a fraction
    # or a ".0" (1e-3 <= |v| < 1e7); elsewhere the Decimal-based layout.
    if 1e-3 <= abs(v) < 1e7:
        return orjson.Fragment(repr(v))
    return python_float_to_java(v)


def value_fixer(schema: Schema | None, leaf: Callable[[Schema], Fixer | None]) -> Fixer | None:
    """A function rewriting in a payload of `schema` the values whose schema `leaf` gives a fixer for, at any
    depth (struct fields in place, array items, map keys and values: a map is a JSON object, or an array of
    [key, value] pairs when its keys are not strings); None when the schema holds no such value."""
    if not isinstance(schema, dict):
        return None
    own = leaf(schema)
    if own is not None:
        return own
    t = schema.get("type")
    if t == "struct":
        subs = [(f["field"], fx) for f in schema.get("fields") or () if (fx := value_fixer(f, leaf)) is not None]
        if not subs:
            return None

        def fix_struct(v: Any) -> Any:
            if isinstance(v, dict):
                for name, fx in subs:
                    if v.get(name) is not None:
                        v[name] = fx(v[name])
            return v
        return fix_struct
    if t == "array":
        item = value_fixer(schema.get("items"), leaf)
        if item is None:
            return None
        return lambda v: [None if x is None else item(x) for x in v] if isinstance(v, list) else v
    if t == "map":
        keys, values = value_fixer(schema.get("keys"), leaf), value_fixer(schema.get("values"), leaf)
        if keys is None and values is None:
            return None
        k = keys or (lambda x: x)
        val = values or (lambda x: x)

        def fix_map(v: Any) -> Any:
            if isinstance(v, dict):
                return {name: None if x is None else val(x) for name, x in v.items()}
            if isinstance(v, list):
                return [[k(p[0]), None if p[1] is None else val(p[1])] for p in v]
            return v
        return fix_map
    return None


def float_fixer(schema: Schema | None) -> Fixer | None:
    """A function restoring Java's text for the doubles in a payload of `schema`; None when it holds none."""
    return value_fixer(schema, lambda s: _float if s.get("type") in ("float", "double") else None)


class Codec:
    """Decodes with-schema JsonConverter bytes; encodes with or without the schema (schemas.enable)."""

    def __init__(self) -> None:
        # Schemas by the length of their JSON: a record's bytes are compared in place (startswith), not hashed.
        self._known: dict[int, list[tuple[bytes, Schema]]] = {}
        self._schema_bytes: dict[int, tuple[Schema, bytes]] = {}
        self._fixers: dict[int, tuple[Schema, Fixer | None]] = {}

    def decode(self, data: bytes | None) -> tuple[Schema | None, Any]:
        if data is None:
            return None, None
        i = data.find(_MARK)
        if i > 0:
            for head, schema in self._known.get(i, ()):
                if data.startswith(head):
                    return schema, orjson.loads(memoryview(data)[i + len(_MARK):-1])
        full = orjson.loads(data)
        if not isinstance(full, dict) or "schema" not in full or "payload" not in full:
            return None, full  # schemaless JSON
        schema, payload = full["schema"], full["payload"]
        head = _HEAD + jackson(orjson.dumps(schema))
        if i > 0 and data[:i] == head and len(self._schema_bytes) < 4096:
            self._known.setdefault(i, []).append((head, schema))
            self._schema_bytes[id(schema)] = (schema, head[len(_HEAD):])
        return schema, payload

    def _fixer(self, schema: Schema) -> Fixer | None:
        known = self._fixers.get(id(schema))
        if known is None or known[0] is not schema:
            known = (schema, float_fixer(schema))
            if len(self._fixers) < 16384:  # the schema object is kept, so its id is not reused
                self._fixers[id(schema)] = known
        return known[1]

    def schema_json(self, schema: Schema) -> bytes:
        known = self._schema_bytes.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        body = jackson(orjson.dumps(schema))
        if len(self._schema_bytes) < 16384:  # the schema object is kept, so its id is not reused
            self._schema_bytes[id(schema)] = (schema, body)
        return body

    def encode(self, schema: Schema | None, value: Any, with_schema: bool) -> bytes | None:
        # JsonConverter.fromConnectData: no schema and no value is a null record (a tombstone).
        if schema is None and value is None:
            return None
        if schema is not None and value is not None:
            fix = self._fixer(schema)
            if fix is not None:
                value = fix(value)
        body = dumps(value)
        if not with_schema:
            return body
        return b'{"schema":' + (b"null" if schema is None else self.schema_json(schema)) + _MARK + body + b"}"
