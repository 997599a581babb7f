"""Debezium's incremental snapshot keys in offsets: a Java-serialized `Object[]`, as hex.

Debezium 3.6 stores `incremental_snapshot_primary_key` and `incremental_snapshot_maximum_key` with
java.io.ObjectOutputStream (measured: `aced0005` + `[Ljava.lang.Object;` + one boxed value per key column, as
the PostgreSQL JDBC driver returns them: int2 and int4 as Integer, int8 as Long, text types as String).
Only those types are written and read here; for any other key type pgcdc writes the serialized null array
(Debezium then reads the table again from its start) and reads such an offset the same way.
"""

from __future__ import annotations

import struct
from typing import Any

JAVA_NULL = "aced000570"
_HEADER = bytes.fromhex("aced0005")
_ARRAY_DESC = bytes.fromhex("7572") + struct.pack(">H", 19) + b"[Ljava.lang.Object;" + \
    bytes.fromhex("90ce589f1073296c") + bytes.fromhex("02000078") + b"\x70"
_NUMBER_DESC = b"\x72" + struct.pack(">H", 16) + b"java.lang.Number" + bytes.fromhex("86ac951d0b94e08b02000078") + \
    b"\x70"
# class name -> (serialVersionUID, field type code, struct format of the value)
_BOXES = {
    "java.lang.Integer": ("12e2a0a4f7818738", b"I", ">i"),
    "java.lang.Long": ("3b8be490cc8f23df", b"J", ">q"),
}
_BASE = 0x7E0000
_INT_TYPES = {"integer": "java.lang.Integer", "smallint": "java.lang.Integer", "bigint": "java.lang.Long"}


def java_class(type_name: str) -> str | None:
    """The Java class the JDBC driver gives for a column of this format_type(), if we serialize it."""
    if type_name in _INT_TYPES:
        return _INT_TYPES[type_name]
    if type_name == "text" or type_name.startswith(("character varying", "character(", "character")):
        return "java.lang.String"
    return None


def encode(values: tuple[str, ...] | None, types: tuple[str, ...]) -> str:
    """Hex of the serialized Object[] of `values` (output-function text) of columns of `types`."""
    if values is None or len(values) != len(types):
        return JAVA_NULL
    classes = [java_class(t) for t in types]
    if any(c is None for c in classes):
        return JAVA_NULL
    out = bytearray(_HEADER + _ARRAY_DESC)
    handle = _BASE + 2  # 0: the array's class, 1: the array
    seen: dict[str, int] = {}
    out += struct.pack(">i", len(values))
    for cls, text in zip(classes, values):
        assert cls is not None
        if cls == "java.lang.String":
            data = text.encode("utf-8")  # modified UTF-8 differs only for NUL and non-BMP characters
            if b"\x00" in data or any(ord(ch) > 0xFFFF for ch in text) or len(data) > 0xFFFF:
                return JAVA_NULL
            out += b"\x74" + struct.pack(">H", len(data)) + data
            handle += 1
            continue
        uid, code, fmt = _BOXES[cls]
        out += b"\x73"
        if cls in seen:
            out += b"\x71" + struct.pack(">I", seen[cls])
        else:
            seen[cls] = handle
            handle += 1
            out += b"\x72" + struct.pack(">H", len(cls)) + cls.encode() + bytes.fromhex(uid) + b"\x02\x00\x01" + \
                code + struct.pack(">H", 5) + b"value" + b"\x78"
            if "java.lang.Number" in seen:
                out += b"\x71" + struct.pack(">I", seen["java.lang.Number"])
            else:
                seen["java.lang.Number"] = handle
                handle += 1
                out += _NUMBER_DESC
        handle += 1  # the boxed object
        out += struct.pack(fmt, int(text))
    return out.hex()


def decode(hex_text: Any) -> tuple[str, ...] | None:
    """The key as output-function text, or None (null array, or a type not read here)."""
    if not isinstance(hex_text, str) or hex_text == JAVA_NULL:
        return None
    try:
        data = bytes.fromhex(hex_text)
    except ValueError:
        return None
    if not data.startswith(_HEADER + _ARRAY_DESC):
        return None
    pos = len(_HEADER + _ARRAY_DESC)
    handles: dict[int, str] = {_BASE: "[Ljava.lang.Object;"}
    handle = _BASE + 2
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    values: list[str] = []
    try:
        for _ in range(count):
            tag = data[pos]
            pos += 1
            if tag == 0x74:
                (n,) = struct.unpack_from(">H", data, pos)
                values.append(data[pos + 2:pos + 2 + n].decode("utf-8"))
                pos += 2 + n
                handle += 1
                continue
            if tag != 0x73:
                return None
            desc = data[pos]
            pos += 1
            if desc == 0x71:
                (ref,) = struct.unpack_from(">I", data, pos)
                pos += 4
                cls = handles.get(ref)
            elif desc == 0x72:
                (n,) = struct.unpack_from(">H", data, pos)
                cls = data[pos + 2:pos + 2 + n].decode()
                pos += 2 + n + 8 + 1  # name, serialVersionUID, flags
                (fields,) = struct.unpack_from(">H", data, pos)
                pos += 2
                for _ in range(fields):
                    (fn,) = struct.unpack_from(">H", data, pos + 1)
                    pos += 1 + 2 + fn
                pos += 1  # TC_ENDBLOCKDATA
                handles[handle] = cls
                handle += 1
                if data[pos] == 0x71:
                    pos += 5
                elif data[pos] == 0x72 and data[pos + 3:pos + 3 + 16] == b"java.lang.Number":
                    handles[handle] = "java.lang.Number"
                    handle += 1
                    pos += len(_NUMBER_DESC)
                else:
                    return None
            else:
                return None
            if cls not in _BOXES:
                return None
            fmt = _BOXES[cls][2]
            values.append(str(struct.unpack_from(fmt, data, pos)[0]))
            pos += struct.calcsize(fmt)
            handle += 1
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return tuple(values)
