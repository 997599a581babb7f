"""Kafka through confluent-kafka: idempotent, acks=all, murmur2 keyed partitioning like the Java client.

librdkafka delivers on its own threads; we only record failures in the delivery callback and raise them at
the next flush or `all_acknowledged`, which is where the durability order (Kafka ack before offset) is
enforced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from pgcdc.client_settings import kafka_client
from pgcdc.errors import RecordTooLarge, SinkError
from pgcdc.sink import Headers

log = logging.getLogger(__name__)

# librdkafka reports a refused login or TLS handshake only through the error callback; the request that fails
# afterwards says "Broker transport failure". The settings to look at, by the callback's error code.
CONNECT_ERROR_SETTINGS = {
    KafkaError._AUTHENTICATION: "kafka.sasl.mechanism / kafka.sasl.username / kafka.sasl.password",
    KafkaError._SSL: "kafka.ssl.* / kafka.security.protocol",
}


class ConnectErrors:
    """An `error_cb` that keeps the last refused login or TLS handshake, for `unreachable()`."""

    def __init__(self) -> None:
        self.last: Any = None

    def __call__(self, err: Any) -> None:
        if err.code() in CONNECT_ERROR_SETTINGS:
            self.last = err

    def unreachable(self, servers: str, timeout_s: float, exc: KafkaException, client: Any) -> str:
        """The one line for a broker that did not answer, with the cause: a refused login or TLS handshake if
        there was one. The client's callbacks run only inside poll(): served here, once the request has failed."""
        client.poll(0)
        err = self.last
        if err is None:
            return unreachable(servers, timeout_s, exc)
        return (f"bootstrap.servers: cannot reach Kafka at {servers}: {err.str()} "
                f"(check {CONNECT_ERROR_SETTINGS[err.code()]})")


def unreachable(servers: str, timeout_s: float, exc: KafkaException) -> str:
    """The one line for a broker that did not answer a metadata request in time."""
    err = exc.args[0]
    why = err.str() if hasattr(err, "str") else str(err)
    return (f"bootstrap.servers: cannot reach Kafka at {servers} within {timeout_s:g} s ({why}); "
            f"pgcdc.kafka.reach.timeout.ms sets the wait")


class KafkaSink:
    def __init__(self, producer_config: dict[str, str], *, flush_timeout_s: float = 120.0,
                 reach_timeout_s: float = 5.0) -> None:
        self.flush_timeout_s = flush_timeout_s
        self._errors: list[Any] = []
        self._error_topics: list[str] = []
        self.sent = 0
        self.bytes = 0
        # Called while `send` waits for room in a full queue (a broker that is down): the replication stream's
        # status update, so the server does not drop the connection after wal_sender_timeout.
        self.keepalive: Callable[[], None] | None = None
        self._connect_errors = ConnectErrors()
        conf: dict[str, Any] = kafka_client({**producer_config, "error_cb": self._on_error,
                                             "on_delivery": self._on_delivery})
        # Only failed records come back through poll(): flush() still waits for every acknowledgement, and a
        # delivered record no longer costs a Python callback and a Message object on the replication thread.
        conf.setdefault("delivery.report.only.error", True)
        try:
            # One delivery callback for all records, set in the config, so produce() takes no per-call closure.
            self._producer = Producer(conf)
        except KafkaException as exc:
            raise SinkError(f"kafka: bad producer configuration: {exc.args[0]}") from None
        self._check_reachable(producer_config.get("bootstrap.servers", ""), reach_timeout_s)

    def _check_reachable(self, servers: str, timeout_s: float) -> None:
        try:
            self._producer.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise SinkError(self._connect_errors.unreachable(servers, timeout_s, exc, self._producer)) from None

    def _on_error(self, err: Any) -> None:
        self._connect_errors(err)
        if err.fatal():
            self._errors.append(err)
            self._error_topics.append("(producer)")
        else:
            log.debug("kafka: %s", err)

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._errors.append(err)
            self._error_topics.append(msg.topic())

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        produce = self._producer.produce
        while True:
            try:
                if partition is None:
                    if headers:
                        produce(topic, value, key, headers=headers)
                    else:  # no headers keyword: 0.4 µs less per record in confluent-kafka's argument parsing
                        produce(topic, value, key)
                else:
                    produce(topic, value, key, headers=headers, partition=partition)
                break
            except BufferError:
                # librdkafka's queue is full: serve delivery reports until there is room (backpressure).
                self._producer.poll(0.05)
                if self.keepalive is not None:
                    self.keepalive()
            except KafkaException as exc:
                err = exc.args[0]
                if err.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                    size = (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
                    raise RecordTooLarge(
                        f"kafka: a record of {size} bytes for topic {topic!r} exceeds the producer's maximum "
                        f"request size (producer.override.max.request.size / kafka.message.max.bytes)") from None
                raise SinkError(f"kafka: cannot produce to {topic!r}: {err.str()}") from None
        self.sent += 1
        self.bytes += (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
        if self.sent & 0x3FF == 0:
            self._producer.poll(0)

    def queue_depth(self) -> int:
        """Records handed to librdkafka and not yet acknowledged."""
        return len(self._producer)

    def all_acknowledged(self) -> bool:
        """Whether every record sent so far is acknowledged, without waiting; raises as `flush` does.

        With error-only delivery reports librdkafka frees an acknowledged record at once, and a failed one
        only after its report was served (here, by `poll`): `len()` (rd_kafka_outq_len: records not yet freed
        plus reports not yet served) is 0 exactly when all were acknowledged or their failures are in
        `_errors`."""
        producer = self._producer
        if len(producer):
            producer.poll(0)
            if len(producer):
                self._raise_errors()
                return False
        self._raise_errors()
        return True

    def wait_acknowledged(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for every record sent so far to be acknowledged; raises as `flush` does."""
        left = self._producer.flush(timeout_s)
        self._raise_errors()
        return left == 0

    def flush(self) -> None:
        left = self._producer.flush(self.flush_timeout_s)
        self._raise_errors()
        if left:
            raise SinkError(f"kafka: {left} record(s) not acknowledged within {self.flush_timeout_s:.0f} s")

    def _raise_errors(self) -> None:
        if self._errors:
            first, topic = self._errors[0], (self._error_topics or ["?"])[0]
            self._errors.clear()
            self._error_topics.clear()
            code = first.code() if hasattr(first, "code") else None
            text = first.str() if hasattr(first, "str") else str(first)
            if code in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE):
                raise RecordTooLarge(f"kafka: the broker refused a record for topic {topic!r} as too large "
                                     f"(its message.max.bytes / max.message.bytes): {text}")
            raise SinkError(f"kafka: record not acknowledged: {topic}: {text}")

    def close(self) -> None:
        """Flush, then end the producer: its connections close now, not whenever the garbage collector breaks
        the cycle through the delivery callbacks (a broker stopped after pgcdc would otherwise see it retry).
        A sink is not used after close: the runner makes a new one per start, and closes one handed to it only
        when it stops."""
        self._producer.flush(self.flush_timeout_s)
        end_producer(self._producer)


def end_producer(producer: Producer) -> None:
    """Producer.close() where confluent-kafka has it (2.11+); older versions end it when it is freed."""
    close = getattr(producer, "close", None)
    if close is not None:
        close()
