"""Offsets in a local file, replaced atomically (write, fsync, rename) on every store.

The file holds one JSON object mapping the Connect key (as JSON text) to the offset value. Kafka Connect's
own FileOffsetBackingStore writes Java-serialized maps instead; pgcdc does not read those (see
docs/compatibility.md). Use the Kafka topic store to share offsets with Debezium.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from pgcdc.errors import OffsetError
from pgcdc.offsets import Offset


class FileOffsetStore:
    def __init__(self, path: str | os.PathLike[str], key: bytes) -> None:
        self.path = Path(path)
        self.key = key.decode()

    def _read_all(self) -> dict[str, str]:
        try:
            data = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            raise OffsetError(f"offset.storage.file.filename: cannot read {self.path}: {exc}") from None
        if not isinstance(data, dict):
            raise OffsetError(f"offset.storage.file.filename: {self.path} is not a pgcdc offset file")
        return data

    def load(self) -> Offset | None:
        value = self._read_all().get(self.key)
        return orjson.loads(value) if value else None

    def store(self, offset: Offset) -> None:
        data = self._read_all()
        data[self.key] = orjson.dumps(offset).decode()
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(orjson.dumps(data))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise OffsetError(f"offset.storage.file.filename: cannot write {self.path}: {exc}") from None

    def close(self) -> None:
        pass
