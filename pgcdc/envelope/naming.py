"""Topic names, as Debezium's topic naming strategies build them (measured on 3.6).

- `io.debezium.schema.SchemaTopicNamingStrategy` (the default): `<prefix><d><schema><d><table>`;
- `io.debezium.schema.DefaultTopicNamingStrategy`: `<prefix><d><table>` (no schema);
- `io.debezium.schema.DefaultUnicodeTopicNamingStrategy`: `<prefix><d><table>`, with every character outside
  `[A-Za-z0-9.-]` of the table name written as `_uXXXX` (so `_` becomes `_u005f`).

`<d>` is `topic.delimiter`. The first two replace characters Kafka does not allow in a topic name (outside
`[A-Za-z0-9._-]`) with `_`. The record schemas (`<topic>.Key`, `<topic>.Envelope`) are named after the topic.
"""

from __future__ import annotations

import re

SCHEMA_STRATEGY = "io.debezium.schema.SchemaTopicNamingStrategy"
DEFAULT_STRATEGY = "io.debezium.schema.DefaultTopicNamingStrategy"
UNICODE_STRATEGY = "io.debezium.schema.DefaultUnicodeTopicNamingStrategy"
STRATEGIES = (SCHEMA_STRATEGY, DEFAULT_STRATEGY, UNICODE_STRATEGY)

_INVALID = re.compile(r"[^A-Za-z0-9._-]")
_NOT_UNICODE_SAFE = re.compile(r"[^A-Za-z0-9.-]")


def _escape(m: re.Match[str]) -> str:
    return "".join(f"_u{unit:04x}" for unit in _utf16_units(m.group(0)))


def _utf16_units(ch: str) -> list[int]:
    data = ch.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def data_topic(prefix: str, schema: str, table: str, *, delimiter: str = ".",
               strategy: str = SCHEMA_STRATEGY) -> str:
    if strategy == UNICODE_STRATEGY:
        return f"{prefix}{delimiter}{_NOT_UNICODE_SAFE.sub(_escape, table)}"
    if strategy == DEFAULT_STRATEGY:
        name = f"{prefix}{delimiter}{table}"
    else:
        name = f"{prefix}{delimiter}{schema}{delimiter}{table}"
    return _INVALID.sub("_", name)


# schema.name.adjustment.mode / field.name.adjustment.mode (Debezium's SchemaNameAdjuster), per UTF-16 unit, as
# measured on Debezium 3.6: `avro` writes `_` for a unit Avro does not allow, and puts `_` before a leading digit;
# `avro_unicode` writes `_uXXXX` for it and for `_` itself (its escape character), a leading digit included. A
# schema's full name may hold dots; a field name may not.
ADJUSTMENT_MODES = ("none", "avro", "avro_unicode")


def _letter(unit: int) -> bool:
    return 65 <= unit <= 90 or 97 <= unit <= 122  # A-Z a-z


def adjust_name(name: str, mode: str, *, field: bool) -> str:
    if mode == "none":
        return name
    unicode = mode == "avro_unicode"
    out = []
    for i, unit in enumerate(_utf16_units_of(name)):
        later = 48 <= unit <= 57 or (unit == 46 and not field)  # digits, dots: valid after the first unit
        if _letter(unit) or (unit == 95 and not unicode) or (i > 0 and later):
            out.append(chr(unit))
        elif unicode:
            out.append(f"_u{unit:04x}")
        else:
            out.append("_" + chr(unit) if later else "_")
    return "".join(out)


def _utf16_units_of(text: str) -> list[int]:
    data = text.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]
