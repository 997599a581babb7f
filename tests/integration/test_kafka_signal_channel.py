"""The Kafka signal channel when the group's committed-offset lookup fails: a broker answers OffsetFetch with a
request-level NOT_COORDINATOR (and no partitions) while the group's coordinator moves or is still loading, as on
a freshly started broker. After an assign() without an offset librdkafka then never starts fetching the
partition (confluentinc/librdkafka#5586) and no signal is ever read.

The broker is a real Apache Kafka node; it advertises a relay in front of it that forwards every request and
answer unchanged, except that it answers the OffsetFetch requests it is told to fail with that error, so the
failure happens on every run rather than when a run is unlucky.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Producer

from pgcdc.capture.signals import KafkaSignals, Signal
from pgcdc.local import KafkaBroker
from pgcdc.local.server import free_port
from tests.harness import wait_for

OFFSET_FETCH = 9
NOT_COORDINATOR = 16


def uvarint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def frames(sock: socket.socket) -> Iterator[bytes]:
    """Kafka frames (size prefix and body) read from a socket until it closes."""
    buf = b""
    while True:
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
            n = 4 + struct.unpack_from(">i", buf)[0]
            yield buf[:n]
            buf = buf[n:]
        try:
            chunk = sock.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        buf += chunk


def not_coordinator(request: bytes) -> bytes:
    """The OffsetFetch answer with a request-level NOT_COORDINATOR for this request (v8+: per group, no topics;
    flexible versions: compact arrays and an empty tag buffer after the header and each structure)."""
    version, correlation = struct.unpack_from(">hi", request, 6)
    assert version >= 8, f"OffsetFetch v{version}: the relay answers v8 and later only"
    client_id_len = struct.unpack_from(">h", request, 12)[0]
    i = 14 + max(client_id_len, 0)
    tags, i = uvarint(request, i)
    assert tags == 0
    groups, i = uvarint(request, i)
    assert groups == 2, "one group"
    size, i = uvarint(request, i)
    group = request[i:i + size - 1]
    body = (struct.pack(">i", correlation) + b"\0" + struct.pack(">i", 0) + b"\x02" + bytes([len(group) + 1])
            + group + b"\x01" + struct.pack(">h", NOT_COORDINATOR) + b"\0" + b"\0")
    return struct.pack(">i", len(body)) + body


class Relay:
    """Forwards 127.0.0.1:port to the broker; answers the next `fail` OffsetFetch requests NOT_COORDINATOR."""

    def __init__(self, port: int, upstream: int) -> None:
        self.upstream = upstream
        self.lock = threading.Lock()
        self.fail = 0
        self.failed = 0
        self.server = socket.create_server(("127.0.0.1", port))
        self.sockets: list[socket.socket] = [self.server]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
                broker = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                return
            self.sockets += [client, broker]
            answers: dict[int, bytes] = {}  # correlation id -> the answer sent instead of the broker's
            threading.Thread(target=self.requests, args=(client, broker, answers), daemon=True).start()
            threading.Thread(target=self.responses, args=(broker, client, answers), daemon=True).start()

    def requests(self, client: socket.socket, broker: socket.socket, answers: dict[int, bytes]) -> None:
        for frame in frames(client):
            api_key, _, correlation = struct.unpack_from(">hhi", frame, 4)
            if api_key == OFFSET_FETCH:
                with self.lock:
                    if self.fail > 0:
                        self.fail -= 1
                        self.failed += 1
                        answers[correlation] = not_coordinator(frame)
            broker.sendall(frame)
        broker.close()

    def responses(self, broker: socket.socket, client: socket.socket, answers: dict[int, bytes]) -> None:
        for frame in frames(broker):
            client.sendall(answers.pop(struct.unpack_from(">i", frame, 4)[0], frame))
        client.close()

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def read_signals(channel: KafkaSignals, timeout: float, what: str) -> list[Signal]:
    got: list[Signal] = []

    def arrived() -> bool:
        got.extend(channel.poll())
        return bool(got)
    wait_for(arrived, timeout, what)
    return got


def test_signals_are_read_when_the_first_committed_offset_lookup_fails() -> None:
    """Each channel's first committed-offset lookup is answered NOT_COORDINATOR: the channel still reads the
    group's next signal, and after a commit and a restart starts past the signal it handled."""
    relay_port = free_port()
    broker = KafkaBroker(settings={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{relay_port}"})
    relay = Relay(relay_port, broker.port)
    try:
        with broker:
            bootstrap = f"127.0.0.1:{relay_port}"
            producer = Producer({"bootstrap.servers": bootstrap})

            def send(value: dict[str, Any]) -> None:
                producer.produce("signals", key=b"test", value=json.dumps(value).encode(), partition=0)
                assert producer.flush(30) == 0

            send({"type": "log", "data": {"message": "first"}})
            relay.fail = 1
            channel = KafkaSignals(bootstrap, "signals", "g_new", "test")
            try:
                first = read_signals(channel, 30, "the first signal")
                channel.commit()
            finally:
                channel.close()
            assert relay.failed == 1
            assert first == [("signals-0-0", "log", '{"message": "first"}')]

            send({"type": "log", "data": {"message": "second"}})
            relay.fail = 1
            channel = KafkaSignals(bootstrap, "signals", "g_new", "test")
            try:
                second = read_signals(channel, 30, "the signal sent after the restart")
            finally:
                channel.close()
            assert relay.failed == 2
            assert second == [("signals-0-1", "log", '{"message": "second"}')]
    finally:
        relay.close()
