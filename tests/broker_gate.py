"""A TCP relay in front of the test broker that can hold client requests until the broker has answered every one
it was given, so the broker can then be killed between requests.

Why: Tansu's S3 storage (tansu-storage 0.6.0, `dynostore.rs` `produce`) handles one produce request as three
separate object writes: the idempotent producer's next sequence number, then the partition's high watermark
(the batch's offsets), then the batch object; it answers after the last. A broker killed between the first
and the last has advanced the producer's sequence without storing the batch. When the broker is back, the
client retries that batch with the same sequence number, the broker answers DUPLICATE_SEQUENCE_NUMBER, and
librdkafka, as the Kafka protocol says, counts the batch as delivered: records acknowledged and never stored
(killed after the watermark write, they also leave a hole of that many offsets). Apache Kafka appends the batch
and the producer state in one log append, so it has no such window. Killing the broker while it has no
request in hand tests the client side of the outage (requests in flight lost with the connection, retries
after the restart, the durability order) and not that broker's crash atomicity.

Kafka requests and responses are each an int32 size and that many bytes (Kafka protocol guide, "Common Request
and Response Structure"); every request a client here sends gets a response (produce runs with acks=all).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _read_frame(sock: socket.socket) -> bytes | None:
    head = _read_exact(sock, 4)
    if head is None:
        return None
    body = _read_exact(sock, struct.unpack("!i", head)[0])
    return None if body is None else head + body


class _Pair:
    def __init__(self, client: socket.socket, broker: socket.socket) -> None:
        self.client, self.broker = client, broker
        self.sent = self.answered = 0

    def close(self) -> None:
        for s in (self.client, self.broker):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


class BrokerGate:
    """Listens on `port` and relays whole Kafka frames to 127.0.0.1:`broker_port`. The broker must advertise
    this port, so that clients reconnect through the gate. Use as a context manager."""

    def __init__(self, port: int, broker_port: int) -> None:
        self.port, self.broker_port = port, broker_port
        self._cond = threading.Condition()
        self._held = False
        self._pairs: set[_Pair] = set()
        self._listener = socket.create_server(("127.0.0.1", port))
        self._stopped = False
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> BrokerGate:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped = True
        self._listener.close()
        self.drop_connections()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                broker = socket.create_connection(("127.0.0.1", self.broker_port), timeout=5)
                broker.settimeout(None)
            except OSError:
                client.close()  # the broker is down: the client sees a refused connection, as without the gate
                continue
            pair = _Pair(client, broker)
            with self._cond:
                self._pairs.add(pair)
            threading.Thread(target=self._requests, args=(pair,), daemon=True).start()
            threading.Thread(target=self._responses, args=(pair,), daemon=True).start()

    def _requests(self, pair: _Pair) -> None:
        while (frame := _read_frame(pair.client)) is not None:
            with self._cond:
                # A held request stays here: the broker never sees it, the client sees no answer.
                while self._held and pair in self._pairs:
                    self._cond.wait()
                if pair not in self._pairs:
                    break
                pair.sent += 1
                try:
                    pair.broker.sendall(frame)
                except OSError:
                    break
        self._drop(pair)

    def _responses(self, pair: _Pair) -> None:
        while (frame := _read_frame(pair.broker)) is not None:
            try:
                pair.client.sendall(frame)
            except OSError:
                break
            with self._cond:
                pair.answered += 1
                self._cond.notify_all()
        self._drop(pair)

    def _drop(self, pair: _Pair) -> None:
        with self._cond:
            if pair not in self._pairs:
                return
            self._pairs.discard(pair)
            self._cond.notify_all()
        pair.close()

    def hold(self, timeout: float = 60) -> int:
        """Stop relaying requests, then wait until the broker has answered every request it was given. Returns
        how many connections were open."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._held = True
            while any(p.answered < p.sent for p in self._pairs):
                left = deadline - time.monotonic()
                if left <= 0:
                    busy = sum(p.sent - p.answered for p in self._pairs)
                    raise AssertionError(f"broker gate: {busy} request(s) still unanswered after {timeout}s")
                self._cond.wait(left)
            return len(self._pairs)

    def drop_connections(self) -> None:
        """Close every relayed connection (the broker is gone: clients see their connections drop)."""
        with self._cond:
            pairs, self._pairs = list(self._pairs), set()
            self._cond.notify_all()
        for p in pairs:
            p.close()

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()
