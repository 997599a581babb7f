"""What every throwaway server shares: a process on 127.0.0.1 with a folder of its own, started and waited for
by the subclass, and one lifecycle (stop, kill, cleanup, a context manager that cleans up after a failed start)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, Self

from pgcdc.errors import LocalServiceError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def end_process(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then SIGKILL if it is still there after 10 s."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def kill_process(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL, as a crash: nothing is flushed or closed on the way out."""
    if proc and proc.poll() is None:
        proc.kill()
        proc.wait(10)


class Managed:
    """A context manager over `start()` and `cleanup()`; a failed start is cleaned up too."""

    def start(self, timeout: float = 60) -> Self:
        raise NotImplementedError

    def cleanup(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class LocalServer(Managed):
    """A subclass sets `dir` and `logfile` and implements `start()`; `proc` is the running process."""

    dir: Path
    logfile: Path
    proc: subprocess.Popen[bytes] | None = None

    def spawn(self, args: list[str], **popen: object) -> None:
        """Starts `args` with stdout and stderr appended to the log file."""
        with open(self.logfile, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         **popen)  # type: ignore[call-overload]

    def wait_until(self, ready: Callable[[], bool], timeout: float, interval: float, what: str,
                   tail_chars: int = 800) -> Self:
        """Polls `ready` until it is true; a process that exits or a timeout ends it with the log's tail."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc is not None and self.proc.poll() is None:
            if ready():
                return self
            time.sleep(interval)
        self.failed_to_start(what, tail_chars)

    def failed_to_start(self, what: str, tail_chars: int = 800) -> NoReturn:
        tail = self.logfile.read_text(errors="replace")[-tail_chars:] if self.logfile.exists() else ""
        self.stop()
        raise LocalServiceError(f"{what}: {tail.strip()}")

    def stop(self) -> None:
        end_process(self.proc)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is flushed or closed on the way out."""
        kill_process(self.proc)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
