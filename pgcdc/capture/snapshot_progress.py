"""Snapshot progress a person can see: numbers on an object, shown as rich bars in a terminal or as log lines.

`SnapshotMetrics` is the one place the numbers live (rows per table, rows/s, ETA); metrics exporters read it.
`ProgressReporter` renders it: one rich progress bar per table when stderr is a terminal, else a log line
every `interval_s` with rows/s and ETA. The emitting thread calls `add()` once per batch, not per row.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("pgcdc.snapshot")


@dataclass
class TableProgress:
    name: str
    estimate: int  # pg_class.reltuples: approximate
    rows: int = 0
    done: bool = False
    started: float | None = None
    finished: float | None = None


@dataclass
class SnapshotMetrics:
    """Readable by other threads at any time (plain ints and floats; updated by the emitting thread)."""

    tables: dict[str, TableProgress] = field(default_factory=dict)
    rows: int = 0  # records emitted in this run
    resumed_rows: int = 0  # records emitted by earlier runs of this snapshot
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    current: str | None = None

    @property
    def estimate(self) -> int:
        return sum(max(t.estimate, t.rows) for t in self.tables.values())

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        rate = self.rows_per_second
        if not rate:
            return None
        left = sum(max(t.estimate - t.rows, 0) for t in self.tables.values() if not t.done)
        return left / rate

    def snapshot(self) -> dict[str, Any]:
        """The numbers as a plain dict (what a metrics endpoint would publish)."""
        return {"rows": self.rows, "resumed_rows": self.resumed_rows, "rows_per_second": self.rows_per_second,
                "eta_seconds": self.eta_seconds, "elapsed_seconds": self.elapsed,
                "tables_total": len(self.tables), "tables_done": sum(t.done for t in self.tables.values()),
                "tables": {n: {"rows": t.rows, "estimate": t.estimate, "done": t.done}
                           for n, t in self.tables.items()}}


class ProgressReporter:
    def __init__(self, metrics: SnapshotMetrics, *, interval_s: float = 10.0, terminal: bool | None = None) -> None:
        self.metrics = metrics
        self.interval = interval_s
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self._next_log = time.monotonic() + interval_s
        self._rich: Any = None
        self._bars: dict[str, Any] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        if not self.terminal:
            return
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        except ImportError:  # rich is optional: fall back to log lines
            self.terminal = False
            return
        self._rich = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("{task.fields[rate]} rows/s"), TimeRemainingColumn(),
                              console=Console(stderr=True), transient=False)
        self._rich.start()

    def table_started(self, name: str) -> None:
        t = self.metrics.tables[name]
        t.started = time.monotonic()
        self.metrics.current = name
        if self._rich is not None:
            self._bars[name] = self._rich.add_task(name, total=max(t.estimate, 1), rate="-")

    def add(self, name: str, n: int) -> None:
        m = self.metrics
        t = m.tables[name]
        t.rows += n
        m.rows += n
        now = time.monotonic()
        if self._rich is not None:
            bar = self._bars.get(name)
            if bar is not None:
                rate = t.rows / (now - t.started) if t.started and now > t.started else 0
                self._rich.update(bar, completed=t.rows, total=max(t.estimate, t.rows, 1), rate=f"{rate:,.0f}")
        elif now >= self._next_log:
            self._next_log = now + self.interval
            eta = m.eta_seconds
            log.info("snapshot: %s rows (%s/%s tables done), %.0f rows/s, ETA %s; now %s (%d of ~%d rows)",
                     f"{m.rows + m.resumed_rows:,}", sum(x.done for x in m.tables.values()), len(m.tables),
                     m.rows_per_second, _duration(eta), name, t.rows, t.estimate)

    def table_done(self, name: str) -> None:
        t = self.metrics.tables[name]
        t.done = True
        t.finished = time.monotonic()
        took = t.finished - (t.started or t.finished)
        if self._rich is not None and name in self._bars:
            self._rich.update(self._bars[name], completed=t.rows, total=max(t.rows, 1))
        log.info("snapshot of %s: %d rows in %.1f s (%.0f rows/s)", name, t.rows, took,
                 t.rows / took if took > 0 else 0)

    def close(self) -> None:
        self.metrics.finished = self.metrics.finished or time.monotonic()
        if self._rich is not None:
            self._rich.stop()
            self._rich = None


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
