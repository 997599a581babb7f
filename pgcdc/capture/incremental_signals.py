"""What a signal does to an incremental snapshot: the watermark rows open and close the window in flight,
`execute-snapshot` queues tables (or asks for a blocking snapshot), `stop-snapshot` drops them,
`pause-snapshot` and `resume-snapshot` hold and restart the reading, `log` writes its message. A part of
`IncrementalSnapshot` (incremental.py), whose state they read and write; what a signal's data names is read in
capture/signals.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgcdc.capture.incremental_chunks import ChunkTable
from pgcdc.capture.signals import Collection, parse_signal_data, snapshot_request, stopped

if TYPE_CHECKING:
    from pgcdc.notifications.snapshots import IncrementalSnapshotNotices

# The incremental snapshot's logger (incremental.py), so its log lines keep their logger name.
log = logging.getLogger("pgcdc.capture.incremental")

OPEN, CLOSE = "snapshot-window-open", "snapshot-window-close"


class SnapshotSignals:
    """The signal handling of `IncrementalSnapshot`."""

    # IncrementalSnapshot's state, set in its __init__ (incremental.py).
    captured: Callable[[], list[tuple[str, str]]]
    table_order: Callable[[str], Any]
    correlation_id: str | None
    collections: list[Collection]
    key: tuple[str, ...] | None
    max_key: tuple[str, ...] | None
    paused: bool
    window: str | None
    window_open: bool
    buffer: dict[tuple[Any, ...], dict[str, Any]]
    snap: tuple[int, int, frozenset[int]] | None
    current: ChunkTable | None
    current_name: tuple[str, str] | None
    _blocking: list[tuple[str, str | None]]
    _next_after_emit: bool
    running: Any  # a property of IncrementalSnapshot
    _close_window: Callable[[str], None]
    notices: IncrementalSnapshotNotices | None

    def _names(self) -> list[str]:
        """The names of the tables still to be read, the current one first."""
        return [c[0] for c in self.collections]

    def _signal(self, sig_id: str | None, kind: str | None, data_text: str | None, sequence: str) -> None:
        if kind == OPEN:
            if self.window is not None and sig_id == f"{self.window}-open":
                self.window_open = True
            return
        if kind == CLOSE:
            if self.window is not None and sig_id == f"{self.window}-close":
                self._close_window(sequence)
            return
        data = parse_signal_data(data_text)
        if kind == "execute-snapshot":
            self._execute(sig_id, data)
        elif kind == "stop-snapshot":
            self._stop(data)
        elif kind == "pause-snapshot":
            if self.running and not self.paused:
                log.info("incremental snapshot paused (signal %s)", sig_id)
                self.paused = True
                if self.notices is not None:
                    self.notices.paused(self.correlation_id, self._names())
        elif kind == "resume-snapshot":
            if self.paused:
                log.info("incremental snapshot resumed (signal %s)", sig_id)
                self.paused = False
                if self.notices is not None and self.running:
                    self.notices.resumed(self.correlation_id, self._names())
                if self.window is None and self.running:
                    self._next_after_emit = True
        elif kind == "log":
            log.info("signal %s: %s", sig_id, data.get("message", ""))
        else:
            log.warning("signal %s of unknown type %r ignored", sig_id, kind)

    def _execute(self, sig_id: str | None, data: dict[str, Any]) -> None:
        request = snapshot_request(sig_id, data, [f"{s}.{t}" for s, t in self.captured()],
                                   self._names(), self.table_order)
        if request is None:
            return
        added = request.tables
        if request.blocking:
            self._blocking = [(n, cond) for n, cond, _ in added]
            log.info("blocking snapshot of %s requested (signal %s)", [a[0] for a in added], sig_id)
            return
        if not added:
            return
        log.info("incremental snapshot of %s requested (signal %s)", [a[0] for a in added], sig_id)
        was_running = self.running
        self.collections += added
        if not was_running:
            self.correlation_id = sig_id
            self.key = self.max_key = None
            self._next_after_emit = not self.paused
            if self.notices is not None:
                self.notices.started(sig_id, self._names())

    def _stop(self, data: dict[str, Any]) -> None:
        removed = stopped(data, self._names())
        self.collections = [c for c in self.collections if c[0] not in removed]
        if self.notices is not None and (removed or self.collections):
            # Debezium notifies a stop of a running snapshot, naming the tables it removed (none, when the
            # signal named none of them)
            self.notices.aborted(self.correlation_id, removed)
        if not removed:
            return
        log.info("incremental snapshot stopped for %s", removed)
        if self.current_name is not None and f"{self.current_name[0]}.{self.current_name[1]}" in removed:
            self._drop_window()
            self.key = self.max_key = None
            if self.collections and not self.paused:
                self._next_after_emit = True
        if not self.collections:
            self._drop_window()
            self.key = self.max_key = None
            self.correlation_id = None

    def _drop_window(self) -> None:
        self.window, self.window_open, self.buffer, self.snap = None, False, {}, None
        self.current = self.current_name = None
