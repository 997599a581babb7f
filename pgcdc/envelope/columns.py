"""Column filters and privacy rules: `column.include.list`/`column.exclude.list`, `column.mask.with.N.chars`,
`column.mask.hash[.v2].<algorithm>.with.salt.<salt>`, `column.truncate.to.N.chars`.

Each rule is a comma-separated list of regular expressions matched against `<schema>.<table>.<column>`; a
rule changes that column's converter once, when its table's events are built (never per row). What the
rules do was measured on Debezium 3.6:

- excluded columns leave the schema and the values (before and after);
- `mask.with.N.chars` writes N asterisks, also for null, and adds the schema parameter `masked=true`;
- `mask.hash` writes the lowercase hex digest of the salt followed by the value — the value as Java serializes
  a String (v1) or its UTF-8 bytes (v2) — cut to the column's declared length if it has one; null stays null;
  schema parameter `masked=true`;
- `truncate.to.N.chars` keeps the first N characters; schema parameter `truncateLength=N`.

Only string columns are masked, hashed or truncated (a masked column of another type only gets `masked=true` in
its schema); an unchanged TOASTed value's placeholder is masked, hashed or truncated like a value; the schema's
`default` keeps the unmasked value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pgcdc.config_values import regex_items
from pgcdc.pgtypes import Converter

_MASK = re.compile(r"^column\.mask\.with\.(\d+)\.chars$")
_TRUNCATE = re.compile(r"^column\.truncate\.to\.(\d+)\.chars$")
_HASH = re.compile(r"^column\.mask\.hash\.(?:(v[12])\.)?([A-Za-z0-9-]+)\.with\.salt\.(.+)$")
RULE_NAME = re.compile(r"^column\.(mask\.with\.\d+\.chars|truncate\.to\.\d+\.chars|mask\.hash\..+\.with\.salt\..+)$")

# Java MessageDigest names -> hashlib names.
_ALGORITHMS = {"MD2": None, "MD5": "md5", "SHA-1": "sha1", "SHA-224": "sha224", "SHA-256": "sha256",
               "SHA-384": "sha384", "SHA-512": "sha512", "SHA-512/224": "sha512_224", "SHA-512/256": "sha512_256",
               "SHA3-224": "sha3_224", "SHA3-256": "sha3_256", "SHA3-384": "sha3_384", "SHA3-512": "sha3_512"}


def _patterns(value: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in regex_items(value))


def java_serialized_string(s: str) -> bytes:
    """ObjectOutputStream.writeObject(String) without the stream header's class data: magic, version,
    TC_STRING/TC_LONGSTRING, length, modified UTF-8."""
    data = bytearray()
    for ch in s:
        cp = ord(ch)
        if cp > 0xFFFF:  # a surrogate pair, each half encoded on its own (CESU-8)
            cp -= 0x10000
            for half in (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)):
                data += bytes((0xE0 | half >> 12, 0x80 | (half >> 6) & 0x3F, 0x80 | half & 0x3F))
        elif 0 < cp < 0x80:
            data.append(cp)
        elif cp < 0x800:  # U+0000 takes two bytes in modified UTF-8
            data += bytes((0xC0 | cp >> 6, 0x80 | cp & 0x3F))
        else:
            data += bytes((0xE0 | cp >> 12, 0x80 | (cp >> 6) & 0x3F, 0x80 | cp & 0x3F))
    if len(data) <= 0xFFFF:
        return b"\xac\xed\x00\x05\x74" + len(data).to_bytes(2, "big") + bytes(data)
    return b"\xac\xed\x00\x05\x7c" + len(data).to_bytes(8, "big") + bytes(data)


@dataclass(frozen=True)
class ColumnRules:
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    masks: tuple[tuple[tuple[re.Pattern[str], ...], int], ...] = ()
    truncates: tuple[tuple[tuple[re.Pattern[str], ...], int], ...] = ()
    hashes: tuple[tuple[tuple[re.Pattern[str], ...], str, bytes, str], ...] = ()  # patterns, algorithm, salt, v

    @classmethod
    def from_properties(cls, include: Sequence[str], exclude: Sequence[str],
                        rules: Mapping[str, str]) -> ColumnRules | None:
        """None when there is nothing to do (the common case: no per-table work at all)."""
        masks, truncates, hashes = [], [], []
        for name, value in rules.items():
            if m := _MASK.match(name):
                masks.append((_patterns(value), int(m.group(1))))
            elif m := _TRUNCATE.match(name):
                truncates.append((_patterns(value), int(m.group(1))))
            elif m := _HASH.match(name):
                version, algorithm, salt = m.group(1) or "v1", m.group(2), m.group(3)
                if _ALGORITHMS.get(algorithm.upper()) is None:
                    from pgcdc.errors import ConfigError

                    raise ConfigError(f"{name}: unknown hash algorithm {algorithm!r}; use one of "
                                      f"{', '.join(k for k, v in _ALGORITHMS.items() if v)}")
                hashes.append((_patterns(value), _ALGORITHMS[algorithm.upper()] or "", salt.encode(), version))
        if not (include or exclude or masks or truncates or hashes):
            return None
        return cls(tuple(re.compile(p, re.IGNORECASE) for p in include),
                   tuple(re.compile(p, re.IGNORECASE) for p in exclude), tuple(masks), tuple(truncates),
                   tuple(hashes))

    def excluded(self, full: str) -> bool:
        if self.include:
            return not any(p.fullmatch(full) for p in self.include)
        return any(p.fullmatch(full) for p in self.exclude)

    def apply(self, full: str, conv: Converter, length: int | None) -> tuple[Converter, Callable[[Any], Any] | None]:
        """(the column's converter under the rules, the function that also applies to null/filled values)."""
        if conv.schema.get("type") != "string":
            # A masked column of another type keeps its values; only its schema says `masked` (measured on 3.6
            # for bytea).
            if any(p.fullmatch(full) for patterns, _ in self.masks for p in patterns):
                params = {**conv.schema.get("parameters", {}), "masked": "true"}
                return dataclasses.replace(conv, schema={**conv.schema, "parameters": params}), None
            return conv, None
        fill: Callable[[Any], Any] | None = None
        for patterns, n in self.truncates:
            if any(p.fullmatch(full) for p in patterns):
                conv = _wrap(conv, _truncate(n), {"truncateLength": str(n)})
                fill = _nullsafe(_truncate(n))
                break
        for patterns, n in self.masks:
            if any(p.fullmatch(full) for p in patterns):
                return _wrap(conv, _constant("*" * n), {"masked": "true"}), _constant("*" * n)
        for patterns, algorithm, salt, version in self.hashes:
            if any(p.fullmatch(full) for p in patterns):
                fn = _hasher(algorithm, salt, version, length)
                return _wrap(conv, fn, {"masked": "true"}), _nullsafe(fn)
        return conv, fill


def _truncate(n: int) -> Callable[[str], str]:
    return lambda v: v[:n]


def _constant(value: str) -> Callable[[Any], str]:
    return lambda v: value


def _nullsafe(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else fn(v)


def _hasher(algorithm: str, salt: bytes, version: str, length: int | None) -> Callable[[str], str]:
    def digest(v: str) -> str:
        h = hashlib.new(algorithm)
        h.update(salt)
        h.update(v.encode() if version == "v2" else java_serialized_string(v))
        out = h.hexdigest()
        return out[:length] if length else out

    return digest


def _wrap(conv: Converter, after: Callable[[Any], Any], params: dict[str, str]) -> Converter:
    inner = conv.fn
    fn = after if inner is None else (lambda v: after(inner(v)))
    schema = dict(conv.schema)
    schema["parameters"] = {**schema.get("parameters", {}), **params}
    return dataclasses.replace(conv, schema=schema, fn=fn)


def declared_length(base_type_name: str, type_modifier: int) -> int | None:
    """The n of varchar(n) / char(n) (the type modifier is n + 4); None for unbounded text."""
    if base_type_name in ("varchar", "bpchar") and type_modifier > 4:
        return type_modifier - 4
    return None
