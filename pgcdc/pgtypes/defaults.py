"""Column defaults and NOT NULL fallbacks, the way Debezium puts them in schemas and values.

Debezium adds `"default"` to a field's schema when the column has a DEFAULT it can evaluate as a literal; a
NOT NULL column whose DEFAULT is an expression (e.g. `nextval(...)` of a serial) gets the type's fallback
value instead. The same value fills NOT NULL columns that pgoutput sent as null: the non-key columns of
a key-only old tuple (REPLICA IDENTITY DEFAULT deletes and key changes).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from pgcdc.pgtypes.registry import Converter

_ZERO_DOUBLE = orjson.Fragment(b"0.0")
_BY_NAME: dict[str, Any] = {
    "io.debezium.time.ZonedTimestamp": "1970-01-01T00:00:00.000000Z",
    "org.apache.kafka.connect.data.Decimal": "AA==",  # BigDecimal.ZERO
    "io.debezium.data.VariableScaleDecimal": {"scale": 0, "value": "AA=="},
}
_BY_TYPE: dict[str, Any] = {
    "int8": 0, "int16": 0, "int32": 0, "int64": 0, "float": _ZERO_DOUBLE, "double": _ZERO_DOUBLE,
    "boolean": False, "string": "", "bytes": "", "array": [],
}
_QUOTED = re.compile(r"^'((?:[^']|'')*)'(?:::[\w\s.\"\[\]()]+)?$")
_NUMBER = re.compile(r"^\(?(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\)?(?:::[\w\s.\"]+)?$")


def fallback(conv: Converter) -> Any:
    name = conv.schema.get("name")
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _BY_TYPE.get(conv.schema["type"])


def literal_text(expr: str) -> str | None:
    """The text of a literal DEFAULT expression ('abc'::text, 42, -1.5, true), or None for expressions."""
    expr = expr.strip()
    m = _QUOTED.match(expr)
    if m:
        return m.group(1).replace("''", "'")
    m = _NUMBER.match(expr)
    if m:
        return m.group(1)
    if expr in ("true", "false"):
        return expr[0]  # boolean output form: t / f
    return None


# Nullable columns of these types get no schema default from Debezium, even for a literal DEFAULT; nor do
# nullable columns whose DEFAULT is an expression other than the current time (measured on 3.6: bytea, arrays,
# variable-scale numeric, `(1 + 1)` have none; `now()` has the type's fallback).
_NO_NULLABLE_DEFAULT = frozenset({"bytes", "array", "io.debezium.data.VariableScaleDecimal"})
_CURRENT_TIME = re.compile(r"^(?:now\(\)|current_timestamp|current_date|current_time|localtime|localtimestamp)"
                           r"(?:\(\d+\))?(?:::[\w\s]+)?$", re.IGNORECASE)


def default_value(expr: str | None, conv: Converter, not_null: bool) -> Any:
    """The schema default for a column, or None when Debezium would put none."""
    if expr is None:
        return None
    if not not_null and (conv.schema.get("name") or conv.schema["type"]) in _NO_NULLABLE_DEFAULT:
        return None
    text = literal_text(expr)
    if text is not None:
        try:
            return text if conv.fn is None else conv.fn(text)
        except (ValueError, KeyError, ArithmeticError):
            pass
    # An expression (nextval, now()): Debezium puts the type's fallback as the default of a NOT NULL column,
    # and of a nullable one only for the current time (measured on 3.6).
    if not_null or _CURRENT_TIME.match(expr.strip()):
        return fallback(conv)
    return None
