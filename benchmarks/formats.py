"""The record formats stream.py and snapshot.py measure (`--format json,avro`), and the size of their records.

- `json`: Kafka Connect's JsonConverter with schemas on (pgcdc's default), key and value.
- `avro`: Confluent's AvroConverter for key and value, with confluent-kafka's in-process `mock://` registry
  (no registry server in the timing: a schema version is registered once per process either way).
"""

from __future__ import annotations

from typing import Any

AVRO = "io.confluent.connect.avro.AvroConverter"
FORMATS: dict[str, dict[str, str]] = {
    "json": {},
    "avro": {"key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": "mock://bench"},
}
SAMPLE = 5000  # records measured for their size; then the sink is called directly


def format_names(text: str) -> list[str]:
    names = [f for f in text.split(",") if f]
    for f in names:
        if f not in FORMATS:
            raise SystemExit(f"--format: unknown format {f!r} (known: {', '.join(FORMATS)})")
    return names


class SizeSample:
    """Wraps a sink: the mean key and value bytes of the first SAMPLE records; after those, `send` is the wrapped
    sink's own (no cost per record left in the timing)."""

    def __init__(self, sink: Any) -> None:
        object.__setattr__(self, "sink", sink)
        object.__setattr__(self, "records", 0)
        object.__setattr__(self, "key_bytes", 0)
        object.__setattr__(self, "value_bytes", 0)

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        if value is not None:
            object.__setattr__(self, "records", self.records + 1)
            object.__setattr__(self, "key_bytes", self.key_bytes + len(key or b""))
            object.__setattr__(self, "value_bytes", self.value_bytes + len(value))
            if self.records >= SAMPLE:
                object.__setattr__(self, "send", self.sink.send)
        self.sink.send(topic, key, value, headers, partition)

    @property
    def value_mean(self) -> float:
        return self.value_bytes / max(self.records, 1)

    @property
    def key_mean(self) -> float:
        return self.key_bytes / max(self.records, 1)

    def __getattr__(self, name: str) -> Any:  # flush, close, acknowledged, ... of the wrapped sink
        return getattr(self.sink, name)

    def __setattr__(self, name: str, value: Any) -> None:  # keepalive, set by the runner
        setattr(self.sink, name, value)
