"""When the replication loop's checkpoint stores a position, and which one (no services).

`Checkpointer.tick` is called with the capture's position and the clock; a sink reports how many records are
still out. The rows below walk one checkpoint interval (1 s) through the cases.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

from pgcdc.capture.position import Position
from pgcdc.durability import Checkpointer
from pgcdc.errors import SinkError
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.sink.kafka import ConnectErrors, KafkaSink
from pgcdc.sink.memory import DropSink, MemorySink


class OutstandingSink:
    """A Kafka-like sink: `outstanding` records not yet acknowledged; `flush` waits until there are none."""

    def __init__(self) -> None:
        self.outstanding = 0
        self.flushes = 0
        self.asked = 0

    def send(self, *args: object, **kwargs: object) -> None:
        self.outstanding += 1

    def all_acknowledged(self) -> bool:
        self.asked += 1
        return self.outstanding == 0

    def flush(self) -> None:
        self.flushes += 1
        self.outstanding = 0

    def close(self) -> None:
        pass


class Confirms:
    def __init__(self) -> None:
        self.lsns: list[int] = []

    def confirm(self, lsn: int) -> None:
        self.lsns.append(lsn)


def pos(lsn: int) -> Position:
    return Position(lsn, lsn, lsn, lsn, lsn)


def make() -> tuple[Checkpointer, OutstandingSink, MemoryOffsetStore, Confirms]:
    sink, offsets, confirms = OutstandingSink(), MemoryOffsetStore(), Confirms()
    return Checkpointer(sink, offsets, confirms, interval_s=1.0, now=0.0), sink, offsets, confirms


# (calls as (time, position, records outstanding), then: stored LSNs, confirmed LSNs, flushes,
#  what the last call returned (a checkpoint still waiting), without_wait, after_wait)
CASES = [
    pytest.param([(0.5, 10, 0)], [], [], 0, False, 0, 0, id="not due yet: nothing stored"),
    pytest.param([(1.0, 10, 0)], [10], [10], 0, False, 1, 0, id="due, queue empty: stored without waiting"),
    pytest.param([(1.0, 10, 3)], [], [], 0, True, 0, 0, id="due, records out: nothing stored, caller retries"),
    pytest.param([(1.0, 10, 3), (1.2, 11, 2), (1.3, 12, 0)], [12], [12], 0, False, 1, 0,
                 id="records out, then empty: the position at the empty queue"),
    pytest.param([(1.0, 10, 3), (1.9, 11, 2), (2.0, 12, 5)], [12], [12], 1, False, 0, 1,
                 id="out for another whole interval: waits for Kafka"),
    pytest.param([(1.0, 10, 0), (1.5, 11, 0)], [10], [10], 0, False, 1, 0,
                 id="stored: next due one interval later"),
    pytest.param([(1.0, 10, 0), (2.0, 11, 0)], [10, 11], [10, 11], 0, False, 2, 0, id="two intervals, two stores"),
    pytest.param([(1.0, 10, 0), (2.0, 10, 0)], [10], [10], 0, False, 1, 0, id="nothing new: nothing stored"),
    pytest.param([(1.0, None, 4)], [], [], 0, False, 0, 0, id="no position yet"),
]


@pytest.mark.parametrize("calls, stored, confirmed, flushes, waiting, without_wait, after_wait", CASES)
def test_tick(calls: list[tuple[float, int | None, int]], stored: list[int], confirmed: list[int], flushes: int,
              waiting: bool, without_wait: int, after_wait: int) -> None:
    checkpointer, sink, offsets, confirms = make()
    last = None
    for now, lsn, outstanding in calls:
        sink.outstanding = outstanding
        last = checkpointer.tick(pos(lsn) if lsn is not None else None, now)
    assert [o["lsn"] for o in offsets.history] == stored
    assert confirms.lsns == confirmed
    assert sink.flushes == flushes
    assert last is waiting
    assert (checkpointer.without_wait, checkpointer.after_wait) == (without_wait, after_wait)


def test_a_fallback_restarts_the_interval() -> None:
    checkpointer, sink, offsets, _ = make()
    sink.outstanding = 1
    assert checkpointer.tick(pos(10), 1.0) is True
    assert checkpointer.tick(pos(11), 2.5) is False  # waited: stored 11
    sink.outstanding = 1
    assert checkpointer.tick(pos(12), 3.0) is False  # next due at 3.5
    assert checkpointer.tick(pos(12), 3.5) is True
    assert [o["lsn"] for o in offsets.history] == [11]


def test_zero_interval_waits_as_soon_as_records_are_out() -> None:
    sink, offsets = OutstandingSink(), MemoryOffsetStore()
    checkpointer = Checkpointer(sink, offsets, None, interval_s=0.0, now=0.0)
    sink.outstanding = 2
    assert checkpointer.tick(pos(10), 0.0) is False
    assert (sink.flushes, [o["lsn"] for o in offsets.history]) == (1, [10])


@pytest.mark.parametrize("sink", [MemorySink(), DropSink()], ids=["memory", "drop"])
def test_sinks_without_a_broker_store_at_once(sink: MemorySink | DropSink) -> None:
    offsets = MemoryOffsetStore()
    checkpointer = Checkpointer(sink, offsets, None, interval_s=1.0, now=0.0)
    assert checkpointer.tick(pos(10), 1.0) is False
    assert [o["lsn"] for o in offsets.history] == [10]


def test_an_acknowledging_application_decides_the_position() -> None:
    class Acknowledging(DropSink):
        def acknowledged(self, position: Position) -> Position | None:
            return pos(7)  # the application committed up to here

    offsets = MemoryOffsetStore()
    checkpointer = Checkpointer(Acknowledging(), offsets, None, interval_s=1.0, now=0.0)
    assert checkpointer.tick(pos(10), 1.0) is False
    assert [o["lsn"] for o in offsets.history] == [7]


def test_a_failed_check_stores_nothing() -> None:
    class Failing(OutstandingSink):
        def all_acknowledged(self) -> bool:
            raise SinkError("kafka: record not acknowledged: t: broken")

    offsets = MemoryOffsetStore()
    checkpointer = Checkpointer(Failing(), offsets, None, interval_s=1.0, now=0.0)
    with pytest.raises(SinkError, match="not acknowledged"):
        checkpointer.tick(pos(10), 1.0)
    assert offsets.history == [] and checkpointer.stored is None


def unreachable_kafka_sink(**extra: str) -> KafkaSink:
    """A KafkaSink on a real librdkafka producer whose broker never answers (port 9: discard)."""
    sink = KafkaSink.__new__(KafkaSink)
    sink.flush_timeout_s = 1.0
    sink._errors, sink._error_topics, sink.sent, sink.bytes, sink.keepalive = [], [], 0, 0, None
    sink._connect_errors = ConnectErrors()
    sink._producer = Producer({"bootstrap.servers": "127.0.0.1:9", "message.timeout.ms": "200",
                               "delivery.report.only.error": True, "on_delivery": sink._on_delivery,
                               "error_cb": sink._on_error, "log_level": "0", **extra})
    return sink


def test_kafka_sink_all_acknowledged_follows_librdkafka() -> None:
    sink = unreachable_kafka_sink()
    assert sink.all_acknowledged() is True  # nothing sent
    sink.send("t", b"k", b"v")
    assert sink.all_acknowledged() is False  # out, no broker to acknowledge it
    # The record times out (message.timeout.ms): its failure surfaces through the same check, once.
    deadline = time.monotonic() + 30
    with pytest.raises(SinkError, match="record not acknowledged: t"):
        while time.monotonic() < deadline:
            sink.all_acknowledged()
            time.sleep(0.05)
    assert sink.all_acknowledged() is True


class SlowBrokerSink(OutstandingSink):
    """Acknowledges everything on the `acks_after`-th wait (a broker that comes back)."""

    def __init__(self, acks_after: int, flush_timeout_s: float = 120.0) -> None:
        super().__init__()
        self.acks_after = acks_after
        self.flush_timeout_s = flush_timeout_s
        self.waits = 0

    def wait_acknowledged(self, timeout_s: float) -> bool:
        self.waits += 1
        if self.waits >= self.acks_after:
            self.outstanding = 0
        return self.outstanding == 0


def test_a_checkpoint_waiting_for_kafka_keeps_the_stream_alive() -> None:
    sink, offsets, confirms, beats = SlowBrokerSink(acks_after=4), MemoryOffsetStore(), Confirms(), []
    checkpointer = Checkpointer(sink, offsets, confirms, interval_s=1.0, now=0.0,
                                keepalive=lambda: beats.append(confirms.lsns[:]))
    sink.outstanding = 5
    assert checkpointer.tick(pos(10), 1.0) is True  # due, records out: try again at the next frame
    assert checkpointer.tick(pos(10), 2.5) is False  # a whole interval later: waits for Kafka
    # Three waits found records out; after each one the stream was kept alive, confirming nothing new.
    assert beats == [[], [], []]
    assert (sink.flushes, [o["lsn"] for o in offsets.history], confirms.lsns) == (0, [10], [10])


def test_a_broker_that_stays_away_fails_the_checkpoint_and_stores_nothing() -> None:
    sink, offsets, confirms, beats = SlowBrokerSink(acks_after=10**9, flush_timeout_s=0.2), MemoryOffsetStore(), \
        Confirms(), []
    checkpointer = Checkpointer(sink, offsets, confirms, keepalive=lambda: beats.append(1))
    sink.outstanding = 1
    with pytest.raises(SinkError, match="not acknowledged within"):
        checkpointer.checkpoint(pos(10))
    assert offsets.history == [] and confirms.lsns == [] and checkpointer.stored is None and beats


def test_kafka_sink_wait_acknowledged_follows_librdkafka() -> None:
    sink = unreachable_kafka_sink()
    assert sink.wait_acknowledged(0.1) is True  # nothing sent
    sink.send("t", b"k", b"v")
    assert sink.wait_acknowledged(0.05) is False  # out, no broker to acknowledge it
    with pytest.raises(SinkError, match="record not acknowledged: t"):  # timed out (message.timeout.ms)
        sink.wait_acknowledged(5.0)


def test_a_full_producer_queue_keeps_the_stream_alive() -> None:
    """Backpressure: `send` waits for room in librdkafka's queue (here one record, whose broker never answers,
    so room comes only when it times out) and keeps the replication stream alive meanwhile."""
    sink = unreachable_kafka_sink(**{"queue.buffering.max.messages": "1"})
    beats: list[float] = []
    sink.keepalive = lambda: beats.append(time.monotonic())
    sink.send("t", b"k", b"first")
    sink.send("t", b"k", b"second")  # waits until the first times out (message.timeout.ms=200)
    assert beats and sink.sent == 2
