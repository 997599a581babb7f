"""Offsets in a compacted Kafka topic, record for record as Kafka Connect's KafkaOffsetBackingStore writes them.

Key `["<connector name>",{"server":"<topic.prefix>"}]`, value the offset JSON, both compact JSON, keyed
partitioning with murmur2 like the Java producer. Loading reads every partition to its end (Tansu's
latest-offset answers are unreliable, and compaction may not have run) and keeps the last value of our key.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pgcdc.client_settings import kafka_client
from pgcdc.errors import OffsetError
from pgcdc.offsets import Offset
from pgcdc.sink.kafka import ConnectErrors, end_producer

log = logging.getLogger(__name__)


class KafkaOffsetStore:
    def __init__(self, producer_config: dict[str, str], topic: str, key: bytes, *, partitions: int = 25,
                 replication_factor: int = -1, timeout_s: float = 30.0, reach_timeout_s: float = 5.0) -> None:
        self.topic = topic
        self.key = key
        self._key_obj = orjson.loads(key)
        self.timeout_s = timeout_s
        self.reach_timeout_s = reach_timeout_s
        self._client_conf = kafka_client({k: v for k, v in producer_config.items() if k == "bootstrap.servers"
                                          or k.startswith(("security.", "sasl.", "ssl."))})
        self._ensure_topic(partitions, replication_factor)
        self._producer = Producer(kafka_client({**producer_config, "linger.ms": "0"}))

    def _ensure_topic(self, partitions: int, replication_factor: int) -> None:
        errors = ConnectErrors()
        admin = AdminClient({**self._client_conf, "error_cb": errors})
        try:
            md = admin.list_topics(timeout=self.reach_timeout_s)
        except KafkaException as exc:
            servers = self._client_conf.get("bootstrap.servers", "")
            raise OffsetError(errors.unreachable(servers, self.reach_timeout_s, exc, admin)) from None
        if self.topic in md.topics and not md.topics[self.topic].error:
            return
        fut = admin.create_topics([NewTopic(self.topic, partitions, replication_factor,
                                            config={"cleanup.policy": "compact"})])[self.topic]
        try:
            fut.result(self.timeout_s)
            log.info("created offset topic %s (%d partitions, compacted)", self.topic, partitions)
        except KafkaException as exc:
            err = exc.args[0]
            if getattr(err, "code", lambda: None)() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise OffsetError(f"offset.storage.topic: cannot create {self.topic!r}: {err}") from None

    def load(self) -> Offset | None:
        consumer = Consumer({**self._client_conf, "group.id": f"pgcdc-offsets-{uuid.uuid4()}",
                             "enable.auto.commit": "false", "enable.partition.eof": "true"})
        try:
            md = consumer.list_topics(self.topic, timeout=self.timeout_s)
            parts = sorted(md.topics[self.topic].partitions)
            consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in parts])
            remaining = set(parts)
            value: bytes | None = None
            found = False
            while remaining:
                msg = consumer.poll(self.timeout_s)
                if msg is None:
                    raise OffsetError(f"offset.storage.topic: timed out reading {self.topic!r}")
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        remaining.discard(msg.partition())
                        continue
                    raise OffsetError(f"offset.storage.topic: cannot read {self.topic!r}: {err}")
                k = msg.key()
                if k is not None and self._same_key(k):
                    value, found = msg.value(), True
            return orjson.loads(value) if found and value else None
        except KafkaException as exc:
            raise OffsetError(f"offset.storage.topic: cannot read {self.topic!r}: {exc.args[0]}") from None
        finally:
            consumer.close()

    def _same_key(self, k: bytes) -> bool:
        if k == self.key:
            return True
        try:
            return bool(orjson.loads(k) == self._key_obj)
        except orjson.JSONDecodeError:
            return False

    def store(self, offset: Offset) -> None:
        self._produce(orjson.dumps(offset))

    def reset(self) -> None:
        """Forget the offset: a null value for our key, as Kafka Connect's offset reset writes it."""
        self._produce(None)

    def _produce(self, value: bytes | None) -> None:
        errors: list[Any] = []

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        self._producer.produce(self.topic, value, self.key, on_delivery=on_delivery)
        left = self._producer.flush(self.timeout_s)
        if left or errors:
            raise OffsetError(f"offset.storage.topic: offset not acknowledged by Kafka on {self.topic!r}: "
                              f"{errors[0] if errors else 'timed out'}")

    def close(self) -> None:
        self._producer.flush(self.timeout_s)
        end_producer(self._producer)
