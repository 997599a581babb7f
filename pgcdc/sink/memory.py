"""Records kept in a list, in the file sink's shape, for tests and embedding; or dropped, for measuring."""

from __future__ import annotations

from typing import Any

import orjson

from pgcdc.sink import Headers


class MemorySink:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.flushes = 0

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        self.records.append({
            "topic": topic,
            "partition": partition,
            "key": orjson.loads(key) if key is not None else None,
            "value": orjson.loads(value) if value is not None else None,
            "headers": [[n, orjson.loads(v)] for n, v in headers or ()],
        })

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        pass


class DropSink:
    """Drops every record: what is left of a run is pgcdc's own work per event (the benchmarks' `--sink drop`)."""

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
