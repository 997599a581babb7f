"""A Kafka Connect schema (in JsonConverter's JSON form) as the JSON Schema text Confluent's JsonSchemaConverter
registers for it.

Follows io.confluent.connect.json.JsonSchemaData.fromConnectSchema (Confluent 7.0.16): int8…int64 are
`integer`, float32/float64 `number`, each with `connect.type`; bytes a `string` (a Decimal a `number`) with
`connect.type: bytes`; a struct an `object` whose `properties` carry `connect.index`; an optional schema a
`oneOf` of `{"type":"null"}` and the schema, the field's `connect.index` on the `oneOf`; the Connect name is the
`title`, doc the `description`, version `connect.version`, parameters `connect.parameters`.

The text is what that everit-json-schema Schema's toString writes, read back and written again by Jackson
(JsonSchema.canonicalString), so the member order is everit's: keyword order per schema kind, then the
unprocessed `connect.*` members and the `properties` in java.util.HashMap iteration order, which follows each
key's String.hashCode and the table size the map had (javamap.py).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from pgcdc.converters.javamap import copied_order, inserted_order, jsonobject_order
from pgcdc.pgtypes.java_float import double_text, float32_text

DECIMAL = "org.apache.kafka.connect.data.Decimal"
_ID_PREFIX = "io.confluent.connect.json"
_CONNECT_TYPE = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "float": "float32",
                 "double": "float64", "bytes": "bytes"}
_INTEGERS = ("int8", "int16", "int32", "int64")
# Jackson's string escapes (CharTypes): the two-character ones, other control characters as \u00XX.
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _string(s: str) -> str:
    return '"' + _ESCAPE.sub(lambda m: _SHORT.get(m.group(), f"\\u{ord(m.group()):04X}"), s) + '"'


def _jackson_number(text: str) -> str:
    """A number org.json wrote, as Jackson writes it back: integers as they are, others read as BigDecimal
    (USE_BIG_DECIMAL_FOR_FLOATS) and written by BigDecimal.toString, whose rules Python's Decimal shares."""
    if re.fullmatch(r"-?\d+", text):
        return text
    return str(Decimal(text))


def _orgjson_number(schema_type: str, value: Any) -> str:
    """JSONObject.numberToString of the Java Number a default becomes (Short, Integer, Long, Float, Double):
    toString, then trailing zeros after a decimal point shaved off."""
    if schema_type in _INTEGERS:
        text = str(int(value))
    elif isinstance(value, str) or value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"JSON does not allow non-finite numbers: default {value}")  # JSONObject.testValidity
    else:
        text = float32_text(value) if schema_type == "float" else double_text(float(value))
        if "." in text and "e" not in text and "E" not in text:
            text = text.rstrip("0").rstrip(".")
    if not _NUMBER.fullmatch(text):
        return _string(text)
    return _jackson_number(text)


def _default(schema: dict[str, Any], value: Any) -> str:
    """The `default` member's JSON: JsonSchemaData.toJsonSchemaValue of fromConnectData(default) through org.json,
    as Jackson writes it again. The value is in JsonConverter's JSON form (bytes and decimals base64 already,
    as BinaryNode.asText writes them)."""
    t = schema["type"]
    if value is None:
        return "null"
    if t == "boolean":
        return "true" if value else "false"
    if t in ("string", "bytes"):
        return _string(value)
    if t in _INTEGERS or t in ("float", "double"):
        return _orgjson_number(t, value)
    if t == "array":
        return "[" + ",".join(_default(schema["items"], v) for v in value) + "]"
    if t == "map" and isinstance(value, dict):
        keys = jsonobject_order(list(value), fresh=True)
        return "{" + ",".join(f"{_string(k)}:{_default(schema['values'], value[k])}" for k in keys) + "}"
    if t == "struct":
        by_name = {f["field"]: f for f in schema["fields"]}
        keys = jsonobject_order([f["field"] for f in schema["fields"] if f["field"] in value], fresh=True)
        return "{" + ",".join(f"{_string(k)}:{_default(by_name[k], value[k])}" for k in keys) + "}"
    raise ValueError(f"a default of type {t} is not supported")


def _members(unprocessed: dict[str, str]) -> list[str]:
    """The unprocessed members (`connect.*`) in the order everit's Schema writes them: its copy of the HashMap
    JsonSchemaData filled."""
    return [f"{_string(k)}:{unprocessed[k]}" for k in copied_order(inserted_order(list(unprocessed)))]


