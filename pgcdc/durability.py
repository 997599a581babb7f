"""The one place where a position becomes durable: Kafka acknowledged -> offset stored -> LSN confirmed.

Each step starts only after the previous one succeeded, so a crash between any two leaves the system in a
state a restart repairs: records acknowledged but offset not stored are re-sent (duplicates from the last
window only); an offset stored but not confirmed makes the server resend transactions the resume point skips.
"""

from __future__ import annotations

import os
import signal
from typing import Protocol

from pgcdc.capture.position import Position, SnapshotDone
from pgcdc.offsets import OffsetStore
from pgcdc.sink import Sink


class Confirmer(Protocol):
    def confirm(self, lsn: int) -> None: ...


class Checkpointer:
    def __init__(self, sink: Sink, offsets: OffsetStore, stream: Confirmer | None) -> None:
        self.sink = sink
        self.offsets = offsets
        self.stream = stream
        self.stored: Position | SnapshotDone | None = None
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
            self.sink.flush()
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
