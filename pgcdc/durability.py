"""The one place where a position becomes durable: Kafka acknowledged -> offset stored -> LSN confirmed.

Each step starts only after the previous one succeeded, so a crash between any two leaves the system in a
state a restart repairs: records acknowledged but offset not stored are re-sent (duplicates from the last
window only); an offset stored but not confirmed makes the server resend transactions the resume point skips.

The replication loop does not wait for Kafka to take a checkpoint (`Checkpointer.tick`): a due checkpoint is
taken at the first moment nothing sent is still unacknowledged, which at a steady rate is the gap between two
transactions. Only when a stream stays that busy for another whole interval does it wait for every record
(docs/decisions/checkpoints.md).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Protocol

from pgcdc.capture.position import Position, SnapshotDone
from pgcdc.errors import SinkError
from pgcdc.offsets import OffsetStore
from pgcdc.sink import Sink


class Confirmer(Protocol):
    def confirm(self, lsn: int) -> None: ...


class Checkpointer:
    def __init__(self, sink: Sink, offsets: OffsetStore, stream: Confirmer | None, *, interval_s: float = 1.0,
                 now: float = 0.0, keepalive: Callable[[], None] | None = None) -> None:
        self.sink = sink
        self.offsets = offsets
        self.stream = stream
        # Called about once a second while a checkpoint waits for Kafka: the replication stream's status
        # update, so a broker outage longer than wal_sender_timeout does not make the server drop the
        # connection (the update repeats the last confirmed position: it confirms nothing new).
        self.keepalive = keepalive
        self.stored: Position | SnapshotDone | None = None
        self.interval_s = interval_s
        self._due_at = now + interval_s
        # Checkpoints taken without waiting for Kafka, and after waiting (a due one found no empty queue in time).
        self.without_wait = 0
        self.after_wait = 0
        # Fault injection for the crash tests: kill this process right after the named step.
        self._crash_after = os.environ.get("PGCDC_TEST_CRASH_AFTER", "")

    def checkpoint(self, position: Position | SnapshotDone | None) -> None:
        """Make `position` durable. A no-op if nothing new; raises (and stores nothing) if Kafka fails."""
        if position is None or position == self.stored:
            return
        acknowledged = getattr(self.sink, "acknowledged", None)
        if acknowledged is not None:
            # A sink acknowledged by someone else (the embedding API's application): store only the newest
            # position all of whose records were acknowledged.
            position = acknowledged(position)
            if position is None or position == self.stored:
                return
        else:
            self._wait_for_kafka()
        self._commit(position)

    def _wait_for_kafka(self) -> None:
        """Every record acknowledged (raises as the sink's `flush` does), keeping the stream alive meanwhile."""
        wait = getattr(self.sink, "wait_acknowledged", None)
        if wait is None or self.keepalive is None:
            self.sink.flush()
            return
        limit = float(getattr(self.sink, "flush_timeout_s", 120.0))
        deadline = time.monotonic() + limit
        while not wait(min(1.0, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                raise SinkError(f"kafka: records not acknowledged within {limit:.0f} s")
            self.keepalive()

    def try_checkpoint(self, position: Position | SnapshotDone | None) -> bool:
        """Make `position` durable if that needs no wait for Kafka; False (nothing stored) if records are out.

        `position` must be the newest one whose records were all sent: then an empty queue at this moment
        means all of them were acknowledged. A sink without `all_acknowledged` (file, memory, the embedding
        application's) does not wait on a broker: its ordinary checkpoint."""
        if position is None or position == self.stored:
            return True
        all_acknowledged = getattr(self.sink, "all_acknowledged", None)
        if all_acknowledged is None:
            self.checkpoint(position)
            return True
        if not all_acknowledged():
            return False
        self._commit(position)
        return True

    def tick(self, position: Position | SnapshotDone | None, now: float) -> bool:
        """The replication loop's call, with the capture's position and `time.monotonic()`.

        Every `interval_s` a checkpoint falls due. It is taken at the first call that finds every record
        acknowledged; if none has by another `interval_s` after it fell due, this call waits for Kafka (a
        constantly busy stream still stores its position, at least every two intervals). True while a due
        checkpoint waits for an empty queue: the caller should then call again soon (every frame)."""
        if now < self._due_at:
            return False
        before = self.stored
        if self.try_checkpoint(position):
            self.without_wait += self.stored is not before
        elif now < self._due_at + self.interval_s:
            return True
        else:
            self.checkpoint(position)
            self.after_wait += 1
        self._due_at = now + self.interval_s
        return False

    def _commit(self, position: Position | SnapshotDone) -> None:
        """Store and confirm `position`, every record before it being acknowledged."""
        self._maybe_crash("flush")
        self.offsets.store(position.to_offset())
        self._maybe_crash("store")
        if self.stream is not None:
            self.stream.confirm(position.end_lsn)
        self._maybe_crash("confirm")
        self.stored = position

    def _maybe_crash(self, step: str) -> None:
        if self._crash_after == step:
            os.kill(os.getpid(), signal.SIGKILL)