def _parameters(params: dict[str, str]) -> str | None:
    """`connect.parameters`: a HashMap (Collectors.toMap) printed through org.json's JSONObject(Map)."""
    keys = [k for k in params if not k.startswith(_ID_PREFIX)]
    if not keys:
        return None
    ordered = jsonobject_order(inserted_order(keys), fresh=False)
    return "{" + ",".join(f"{_string(k)}:{_string(params[k])}" for k in ordered) + "}"


class JsonSchemaText:
    """JsonSchemaData.rawSchemaFromConnectSchema, written as text. `additional_properties`:
    object.additional.properties."""

    def __init__(self, additional_properties: bool = True) -> None:
        self.additional_properties = additional_properties

    def text(self, schema: dict[str, Any]) -> str:
        return self._schema(schema, None, False)

    def _schema(self, schema: dict[str, Any], index: int | None, ignore_optional: bool) -> str:
        t = schema["type"]
        optional = bool(schema.get("optional"))
        unprocessed: dict[str, str] = {}
        if t in _CONNECT_TYPE:
            unprocessed["connect.type"] = _string(_CONNECT_TYPE[t])
        if t == "struct" and optional and not ignore_optional:
            # The optional struct: oneOf null and the struct made required; the field's index on the oneOf.
            inner = self._schema({**schema, "optional": False}, None, False)
            outer = {"connect.index": str(index)} if index is not None else {}
            return "{" + ",".join([*_members(outer), f'"oneOf":[{{"type":"null"}},{inner}]']) + "}"
        head: list[str] = []  # the members everit writes before the generic ones (type, …)
        tail: list[str] = []  # and after them (items, additionalProperties, properties)
        if t in _INTEGERS:
            head.append('"type":"integer"')
        elif t in ("float", "double") or (t == "bytes" and schema.get("name") == DECIMAL):
            head.append('"type":"number"')
        elif t in ("string", "bytes"):
            head.append('"type":"string"')
        elif t == "array":
            head.append('"type":"array"')
            tail.append(f'"items":{self._schema(schema["items"], None, False)}')
        elif t == "map":
            unprocessed["connect.type"] = '"map"'
            keys, values = schema["keys"], schema["values"]
            if keys["type"] == "string" and not keys.get("optional"):
                head.append('"type":"object"')
                tail.append(f'"additionalProperties":{self._schema(values, None, False)}')
            else:  # an array of {key, value} objects
                entry = {"key": self._schema(keys, 0, False), "value": self._schema(values, 1, False)}
                props = ",".join(f"{_string(k)}:{entry[k]}" for k in inserted_order(["key", "value"]))
                head.append('"type":"array"')
                tail.append(f'"items":{{"type":"object","properties":{{{props}}}}}')
        elif t == "struct":
            head.append('"type":"object"')
            if not self.additional_properties:
                head.append('"additionalProperties":false')
            fields = {f["field"]: f for f in schema["fields"]}
            if fields:
                props = ",".join(f"{_string(name)}:{self._schema(fields[name], i, False)}"
                                 for name, i in ((n, list(fields).index(n)) for n in inserted_order(list(fields))))
                tail.append(f'"properties":{{{props}}}')
        elif t != "boolean":
            raise ValueError(f"Unsupported type {t}")
        generic: list[str] = []
        if schema.get("name") is not None:
            generic.append(f'"title":{_string(schema["name"])}')
        if schema.get("doc") is not None:
            generic.append(f'"description":{_string(schema["doc"])}')
        if schema.get("version") is not None:
            unprocessed["connect.version"] = str(schema["version"])
        params = _parameters(schema.get("parameters") or {})
        if params is not None:
            unprocessed["connect.parameters"] = params
        if schema.get("default") is not None:
            generic.append(f'"default":{_default(schema, schema["default"])}')
        if optional and not ignore_optional:
            outer = {"connect.index": str(index)} if index is not None else {}
            inner = self._assemble(t, head, generic, _members(unprocessed), tail)
            return "{" + ",".join([*_members(outer), f'"oneOf":[{{"type":"null"}},{inner}]']) + "}"
        if index is not None:
            unprocessed["connect.index"] = str(index)
        return self._assemble(t, head, generic, _members(unprocessed), tail)

    @staticmethod
    def _assemble(t: str, head: list[str], generic: list[str], members: list[str], tail: list[str]) -> str:
        if t == "boolean":  # ToStringVisitor.visitBooleanSchema writes the generic members first
            return "{" + ",".join([*generic, *members, '"type":"boolean"']) + "}"
        return "{" + ",".join([*head, *generic, *members, *tail]) + "}"
