"""One JSON object per line: {"topic", "partition", "key", "value", "headers": [[name, value], …]}.

Key, value and header values are the converter's JSON embedded as JSON (not strings), so `jq` works on them.
`-` writes to stdout.
"""

from __future__ import annotations

import os
import sys
from typing import IO

import orjson

from pgcdc.errors import SinkError
from pgcdc.sink import Headers

_NULL = orjson.Fragment(b"null")


class FileSink:
    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._out: IO[bytes] = sys.stdout.buffer if path == "-" else open(path, "ab")
        except OSError as exc:
            raise SinkError(f"sink.file.path: cannot open {path}: {exc.strerror}") from None

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        line = orjson.dumps({
            "topic": topic,
            "partition": partition,
            "key": _NULL if key is None else orjson.Fragment(key),
            "value": _NULL if value is None else orjson.Fragment(value),
            "headers": [[n, orjson.Fragment(v)] for n, v in headers or ()],
        })
        self._out.write(line + b"\n")

    def flush(self) -> None:
        try:
            self._out.flush()
            if self._out is not sys.stdout.buffer:
                os.fsync(self._out.fileno())
        except OSError as exc:
            raise SinkError(f"sink.file.path: cannot write {self.path}: {exc.strerror}") from None

    def close(self) -> None:
        self.flush()
        if self._out is not sys.stdout.buffer:
            self._out.close()
