"""Kafka Connect's Cast$Key/$Value (org.apache.kafka.connect.transforms.Cast, 4.x): fields (`spec=name:type,…`) or
the whole key/value (`spec=type`) cast to int8…int64, float32, float64, boolean or string.

Values follow Java's conversions: a number narrowed to an integer type wraps (a double is first truncated and
saturated to a long), booleans are 1/0, a string is parsed, a number becomes Java's text (Double.toString,
BigDecimal.toString for Connect's Decimal). A cast field's schema is the bare target type with the field's
optionality (its logical name, e.g. io.debezium.time.MicroTimestamp, is dropped). Casting bytes (Java prints a
byte array's identity) or a struct fails the record. A float32 is Java's float: a float32 input is the float's
exact value (widened to float64 as Java widens it, printed with Float.toString as a string), and a float32 output
is rounded to a float and carried as the double its Float.toString text (java_float.py) reads as, which the codec
writes back as that same text. Output schemas are built once per input schema.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema, Transform
from pgcdc.transforms import schema as S
from pgcdc.pgtypes.java_float import double_text, float32_text, to_float32

TARGETS = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string")
_JSON_TYPE = {"float32": "float", "float64": "double"}
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _long_of_double(d: float) -> int:
    if d != d:
        return 0
    return max(-(1 << 63), min((1 << 63) - 1, int(d)))


class _Float32(float):
    """A float32 input's exact value, marked so a cast to string prints it as Java's Float.toString."""


def _reader(schema: Schema) -> Callable[[Any], Any]:
    """The Java value behind a JSON value of `schema`: Decimal for Connect's Decimal, else the JSON value."""
    if schema.get("name") == _DECIMAL:
        scale = int((schema.get("parameters") or {}).get("scale", 0))
        return lambda v: Decimal(int.from_bytes(base64.b64decode(v), "big", signed=True)).scaleb(-scale)
    if schema.get("type") in ("bytes", "struct", "array", "map"):
        t = schema.get("type")
        def refuse(v: Any) -> Any:
            raise ValueError(f"Cast transformation does not support casting from {str(t).upper()} "
                             "(a Java byte array or a struct)")
        return refuse
    if schema.get("type") == "float":  # JsonConverter's FLOAT32: the JSON text is the float's, not its value
        return lambda v: _Float32(to_float32(float(v)))
    return lambda v: v


_round32 = to_float32


def _cast(target: str) -> Callable[[Any], Any]:
    def to_int(v: Any) -> int:
        if isinstance(v, bool):
            return 1 if v else 0
        if isinstance(v, str):
            n = int(v.strip()) if v.strip().lstrip("+-").isdigit() else None
            if n is None or _wrap(n, _BITS[target]) != n:
                raise ValueError(f"For input string: \"{v}\"")
            return n
        if isinstance(v, float):
            return _wrap(_long_of_double(v), _BITS[target])
        if isinstance(v, Decimal):
            return _wrap(int(v), _BITS[target])
        return _wrap(int(v), _BITS[target])

    def to_float(v: Any) -> float:
        if isinstance(v, bool):
            return 1.0 if v else 0.0
        return float(v)

    def to_float32(v: Any) -> float:
        f = _round32(to_float(v))
        return float(float32_text(f)) if f == f and f not in (float("inf"), float("-inf")) else f

    def to_bool(v: Any) -> bool:
        if isinstance(v, str):
            return v.lower() == "true"  # Boolean.parseBoolean
        if isinstance(v, bool):
            return v
        return (_long_of_double(v) if isinstance(v, float) else int(v)) != 0

    def to_string(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, _Float32):
            return float32_text(v)  # Float.toString
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                return "NaN" if v != v else "Infinity" if v > 0 else "-Infinity"
            return double_text(v)  # Double.toString
        return str(v)

    if target in _BITS:
        return to_int
    if target == "boolean":
        return to_bool
    if target == "float32":
        return to_float32
    return to_string if target == "string" else to_float


def _compose(read: Callable[[Any], Any], conv: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: conv(read(v))


def cast(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        spec = opts.get("spec", "").strip()
        if not spec:
            raise ConfigError(f"{where}.spec: required (field:type pairs, or one type for the whole value)")
        whole: str | None = None
        casts: dict[str, str] = {}
        for item in (x.strip() for x in spec.split(",")):
            name, sep, target = item.rpartition(":")
            if target not in TARGETS:
                raise ConfigError(f"{where}.spec: {target!r} is not a type Cast supports ({', '.join(TARGETS)})")
            if not sep:
                if len(spec.split(",")) != 1:
                    raise ConfigError(f"{where}.spec: a whole-value cast must be the only entry")
                whole = target
            else:
                casts[name] = target
        cache: dict[int, tuple[Schema, Schema, list[tuple[str, Callable[[Any], Any]]]]] = {}

        def out_schema(target: str, optional: bool) -> Schema:
            return {"type": _JSON_TYPE.get(target, target), "optional": optional}

        def apply(r: Record) -> Record:
            schema, value = (r.key_schema, r.key) if key else (r.value_schema, r.value)
            if value is None:
                return r
            if whole is not None:
                conv = _cast(whole)
                v = conv(_reader(schema)(value)) if schema is not None else conv(value)
                new_schema = out_schema(whole, bool(schema.get("optional"))) if schema is not None else None
            elif schema is None:
                if not isinstance(value, dict):
                    raise ValueError(f"Only Map objects supported in absence of schema for [cast types], found: "
                                     f"{type(value).__name__}")
                v = {k: (_cast(casts[k])(x) if k in casts and x is not None else x) for k, x in value.items()}
                new_schema = None
            else:
                hit = cache.get(id(schema))
                if hit is None or hit[0] is not schema:
                    fields, convs = [], []
                    for f in S.fields(schema):
                        t = casts.get(f["field"])
                        if t is None:
                            fields.append(f)
                            continue
                        fields.append(S.as_field(f["field"], out_schema(t, bool(f.get("optional")))))
                        convs.append((f["field"], _compose(_reader(f), _cast(t))))
                    hit = cache[id(schema)] = (schema, S.copy_basics(schema, fields), convs)
                new_schema = hit[1]
                v = dict(value)
                for name, conv in hit[2]:
                    if v.get(name) is not None:
                        v[name] = conv(v[name])
            if key:
                return r.new(key_schema=new_schema, key=v)
            return r.new(value_schema=new_schema, value=v)
        return apply
    return make
