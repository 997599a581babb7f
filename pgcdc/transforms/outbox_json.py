"""The outbox EventRouter's `table.expand.json.payload`: a JSON text payload read into a Connect schema and value,
as Debezium's io.debezium.transforms.outbox.JsonSchemaData infers them (3.6).

Inference follows Jackson's node types: strings, booleans, ints (int32 when they fit, else int64, else float64),
doubles, objects (optional structs named after their path from the payload field, fields in document order),
arrays (the first non-null element's schema; objects merged across elements) and nulls (left out, or optional
bytes with `table.json.payload.null.behavior=optional_bytes`). A payload that is not an object or array, or
whose schema cannot be inferred (an array of mixed types, or of nulls only) stays the string it was.
A value that does not fit its inferred schema (an int where a merged array element schema says double) fails
the record, as Struct.put's validation does in Debezium.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


from pgcdc.transforms import Schema
from pgcdc.transforms import schema as S

Namer = Callable[[str], str]
_INT32 = (-(1 << 31), 1 << 31)
_INT64 = (-(1 << 63), 1 << 63)


class NotExpandable(Exception):
    """Debezium logs "JSON expansion failed" and keeps the payload as it was."""


def _scalar(v: Any) -> str | None:
    """The Connect type Jackson's node for `v` infers (None for null or a container)."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, str):
        return "string"
    if isinstance(v, int):
        if _INT32[0] <= v < _INT32[1]:
            return "int32"
        return "int64" if _INT64[0] <= v < _INT64[1] else "double"
    if isinstance(v, float):
        return "double"
    return None


def _adjuster(mode: str) -> Namer:
    """FieldNameAdjustmentMode's adjusters: Avro names are [A-Za-z_][A-Za-z0-9_]*."""
    if mode == "none":
        return lambda name: name

    def avro(name: str) -> str:
        # SchemaNameAdjuster: an invalid character is replaced; a digit, invalid only first, is kept after the
        # replacement ("2x" -> "_2x", measured with Debezium 3.6.3).
        out = []
        for i, ch in enumerate(name):
            if ch == "_" or ("a" <= ch.lower() <= "z") or (i > 0 and "0" <= ch <= "9"):
                out.append(ch)
                continue
            out.append("_" if mode == "avro" else f"_u{ord(ch):04x}")
            if "0" <= ch <= "9":
                out.append(ch)
        return "".join(out)
    return avro


