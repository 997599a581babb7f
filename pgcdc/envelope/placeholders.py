"""`unavailable.value.placeholder` in each column's type: the value an unchanged TOASTed column gets in an update
(REPLICA IDENTITY DEFAULT: PostgreSQL does not send a value the update left out of line and alone).

Debezium hands the column's converter a marker chosen by the PostgreSQL type name, and writes what that
converter makes of it (measured on 3.6, tests/conformance/test_toast_placeholders.py):
- text[], varchar[], char[], json[] and jsonb[] get a one-element array of the placeholder text; int4[] and int8[]
  the placeholder's bytes as signed integers, and so does date[] where its days are plain integers (not
  under time.precision.mode=connect); uuid[] a one-element array of the name-based UUID of its bytes
  (Java's UUID.nameUUIDFromBytes); bytea[] a one-element array of its bytes where bytea is written as bytes;
- every other column gets the placeholder text, so a column written as a string (text, json, xml, a range,
  numeric in string mode, bytea in hex mode) holds it, bytea written as bytes holds its bytes, an hstore map
  {placeholder: placeholder} (its JSON text in json mode);
- and the rest is null: any other array (int2[], numeric[], float8[], timestamptz[], an enum's or a
  domain's array ...), a double (numeric in double mode), bytea as base64, a struct (geometry, point,
  variable-scale numeric), a bit string, a decimal.

The placeholder is its text's UTF-8 bytes, or the octets after `hex:` (Debezium's prefix); the text is those bytes
decoded as UTF-8 (malformed bytes replaced), as Java's `new String(bytes)`.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from typing import Any

import orjson

from pgcdc.pgtypes import Converter

# Types of a fixed length (pg_type.typlen > 0): never stored out of line, so never an unchanged TOASTed value.
FIXED_LENGTH = frozenset((
    "bool", "char", "int2", "int4", "int8", "float4", "float8", "money", "oid", "xid", "xid8", "cid", "tid", "date",
    "time", "timetz", "timestamp", "timestamptz", "interval", "uuid", "point", "line", "lseg", "box", "circle",
    "macaddr", "macaddr8", "pg_lsn", "name", "regclass", "regtype", "regproc", "regprocedure", "regoper",
    "regoperator", "regconfig", "regdictionary", "regnamespace", "regrole", "regcollation"))
_TEXT_ARRAYS = frozenset(("_text", "_varchar", "_bpchar", "_json", "_jsonb"))
_INT_ARRAYS = frozenset(("_int4", "_int8"))


def placeholder_bytes(setting: str) -> bytes:
    """The placeholder's bytes: `hex:` and hexadecimal octets, or the text's UTF-8 bytes. ValueError: bad hex."""
    if setting.startswith("hex:"):
        return bytes.fromhex(setting[4:])
    return setting.encode()


def placeholder_codes(raw: bytes) -> list[int]:
    """The placeholder's bytes as Java's signed bytes: int4[], int8[] and date[] (as days) hold them."""
    return [b - 256 if b > 127 else b for b in raw]


def placeholder_uuid(raw: bytes) -> str:
    """The name-based UUID of the placeholder's bytes (Java's UUID.nameUUIDFromBytes): uuid[]'s one element."""
    return str(uuid.UUID(bytes=hashlib.md5(raw).digest(), version=3))


def placeholder_value(conv: Converter, base_type_name: str, domain: bool, setting: str, binary_mode: str) -> Any:
    """The value an unchanged TOASTed column of this type and converter gets (None: null)."""
    raw = placeholder_bytes(setting)
    text = raw.decode("utf-8", "replace")
    schema = conv.schema
    kind = schema["type"]
    marker = None if domain else base_type_name  # a domain's type name is its own: the plain marker
    if kind == "array":
        if marker in _TEXT_ARRAYS:
            return [text]
        if marker in _INT_ARRAYS or (marker == "_date" and schema["items"].get("name") == "io.debezium.time.Date"):
            return placeholder_codes(raw)
        if marker == "_uuid":
            return [placeholder_uuid(raw)]
        if marker == "_bytea" and binary_mode == "bytes":
            return [base64.b64encode(raw).decode()]
        return None
    if kind == "map":
        return {text: text}
    if kind == "bytes":
        if schema.get("name") is not None:  # a decimal, a bit string
            return None
        return base64.b64encode(raw).decode()
    if kind == "string":
        if base_type_name == "bytea" and binary_mode != "hex":  # base64 modes: the converter takes no text
            return None
        if base_type_name == "hstore":  # hstore.handling.mode=json
            return orjson.dumps({text: text}).decode()
        return text
    return None
