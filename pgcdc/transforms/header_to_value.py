"""Debezium's HeaderToValue (io.debezium.transforms.HeaderToValue, 3.6): header values copied or moved into the
value struct, at the root (`fields=name`) or in a nested struct (`fields=after.name`).

Follows the Debezium source step for step, its quirks included: a field whose name is a substring of any nested
destination is treated as a struct to descend into; the nesting level advances per such field (for the schema
always, for the value only when the field is not null); the output schema is cached per value schema, built from
the headers the first record had. A header is read as the header converter wrote it with its schema
(`header.converter.schemas.enable`, which the transform needs, as Debezium's headers always carry one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec

OPTIONS = ("headers", "fields", "operation")
_ROOT = "payload"
_PRIMITIVE = frozenset({"int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes"})


def _list(value: str) -> list[str]:
    return [x.strip() for x in value.split(",")] if value.strip() else []


class HeaderToValue:
    def __init__(self, where: str, opts: Mapping[str, str]) -> None:
        for name in OPTIONS:
            if name not in opts:
                raise ConfigError(f"{where}.{name}: required")
        self.headers, self.fields = _list(opts["headers"]), _list(opts["fields"])
        if len(self.headers) != len(self.fields):
            raise ConfigError(f"{where}.fields: must have as many elements as {where}.headers")
        if "" in self.headers or "" in self.fields:
            raise ConfigError(f"{where}.fields/headers: an empty element")
        for name, values in (("headers", self.headers), ("fields", self.fields)):
            if any(" " in v for v in values):
                raise ConfigError(f"{where}.{name}: a name with a space")
        op = opts["operation"].strip()
        if op not in ("move", "copy"):
            raise ConfigError(f"{where}.operation: expected move or copy (got {opts['operation']!r})")
        self.move = op == "move"
        self.wanted = frozenset(self.headers)
        self.nested = [f for f in self.fields if "." in f]
        self.codec = Codec()
        self._schemas: dict[bytes, Schema] = {}

    def _contained(self, name: str) -> bool:
        return any(name in s for s in self.nested)

    def _target(self, dest: str, parent: str, level: int) -> str | None:
        names = dest.split(".")
        if len(names) == 1 and parent == _ROOT:
            return names[0]
        if names[level - 1 if level else 0] == parent:
            if level >= len(names):
                raise ValueError(f"Index {level} out of bounds for length {len(names)}")
            return names[level]
        return None

    def _schema(self, parent: str, old: Schema, found: dict[str, tuple[Schema, Any]], level: int) -> Schema:
        if old.get("type") in _PRIMITIVE:
            return old
        fields = []
        for f in S.fields(old):
            if self._contained(f["field"]):
                level += 1
                fields.append(S.as_field(f["field"], self._schema(f["field"], S.unfield(f), found, level)))
            else:
                fields.append(f)
        for header, dest in zip(self.headers, self.fields, strict=True):
            name = self._target(dest, parent, level)
            if name is not None and header in found:
                fields.append(S.as_field(name, found[header][0]))
        return S.copy_basics(old, fields)

    def _value(self, parent: str, old: dict[str, Any], old_schema: Schema, schema: Schema,
               found: dict[str, tuple[Schema, Any]], level: int) -> dict[str, Any]:
        out: dict[str, Any] = {f["field"]: None for f in S.fields(schema)}
        for f in S.fields(old_schema):
            v = old.get(f["field"])
            if v is None:
                continue
            if self._contained(f["field"]):
                if not isinstance(v, dict):
                    raise ValueError(f"Only Struct objects supported for [Nested field], found: {type(v).__name__}")
                level += 1
                sub = S.field(schema, f["field"])
                assert sub is not None
                out[f["field"]] = self._value(f["field"], v, S.unfield(f), S.unfield(sub), found, level)
            else:
                out[f["field"]] = v
        for header, dest in zip(self.headers, self.fields, strict=True):
            if header in found:
                name = self._target(dest, parent, level)
                if name is not None:
                    if name not in out:
                        raise ValueError(f"{name} is not a valid field name")
                    out[name] = found[header][1]
        return out

    def __call__(self, r: Record) -> Record:
        vs = r.value_schema
        if not isinstance(r.value, dict) or vs is None or vs.get("type") != "struct":
            raise ValueError("Only Struct objects supported for [Header field insertion], found: "
                             + ("null" if r.value is None else type(r.value).__name__))
        found: dict[str, tuple[Schema, Any]] = {}
        for name, data in r.headers:
            if name in self.wanted:
                if name in found:  # Collectors.toMap
                    raise ValueError(f"Duplicate key {name}")
                schema, value = self.codec.decode(data)
                if schema is None:
                    raise ValueError(f"header {name} has no schema (set header.converter.schemas.enable=true)")
                found[name] = (schema, value)
        key = self.codec.schema_json(vs)
        schema = self._schemas.get(key)
        if schema is None:
            schema = self._schemas[key] = self._schema(_ROOT, vs, found, 0)
        value = self._value(_ROOT, r.value, vs, schema, found, 0)
        for f in S.fields(schema):
            # A nested destination's parent is rebuilt as a required struct (copySchemaBasics): JsonConverter
            # then refuses a null there (an `after.x` destination on a delete), failing the record.
            if value.get(f["field"]) is None and not f.get("optional") and "default" not in f:
                raise ValueError("Conversion error: null value for field that is required and has no default value")
        headers = tuple(h for h in r.headers if h[0] not in self.wanted) if self.move else r.headers
        return r.new(value_schema=schema, value=value, headers=headers)
