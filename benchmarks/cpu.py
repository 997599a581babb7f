"""Where the CPU goes during a benchmark run: CPU-seconds per party, read from /proc (Linux).

`CpuMeter(broker_pid, postmaster_pid)` snapshots, on `start()` and `stop()`: this process's calling thread
(pgcdc's Python: the benchmarks run the connector in their main thread), this process's other threads
(librdkafka's and psycopg's, in C), the broker process, and PostgreSQL (the postmaster and all its children:
walsenders, backends, the WAL writer). `line()` prints them with the wall time, so a ratio can be read
against what the 2 cores had to give.
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: Path) -> list[str] | None:
    """The fields of a /proc/<pid>/stat after "pid (comm)" (field 3 of stat(5) is [0]), None if it is gone."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process (all its threads), 0 if it is gone."""
    fields = _stat(Path(f"/proc/{pid}/stat"))
    return (int(fields[11]) + int(fields[12])) / _TICK if fields else 0.0  # fields 14 and 15 of stat(5)


def _tree_cpu(root: int) -> float:
    """CPU of `root` and its direct children (a postmaster's backends), including children already reaped
    (cutime + cstime of the root)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(entry / "stat")
        if fields is None:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == root:
            total += sum(int(f) for f in fields[11:15]) / _TICK
        elif ppid == root:
            total += (int(fields[11]) + int(fields[12])) / _TICK
    return total


def postmaster_pid(datadir: Path) -> int:
    return int((datadir / "postmaster.pid").read_text().split()[0])


class CpuMeter:
    def __init__(self, broker_pid: int | None, postmaster: int | None) -> None:
        self.broker_pid, self.postmaster = broker_pid, postmaster
        self._start: tuple[float, ...] = ()
        self.used: tuple[float, ...] = ()

    def _now(self) -> tuple[float, ...]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return (time.perf_counter(), time.thread_time(), own.ru_utime + own.ru_stime,
                _proc_cpu(self.broker_pid) if self.broker_pid else 0.0,
                _tree_cpu(self.postmaster) if self.postmaster else 0.0)

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> None:
        self.used = tuple(b - a for a, b in zip(self._start, self._now()))

    def line(self, events: int) -> str:
        wall, python, process, broker, postgres = self.used
        per = 1e6 / events if events else float("nan")
        return (f"cpu s: pgcdc python {python:.2f} ({python * per:.1f} us/event), pgcdc C threads "
                f"{process - python:.2f} ({(process - python) * per:.1f} us/event), broker {broker:.2f}, "
                f"postgres {postgres:.2f}; wall {wall:.2f} ({(process + broker + postgres) / wall:.2f} of "
                f"{os.cpu_count()} cores busy)")
