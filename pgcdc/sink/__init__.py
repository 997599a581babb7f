"""Sinks: where serialized records go. Kafka for production, a JSON-lines file for debugging and piping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

Headers = Sequence[tuple[str, bytes]]


class Sink(Protocol):
    """`send` may buffer; `flush` returns only when every record sent so far is acknowledged.

    A sink whose acknowledgements take a network round trip also has `all_acknowledged() -> bool`: the same
    question without waiting (pgcdc.durability.Checkpointer.try_checkpoint)."""

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def make_sink(config: Any) -> Sink:
    if config.sink_type == "embedded":
        from pgcdc.errors import ConfigError

        raise ConfigError("sink.type=embedded: records go to the application; run it through pgcdc.embed.Engine")
    if config.sink_type == "file":
        from pgcdc.sink.file import FileSink

        return FileSink(config.sink_file_path)
    from pgcdc.sink.kafka import KafkaSink

    sink: Sink = KafkaSink(config.producer_config(), reach_timeout_s=config.pgcdc_kafka_reach_timeout_ms / 1000)
    creation, _, _ = _topic_creation(config.topic_creation_props)
    if creation is not None:  # topic.creation.*: topics created on their first record (pgcdc/topic_creation)
        from pgcdc.topic_creation.sink import TopicCreatingSink, admin_settings

        sink = TopicCreatingSink(sink, creation, admin_settings(config.producer_config()),
                                 max(config.pgcdc_kafka_reach_timeout_ms / 1000, 30.0))
    return sink


def _topic_creation(props: dict[str, str]) -> Any:
    from pgcdc.topic_creation import parse

    return parse(props)
