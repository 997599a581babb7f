"""JsonConverter with `decimal.format=NUMERIC` (KIP-481): a Connect Decimal written as a JSON number.

The envelope writes a Decimal as JsonConverter's default does, base64 of the unscaled integer's big-endian two's
complement. With NUMERIC, Kafka's JsonConverter writes Jackson's number node of the BigDecimal instead, whose text
is `BigDecimal.toString()`: plain digits with the scale's fraction (`1.50`), or scientific notation once the
adjusted exponent is below -6 (`0E-10`, `1.23E-8`). That applies wherever a Decimal is written: field values at
any depth (structs, arrays, maps) and a field's schema `default`. Everything else is the record as it was.

    decimal_fixer(schema) -> f(value) -> value with its decimals as orjson Fragments, or None (no decimal)
    numeric_schema(schema) -> the schema with its decimal defaults as numbers (the same object when it has none)
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.transforms.codec import value_fixer

DECIMAL = "org.apache.kafka.connect.data.Decimal"
Fixer = Callable[[Any], Any]


def decimal_format(v: str) -> str:
    """JsonConverterConfig's decimal.format: BASE64 or NUMERIC, any case."""
    low = v.strip().lower()
    if low not in ("base64", "numeric"):
        raise ValueError("must be one of (case insensitive): BASE64, NUMERIC")
    return low


def base64_only(converter: str) -> Callable[[str], str]:
    """decimal.format of a converter writing the envelope's payload as it is: NUMERIC is not written yet."""
    def check(v: str) -> str:
        if decimal_format(v) == "numeric":
            raise ValueError(f"NUMERIC is not supported yet by {converter} (Connect decimals are written as base64 "
                             "bytes); decimal.handling.mode=string writes them as text, double as JSON numbers")
        return "base64"
    return check


def big_decimal_text(unscaled: int, scale: int) -> str:
    """Java's BigDecimal.toString() of unscaled × 10^-scale."""
    digits = str(abs(unscaled))
    sign = "-" if unscaled < 0 else ""
    adjusted = len(digits) - 1 - scale
    if scale == 0:
        return sign + digits
    if scale > 0 and adjusted >= -6:
        if len(digits) > scale:
            return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
        return f"{sign}0.{'0' * (scale - len(digits))}{digits}"
    text = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    if adjusted != 0:
        text += "E" + ("+" if adjusted > 0 else "") + str(adjusted)
    return sign + text


def _is_decimal(schema: dict[str, Any]) -> bool:
    return schema.get("name") == DECIMAL and schema.get("type") == "bytes"


def _scale(schema: dict[str, Any]) -> int:
    return int((schema.get("parameters") or {}).get("scale", "0"))


def _number(scale: int) -> Fixer:
    def number(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        unscaled = int.from_bytes(base64.b64decode(v), "big", signed=True)
        return orjson.Fragment(big_decimal_text(unscaled, scale))
    return number


def decimal_fixer(schema: dict[str, Any] | None) -> Fixer | None:
    """A function writing the decimals of a payload of `schema` as numbers (in place in its dicts); None when the
    schema holds no decimal."""
    return value_fixer(schema, lambda s: _number(_scale(s)) if _is_decimal(s) else None)


def numeric_schema(schema: Any) -> Any:
    """`schema` with every decimal `default` written as a number (a new dict where one changes)."""
    if isinstance(schema, list):
        items = [numeric_schema(x) for x in schema]
        return items if any(a is not b for a, b in zip(items, schema, strict=True)) else schema
    if not isinstance(schema, dict):
        return schema
    out = {k: numeric_schema(v) for k, v in schema.items() if isinstance(v, (dict, list))}
    if _is_decimal(schema) and isinstance(schema.get("default"), str):
        out["default"] = _number(_scale(schema))(schema["default"])
    if not any(out[k] is not schema[k] for k in out):
        return schema
    return {k: out.get(k, v) for k, v in schema.items()}