class Expander:
    def __init__(self, null_as_bytes: bool, adjustment_mode: str) -> None:
        self.null_as_bytes = null_as_bytes
        self.namer = _adjuster(adjustment_mode)

    def expand(self, key: str, text: str) -> tuple[Schema, Any]:
        """(schema, value) for a payload text; NotExpandable when Debezium keeps the text."""
        if not (text.startswith("{") or text.startswith("[")):
            raise NotExpandable(f"Unable to parse payload starting with '{text[:1]}'")
        try:
            # The standard library's parser: orjson reads an integer beyond 64 bits as a float, which Jackson
            # keeps as a BigInteger (a double schema that its value then fails).
            node = json.loads(text)
        except ValueError as exc:
            raise NotExpandable(str(exc)) from None
        schema = self.schema(key, node)
        if schema is None:
            raise NotExpandable("no schema")
        if isinstance(node, list):
            # toConnectData reads the top level as a Struct: an array fails there, after the schema was replaced,
            # so the record fails (measured with Debezium 3.6.3).
            raise ValueError(f"Invalid Java object for schema with type ARRAY: class java.lang.String for field: "
                             f"\"{key}\"")
        return schema, self.value(node, schema)

    # -- schema inference (JsonSchemaData.toConnectSchema) --------------------------------------------------
    def schema(self, key: str | None, node: Any) -> Schema | None:
        t = _scalar(node)
        if t is not None:
            return {"type": t, "optional": True}
        if isinstance(node, list):
            if not node:
                return None
            return {"type": "array", "items": self._items(key, node), "optional": True}
        if isinstance(node, dict):
            fields: list[Schema] = []
            seen: set[str] = set()
            for k, v in node.items():
                name = self.namer(k)
                # A struct without a name (in an array of arrays) names its structs after the field alone
                # (measured with Debezium 3.6.3).
                sub = self.schema(name if key is None else f"{key}.{name}", v)
                if sub is not None and name not in seen:
                    seen.add(name)
                    fields.append(S.as_field(name, sub))
            out: Schema = {"type": "struct", "fields": fields, "optional": True}
            if key is not None:
                out["name"] = key
            return out
        if self.null_as_bytes:
            return {"type": "bytes", "optional": True}
        return None

    def _items(self, key: str | None, array: list[Any]) -> Schema:
        sample = self._first(array)
        if isinstance(sample, dict):
            merged: Schema | None = None
            seen: list[Schema] = []
            for element in array:
                if isinstance(element, dict):
                    s = self.schema(key, element)
                    assert s is not None
                    if s not in seen:  # a HashSet of element schemas: equal shapes merged once
                        seen.append(s)
            for s in seen:
                merged = s if merged is None else self._merge(merged, s)
            assert merged is not None
            return merged
        schema = self.schema(None, sample)
        if schema is None:
            raise NotExpandable(f"Array '{array}' has unrecognized member schema.")
        return schema

    @staticmethod
    def _merge(left: Schema, right: Schema) -> Schema:
        fields = {f["field"]: f for f in S.fields(left)}
        for f in S.fields(right):
            old = fields.get(f["field"])
            if old is None or (S.unfield(old) != S.unfield(f) and old["type"] == "bytes" and f["type"] != "bytes"):
                fields[f["field"]] = f
        # SchemaUtil.copySchemaBasics: name, version, doc, parameters; not `optional` (the builder's required).
        out: Schema = {"type": "struct", "fields": list(fields.values()), "optional": False}
        if "name" in left:
            out["name"] = left["name"]
        return out

    def _first(self, array: list[Any]) -> Any:
        ref: Any = None
        for element in array:
            if element is None:
                continue
            if ref is None:
                ref = element
            if self._kind(element) != self._kind(ref):
                raise NotExpandable("Field is not a homogenous array")
            if _scalar(ref) in ("int32", "int64", "double") and _scalar(element) != _scalar(ref):
                raise NotExpandable("Field is not a homogenous array, different number types")
        return ref

    @staticmethod
    def _kind(v: Any) -> str:
        t = _scalar(v)
        if t in ("int32", "int64", "double"):
            return "number"
        return t or ("array" if isinstance(v, list) else "object")

    # -- values (JsonSchemaData.toConnectData), validated as Struct.put validates them -----------------------
    def value(self, node: dict[str, Any], schema: Schema) -> Any:
        return self._struct(node, schema)

    def _struct(self, node: dict[str, Any], schema: Schema) -> dict[str, Any]:
        if schema.get("type") != "struct":
            raise ValueError(f"Invalid Java object for schema with type {schema.get('type', '').upper()}: "
                             "class Struct")
        return {f["field"]: self._value(node[f["field"]], f, f["field"]) if f["field"] in node else None
                for f in S.fields(schema)}

    def _value(self, node: Any, schema: Schema, name: str) -> Any:
        if node is None:
            return None
        if isinstance(node, dict):
            return self._struct(node, schema)
        if isinstance(node, list):
            if schema.get("type") != "array":
                raise ValueError(f"Invalid Java object for schema with type {schema.get('type', '').upper()}: "
                                 f"class ArrayList for field: \"{name}\"")
            return [self._value(x, schema["items"], name) for x in node]
        t = _scalar(node)
        if isinstance(node, int) and not isinstance(node, bool) and not _INT64[0] <= node < _INT64[1]:
            t = "decimal"  # Jackson's BigInteger node: decimalValue(), which no schema accepts
        if t != schema.get("type"):
            raise ValueError(f"Invalid Java object for schema with type {schema.get('type', '').upper()} "
                             f"for field: \"{name}\"")
        return float(node) if t == "double" else node

