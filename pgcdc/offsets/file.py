"""Offsets in a local file, byte-compatible with Kafka Connect's FileOffsetBackingStore.

Connect writes the whole store as a Java-serialized `HashMap<byte[], byte[]>` (key and value are the JSON
bytes of the Connect offset record), so Debezium and pgcdc can take over each other's offset file. We write
and read exactly that object layout (Java Object Serialization Specification, chapter 6), replacing the
file atomically (write, fsync, rename) on every store.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import orjson

from pgcdc.errors import OffsetError
from pgcdc.offsets import Offset

_MAGIC = b"\xac\xed\x00\x05"
# TC_OBJECT, TC_CLASSDESC "java.util.HashMap" serialVersionUID 362498820763181265, SC_WRITE_METHOD|SERIALIZABLE,
# fields: float loadFactor, int threshold; TC_ENDBLOCKDATA, no superclass (TC_NULL).
_HASHMAP = (b"\x73\x72\x00\x11java.util.HashMap\x05\x07\xda\xc1\xc3\x16\x60\xd1\x03\x00\x02"
            b"\x46\x00\x0aloadFactor\x49\x00\x09threshold\x78\x70")
# TC_ARRAY, TC_CLASSDESC "[B" serialVersionUID -5984413125824719648, SC_SERIALIZABLE, no fields, end, no super.
_BYTE_ARRAY_DESC = b"\x72\x00\x02[B\xac\xf3\x17\xf8\x06\x08\x54\xe0\x02\x00\x00\x78\x70"
_BYTE_ARRAY_REF = b"\x71\x00\x7e\x00\x02"  # TC_REFERENCE to handle 2: the "[B" class descriptor


def encode(entries: dict[bytes, bytes]) -> bytes:
    capacity = 16
    while capacity * 0.75 < len(entries):
        capacity *= 2
    out = [_MAGIC, _HASHMAP, struct.pack(">fi", 0.75, int(capacity * 0.75)),
           b"\x77\x08", struct.pack(">ii", capacity, len(entries))]
    first = True
    for key, value in entries.items():
        for blob in (key, value):
            out.append(b"\x75" + (_BYTE_ARRAY_DESC if first else _BYTE_ARRAY_REF))
            out.append(struct.pack(">i", len(blob)) + blob)
            first = False
    out.append(b"\x78")
    return b"".join(out)


def decode(data: bytes) -> dict[bytes, bytes]:
    if not data.startswith(_MAGIC + _HASHMAP):
        raise ValueError("not a Kafka Connect offset file (Java-serialized HashMap)")
    pos = len(_MAGIC) + len(_HASHMAP) + 8
    if data[pos:pos + 2] != b"\x77\x08":
        raise ValueError("unexpected HashMap layout")
    _capacity, size = struct.unpack_from(">ii", data, pos + 2)
    pos += 10
    blobs: list[bytes] = []
    for _ in range(size * 2):
        if data[pos] == 0x70:  # TC_NULL
            blobs.append(b"")
            pos += 1
            continue
        if data[pos] != 0x75:
            raise ValueError(f"expected a byte array at offset {pos}")
        pos += 1
        if data.startswith(_BYTE_ARRAY_DESC, pos):
            pos += len(_BYTE_ARRAY_DESC)
        elif data[pos] == 0x71:
            pos += 5
        else:
            raise ValueError(f"unexpected class descriptor at offset {pos}")
        (length,) = struct.unpack_from(">i", data, pos)
        blobs.append(data[pos + 4:pos + 4 + length])
        pos += 4 + length
    return dict(zip(blobs[::2], blobs[1::2]))


class FileOffsetStore:
    def __init__(self, path: str | os.PathLike[str], key: bytes) -> None:
        self.path = Path(path)
        self.key = key
        self._key_obj = orjson.loads(key)

    def _read_all(self) -> dict[bytes, bytes]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OffsetError(f"offset.storage.file.filename: cannot read {self.path}: {exc.strerror}") from None
        if not data:
            return {}
        try:
            return decode(data)
        except (ValueError, IndexError, struct.error) as exc:
            raise OffsetError(f"offset.storage.file.filename: cannot read {self.path}: {exc}") from None

    def _same_key(self, k: bytes) -> bool:
        try:
            return k == self.key or bool(orjson.loads(k) == self._key_obj)
        except orjson.JSONDecodeError:
            return False

    def load(self) -> Offset | None:
        for k, v in self._read_all().items():
            if self._same_key(k) and v:
                value = orjson.loads(v)
                return value if isinstance(value, dict) else None
        return None

    def store(self, offset: Offset) -> None:
        entries = {k: v for k, v in self._read_all().items() if not self._same_key(k)}
        entries[self.key] = orjson.dumps(offset)
        self._write(entries)

    def reset(self) -> None:
        """Forget this connector's offset; other connectors' entries in the file stay."""
        self._write({k: v for k, v in self._read_all().items() if not self._same_key(k)})

    def _write(self, entries: dict[bytes, bytes]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(encode(entries))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise OffsetError(f"offset.storage.file.filename: cannot write {self.path}: {exc.strerror}") from None

    def close(self) -> None:
        pass
