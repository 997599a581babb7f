"""A Sink that creates each topic on its first record, as Kafka Connect's source tasks do with topic creation.

Kafka Connect (AbstractWorkerSourceTask.maybeCreateTopic) asks the broker once per topic whether it exists; if
not, it creates it with its group's settings (an "already exists" answer counts as created) and a failure fails
the task. Here the first record of a topic in this process does the same before it is handed to the wrapped sink,
so a broker with `auto.create.topics.enable=false` takes pgcdc's records, and a new topic gets its group's
partitions, replication factor and configs instead of the broker's defaults. A topic that exists is left as it is.
"""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from pgcdc.client_settings import kafka_client
from pgcdc.errors import SinkError
from pgcdc.sink import Headers, Sink
from pgcdc.topic_creation.config import TopicCreation

log = logging.getLogger("pgcdc.topic_creation")


def admin_settings(producer_config: dict[str, str]) -> dict[str, str]:
    """The producer's connection settings (servers, TLS, SASL) for an admin client."""
    return {k: v for k, v in producer_config.items()
            if k == "bootstrap.servers" or k.startswith(("security.", "sasl.", "ssl."))}


class TopicCreatingSink:
    """Creates a topic (if missing) before its first record goes to `sink`; everything else is `sink`'s."""

    def __init__(self, sink: Sink, creation: TopicCreation, admin_conf: dict[str, str], timeout_s: float) -> None:
        object.__setattr__(self, "sink", sink)
        object.__setattr__(self, "creation", creation)
        object.__setattr__(self, "known", set())
        object.__setattr__(self, "timeout_s", timeout_s)
        object.__setattr__(self, "admin", AdminClient(kafka_client(admin_conf)))

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        if topic not in self.known:
            self.ensure(topic)
        self.sink.send(topic, key, value, headers, partition)

    def ensure(self, topic: str) -> None:
        """Create `topic` with its group's settings unless the broker has it."""
        try:
            # Every topic's metadata: a request naming the topic could make a broker with
            # auto.create.topics.enable create it with its own defaults.
            md = self.admin.list_topics(timeout=self.timeout_s)
        except KafkaException as exc:
            raise SinkError(f"topic.creation: cannot check whether topic {topic!r} exists: {exc.args[0]}") from None
        found = md.topics.get(topic)
        if found is None or found.error is not None:
            self._create(topic)
        self.known.add(topic)

    def _create(self, topic: str) -> None:
        group = self.creation.group_for(topic)
        new = NewTopic(topic, num_partitions=group.partitions, replication_factor=group.replication_factor,
                       config=dict(group.configs))
        what = (f"{group.name} group: {group.partitions} partitions, replication factor {group.replication_factor}"
                + "".join(f", {k}={v}" for k, v in sorted(group.configs.items())))
        try:
            self.admin.create_topics([new], request_timeout=self.timeout_s)[topic].result(self.timeout_s)
        except KafkaException as exc:
            err = exc.args[0]
            if getattr(err, "code", lambda: None)() == KafkaError.TOPIC_ALREADY_EXISTS:
                return
            raise SinkError(f"topic.creation: cannot create topic {topic!r} ({what}): "
                            f"{getattr(err, 'str', lambda: str(err))()}") from None
        log.info("created topic %s (%s)", topic, what)

    def __getattr__(self, name: str) -> Any:  # flush, close, all_acknowledged, … of the wrapped sink
        return getattr(self.sink, name)

    def __setattr__(self, name: str, value: Any) -> None:  # keepalive, set by the runner
        setattr(self.sink, name, value)
