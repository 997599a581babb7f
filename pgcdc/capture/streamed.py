"""Large transactions streamed before commit (pgoutput protocol 2+, `streaming 'on'`).

The server sends a big transaction in blocks while it is still running, so it never spills it to its own
disk. Debezium's semantics forbid emitting uncommitted data, so each block's raw messages go to a temp file
per top-level transaction (memory stays flat in the transaction's size); at Stream Commit the file is read
back and decoded again, as if the transaction had arrived whole; at Stream Abort it is dropped, or for a
rolled-back subtransaction, that subtransaction's messages are skipped on replay.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_HEADER = struct.Struct(">QII")  # lsn, subtransaction xid, payload length


_PREFIX = "pgcdc-stream-"


def sweep_stale(spill_dir: str | None = None) -> list[str]:
    """Remove spill folders of pgcdc processes that no longer run (killed with SIGKILL: nothing cleaned up).
    Their transactions were never confirmed, so the server sends them again. Returns the folders removed."""
    root = Path(spill_dir or tempfile.gettempdir())
    removed = []
    for d in root.glob(f"{_PREFIX}*-*"):
        pid_text = d.name[len(_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or not d.is_dir():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # that process still runs
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # someone else's live process
        shutil.rmtree(d, ignore_errors=True)
        removed.append(str(d))
    return removed


class StreamedTransactions:
    def __init__(self, spill_dir: str | None = None) -> None:
        sweep_stale(spill_dir)
        self._dir = tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{os.getpid()}-", dir=spill_dir)
        self._files: dict[int, BinaryIO] = {}
        self._aborted: dict[int, set[int]] = {}

    def _path(self, xid: int) -> Path:
        return Path(self._dir.name) / f"{xid}.spill"

    def add(self, xid: int, subxid: int, lsn: int, payload: bytes | memoryview) -> None:
        f = self._files.get(xid)
        if f is None:
            f = self._files[xid] = open(self._path(xid), "wb")
        f.write(_HEADER.pack(lsn, subxid, len(payload)))
        f.write(payload)

    def abort(self, xid: int, subxid: int) -> None:
        if subxid == xid:
            self._drop(xid)
        else:
            self._aborted.setdefault(xid, set()).add(subxid)

    def commit(self, xid: int) -> Iterator[tuple[int, bytes]]:
        """The committed transaction's messages in stream order, without rolled-back subtransactions."""
        f = self._files.pop(xid, None)
        aborted = self._aborted.pop(xid, set())
        if f is None:
            return
        f.close()
        path = self._path(xid)
        try:
            with open(path, "rb") as r:
                while header := r.read(_HEADER.size):
                    lsn, subxid, length = _HEADER.unpack(header)
                    payload = r.read(length)
                    if subxid not in aborted:
                        yield lsn, payload
        finally:
            path.unlink(missing_ok=True)

    def _drop(self, xid: int) -> None:
        f = self._files.pop(xid, None)
        self._aborted.pop(xid, None)
        if f is not None:
            f.close()
            self._path(xid).unlink(missing_ok=True)

    @property
    def open_transactions(self) -> int:
        return len(self._files)

    def close(self) -> None:
        for xid in list(self._files):
            self._drop(xid)
        self._dir.cleanup()
