"""Column defaults and NOT NULL fallbacks, the way Debezium puts them in schemas and values.

The schema `default` follows Debezium 3.6's PostgresDefaultValueConverter (and was measured against it for every
type, tests/conformance/test_zoo_vs_debezium.py): only types it has a mapper for get one, keyed by the column's
type name (so a domain or an array gets none); the mapper takes the first quoted literal of the DEFAULT
expression, or its raw text when it has no quote, or, when the expression starts with a function call
(`nextval(...)`, `gen_random_uuid()`, `now()`) or is CURRENT_DATE and the like, the type's placeholder
('0', '00000000-0000-0000-0000-000000000000', '1970-01-01', ...); the column's converter then converts it, and a
value it cannot parse or a struct (unconstrained numeric, point) gives no default.

Separately, NOT NULL columns that pgoutput sent as null (the non-key columns of a key-only old tuple) are
filled with the schema default, else the type's fallback (`fallback`).
"""

from __future__ import annotations

import re
import uuid
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from pgcdc.pgtypes.registry import Converter

_ZERO_DOUBLE = orjson.Fragment(b"0.0")
_BY_NAME: dict[str, Any] = {
    "io.debezium.time.ZonedTimestamp": "1970-01-01T00:00:00.000000Z",
    "io.debezium.time.ZonedTime": "00:00:00Z",
    "org.apache.kafka.connect.data.Decimal": "AA==",  # BigDecimal.ZERO
    "io.debezium.data.VariableScaleDecimal": {"scale": 0, "value": "AA=="},
    "io.debezium.data.geometry.Point": {"x": _ZERO_DOUBLE, "y": _ZERO_DOUBLE, "wkb": "AQEAAAAAAAAAAAAAAAAAAAAAAAAA",
                                        "srid": None},
}
# Types whose fallback is not their schema's (hstore: an empty map, or its JSON text).
_BY_BASE_TYPE: dict[tuple[str, str], Any] = {("hstore", "string"): "{}", ("hstore", "map"): {}}
_BY_TYPE: dict[str, Any] = {
    "int8": 0, "int16": 0, "int32": 0, "int64": 0, "float": _ZERO_DOUBLE, "double": _ZERO_DOUBLE,
    "boolean": False, "string": "", "bytes": "", "array": [],
}


def fallback(conv: Converter, base_type_name: str = "", scale: int | None = None) -> Any:
    """The value Debezium writes for a NOT NULL column it has no value and no default for (measured on 3.6);
    `scale`: a numeric(p,s) column's s, or money's fraction digits."""
    if base_type_name in ("numeric", "money") and conv.schema["type"] == "string":
        # decimal.handling.mode=string: BigDecimal.ZERO at the column's scale ('0', '0.00')
        return f"{0:.{scale or 0}f}"
    special = _BY_BASE_TYPE.get((base_type_name, conv.schema["type"]))
    if special is not None:
        return special
    name = conv.schema.get("name")
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _BY_TYPE.get(conv.schema["type"])


# Debezium's patterns (PostgresDefaultValueConverter).
_LITERAL = re.compile(r"'([^']*(?:''[^']*)*)'")
_FUNCTION = re.compile(r"[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)")
_CURRENT = frozenset({"current_timestamp", "current_time", "current_date", "localtime", "localtimestamp"})
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_INT_RANGE = {"int2": 1 << 15, "int4": 1 << 31, "int8": 1 << 63}
_ENUM_CAST = re.compile(r"'(.*)'::[^:]+\Z", re.S)

# pg_type name -> (the generated-value placeholder, as text the column's converter reads; whether Debezium
# takes "NULL::<type>" as no default; a check or normalization of the extracted text, None: refused).
_INT = ("0", True, lambda t: t.lstrip("+") if _INTEGER.match(t) else None)
_MAPPERS: dict[str, tuple[str, bool, Any]] = {
    "int2": _INT, "int4": _INT, "int8": _INT,
    "float4": ("0.0", True, lambda t: t), "float8": ("0.0", True, lambda t: t),
    "numeric": ("0.0", True, lambda t: t),
    "bool": ("false", True, lambda t: "t" if t.lower() == "true" else "f"),  # Boolean.parseBoolean
    "bit": ("00", False, lambda t: t), "varbit": ("0", False, lambda t: t),
    "bpchar": ("", False, lambda t: t), "varchar": ("", False, lambda t: t), "text": ("", False, lambda t: t),
    "json": ("{}", False, lambda t: t), "jsonb": ("{}", False, lambda t: t), "xml": ("", False, lambda t: t),
    "uuid": ("00000000-0000-0000-0000-000000000000", False, lambda t: str(uuid.UUID(t))),
    "date": ("1970-01-01", False, lambda t: t),
    "time": ("00:00:00", False, lambda t: t),
    "timestamp": ("1970-01-01 00:00:00", False, lambda t: t),
    "timestamptz": ("1970-01-01 00:00:00+00", False, lambda t: t),
    "interval": ("00:00:00", False, lambda t: t),
}
_TRIMMED = frozenset({"bit", "varbit", "bool", "numeric", "float4", "float8", "int2", "int4", "int8", "uuid", "date",
                      "time", "timestamp", "timestamptz", "interval"})


def _extract(expr: str, placeholder: str) -> str | None:
    if _FUNCTION.match(expr) or expr.lower() in _CURRENT:
        return placeholder
    if "'" not in expr:
        return None if expr.startswith("NULL::") else expr
    m = _LITERAL.search(expr)
    return m.group(1).replace("''", "'") if m else None


def default_value(expr: str | None, conv: Converter, type_name: str | None, scale: int | None = None) -> Any:
    """The schema default of a column whose DEFAULT expression is `expr`, or None when Debezium puts none.
    `type_name` is the name Debezium looks its mapper up by: the pg_type name ('enum' for enums), None for a
    domain; `scale` a numeric(p,s) column's s."""
    if expr is None or type_name is None:
        return None
    if type_name == "enum":
        m = _ENUM_CAST.match(expr)
        return m.group(1) if m else None
    mapper = _MAPPERS.get(type_name)
    if mapper is None:
        return None
    placeholder, null_cast, check = mapper
    if type_name in _TRIMMED:
        expr = expr.strip()
    if null_cast and expr.startswith("NULL::"):
        return None
    text = _extract(expr, placeholder)
    if text is None:
        return None
    try:
        text = check(text)
        if text is None:
            return None
        if type_name in _INT_RANGE and not -_INT_RANGE[type_name] <= int(text) < _INT_RANGE[type_name]:
            return None
        if type_name == "numeric":
            exponent = Decimal(text).as_tuple().exponent  # new BigDecimal(text): a text it refuses, no default
            if scale is not None and isinstance(exponent, int) and -exponent < scale:
                # Debezium raises the scale to the column's ('1.5' of a numeric(5,2) is '1.50' in string mode)
                text = f"{Decimal(text):.{scale}f}"
        value = text if conv.fn is None else conv.fn(text)
    except (ValueError, KeyError, ArithmeticError, InvalidOperation, IndexError):
        return None
    # Connect cannot carry a struct as a default (KAFKA-12694): Debezium leaves it out.
    return None if isinstance(value, dict) else value
