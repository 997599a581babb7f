"""Spill files of transactions streamed before commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pgcdc.capture.streamed import StreamedTransactions


def test_spill_folders_of_dead_processes_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"pgcdc-stream-{int(dead.stdout)}-abc"  # a process killed with SIGKILL left it
    stale.mkdir()
    (stale / "7.spill").write_bytes(b"x" * 100)
    live = tmp_path / f"pgcdc-stream-{os.getpid()}-def"
    live.mkdir()
    streams = StreamedTransactions(spill_dir=str(tmp_path))
    assert not stale.exists() and live.exists()
    streams.close()


def test_commit_replays_without_rolled_back_subtransactions(tmp_path: Path) -> None:
    streams = StreamedTransactions(spill_dir=str(tmp_path))
    streams.add(10, 10, 100, b"a")
    streams.add(10, 11, 101, b"b")
    streams.add(10, 10, 102, b"c")
    streams.abort(10, 11)
    assert list(streams.commit(10)) == [(100, b"a"), (102, b"c")]
    streams.add(12, 12, 200, b"x")
    streams.abort(12, 12)
    assert list(streams.commit(12)) == []
    streams.close()
