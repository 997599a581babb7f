"""Debezium's PartitionRouting (io.debezium.transforms.partitions.PartitionRouting, 3.6): the record's partition
from the hashes of envelope fields (`after.id`, `source.table`, `change.name` where `change` is `before` for a
delete and `after` otherwise), summed as Java ints, made non-negative and taken modulo `partition.topic.num`.

`partition.hash.function=java` (the default; any other value but `murmur` too, as HashFunction.parse reads it)
hashes each field with Java's `hashCode()` of the value Debezium holds for that field's schema, chosen once per
table version: String, Byte/Short/Integer, Long, Boolean, Float, Double, BigDecimal (Connect's Decimal) and
ByteBuffer (bytes). `murmur` hashes with Debezium's MurmurHash3 (murmur.py): a String by its UTF-8 bytes,
anything else by its Java hash code. A struct's or an array's hash depends on its schema object or its element
classes, and a java.util.Date (Connect's Date/Time/Timestamp) is not what pgcdc holds, so fields of those types
are refused on the first record that has one.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema
from pgcdc.transforms import murmur
from pgcdc.transforms import schema as S

OPTIONS = ("partition.payload.fields", "partition.topic.num", "partition.hash.function")
Hash = Callable[[Any], int]
_DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _string(v: str) -> int:
    h = 0
    for unit in struct.unpack(f"<{len(v.encode('utf-16-le')) // 2}H", v.encode("utf-16-le")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return _int32(h)


def _long(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return _int32(v ^ (v >> 32))


def _double(v: Any) -> int:
    return _long(struct.unpack(">q", struct.pack(">d", float(v)))[0])


def _float(v: Any) -> int:
    return _int32(struct.unpack(">i", struct.pack(">f", float(v)))[0])


def _big_integer(n: int) -> int:
    """BigInteger.hashCode: over the magnitude's big-endian 32-bit words, times the sign."""
    mag, h = abs(n), 0
    words = []
    while mag:
        words.append(mag & 0xFFFFFFFF)
        mag >>= 32
    for w in reversed(words):
        h = (31 * h + w) & 0xFFFFFFFF
    return _int32(h * (1 if n > 0 else -1 if n < 0 else 0))


def _decimal(scale: int) -> Hash:
    def h(v: str) -> int:
        unscaled = int.from_bytes(base64.b64decode(v), "big", signed=True)
        return _int32(31 * _big_integer(unscaled) + scale)
    return h


def _byte_buffer(v: str) -> int:
    """ByteBuffer.hashCode (Debezium holds bytes in a ByteBuffer): 31·h + byte, from the last byte to the first."""
    h = 1
    for b in reversed(base64.b64decode(v)):
        h = (31 * h + (b - 256 if b > 127 else b)) & 0xFFFFFFFF
    return _int32(h)


_JAVA: dict[str, Hash] = {"string": _string, "int8": int, "int16": int, "int32": int, "int64": _long,
                          "boolean": lambda v: 1231 if v else 1237, "float": _float, "double": _double,
                          "bytes": _byte_buffer}


def _java_hash(schema: Schema) -> Hash | str:
    """The Java hashCode of a value of `schema`, or why there is none to reproduce."""
    t, name = schema.get("type"), schema.get("name")
    if name == _DECIMAL:
        return _decimal(int((schema.get("parameters") or {}).get("scale", 0)))
    if name in ("org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time",
                "org.apache.kafka.connect.data.Timestamp"):
        return f"a java.util.Date ({name})"
    return _JAVA.get(str(t), f"a {t} value, whose Java hash code is its schema's or its elements' classes'")


def _murmur_hash(schema: Schema) -> Hash | str:
    """MurmurHash3.hash(Object): a String's own bytes, anything else its Java hashCode's."""
    if schema.get("type") == "string" and schema.get("name") != _DECIMAL:
        return murmur.hash_string
    java = _java_hash(schema)
    if isinstance(java, str):
        return java
    code = murmur.hash_code
    return lambda v: code(java(v))


class PartitionRouting:
    def __init__(self, where: str, opts: Mapping[str, str]) -> None:
        spec = opts.get("partition.payload.fields")
        if not spec or not spec.strip():
            raise ConfigError(f"{where}.partition.payload.fields: required (envelope fields such as after.id)")
        paths = [p.strip() for p in spec.split(",")]
        if any(not p for p in paths):
            raise ConfigError(f"{where}.partition.payload.fields: an empty element in {spec!r}")
        self.paths = [[s.strip() for s in p.split(".")] for p in paths]
        num = opts.get("partition.topic.num", "").strip()
        if not num:
            raise ConfigError(f"{where}.partition.topic.num: required (the topic's number of partitions)")
        try:
            self.num = int(num)
        except ValueError:
            raise ConfigError(f"{where}.partition.topic.num: expected a positive integer (got {num!r})") from None
        if self.num <= 0:
            raise ConfigError(f"{where}.partition.topic.num: expected a positive integer (got {num!r})")
        # HashFunction.parse: anything but murmur is java.
        murmur_ = opts.get("partition.hash.function", "java").strip().lower() == "murmur"
        self._hash_for = _murmur_hash if murmur_ else _java_hash
        self._plans: dict[int, tuple[Schema, list[tuple[list[str], Hash | str] | None]]] = {}

    def _plan(self, vs: Schema) -> list[tuple[list[str], Hash | str] | None]:
        hit = self._plans.get(id(vs))
        if hit is None or hit[0] is not vs:
            plan: list[tuple[list[str], Hash | str] | None] = []
            for path in self.paths:
                s: Schema | None = vs
                for part in path:
                    sub = S.field(s, "after" if part == "change" and s is vs else part) if s is not None else None
                    s = S.unfield(sub) if sub is not None else None
                plan.append(None if s is None else (path, self._hash_for(s)))  # a missing field is left out
            hit = self._plans[id(vs)] = (vs, plan)
        return hit[1]

    def __call__(self, r: Record) -> Record:
        vs, env = r.value_schema, r.value
        if env is None or vs is None or not str(vs.get("name", "")).endswith(".Envelope") \
                or not isinstance(env, dict) or env.get("op") in ("t", "m"):
            return r
        total, found = 0, False
        for step in self._plan(vs):
            if step is None:
                continue
            path, hash_ = step
            v: Any = env
            for i, part in enumerate(path):
                if v is None:  # Struct.get on a null struct: a NullPointerException in Debezium
                    raise ValueError(f"Unprocessable message: {'.'.join(path[:i])} is null")
                if part == "change" and i == 0:
                    part = "before" if env.get("op") == "d" else "after"
                v = v.get(part)
            if v is None:
                continue
            if isinstance(hash_, str):
                raise ValueError(f"Unprocessable message: {'.'.join(path)} is {hash_}")
            total, found = _int32(total + hash_(v)), True
        if not found:
            return r
        normalized = total & 0x7FFFFFFF
        return r.new(partition=(0 if normalized == 0x7FFFFFFF else normalized) % self.num)
