"""Streaming replication COPY frames, sans-IO (PG docs, "Streaming Replication Protocol", START_REPLICATION).

After START_REPLICATION the connection is in COPY_BOTH mode; every CopyData payload from the server is an
XLogData ('w') or a Primary keepalive ('k'), and we answer with Standby status updates ('r').
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from pgcdc.errors import ProtocolError, UnsupportedMessage
from pgcdc.protocol import _struct as s


class XLogData(NamedTuple):
    """'w': WAL data. In logical replication the payload is one output plugin (pgoutput) message. A named tuple,
    as the messages made per row are (messages.py): one is made per message."""

    start_lsn: int  # where the data in this message starts in WAL
    end_lsn: int  # the current end of WAL on the server
    send_time: int  # server clock, microseconds since 2000-01-01
    payload: memoryview


@dataclass(frozen=True, slots=True)
class PrimaryKeepalive:
    """'k': the server's end of WAL; when reply_requested, answer at once or risk wal_sender_timeout."""

    end_lsn: int
    send_time: int
    reply_requested: bool


_XLOG_DATA_HEAD = 1 + s.XLOG_DATA.size  # 25 bytes before the payload
_KEEPALIVE_SIZE = 1 + s.KEEPALIVE.size  # 18 bytes, nothing after


_new = tuple.__new__
_unpack_xlog_data = s.XLOG_DATA.unpack_from


def parse_copy_data(buf: bytes | memoryview) -> XLogData | PrimaryKeepalive:
    """One CopyData payload from the server. The XLogData payload is a view into `buf` (no copy)."""
    view = memoryview(buf)
    size = len(view)
    if size >= _XLOG_DATA_HEAD and view[0] == 0x77:  # 'w', the hot path
        start, end, clock = _unpack_xlog_data(view, 1)
        return _new(XLogData, (start, end, clock, view[_XLOG_DATA_HEAD:]))
    kind = view[:1].tobytes()
    if kind == b"w":
        raise ProtocolError(f"XLogData frame truncated at offset {size}: its header is {_XLOG_DATA_HEAD} bytes")
    if kind == b"k":
        if size != _KEEPALIVE_SIZE:
            raise ProtocolError(
                f"Primary keepalive frame truncated at offset {size}: it is {_KEEPALIVE_SIZE} bytes"
                if size < _KEEPALIVE_SIZE else
                f"Primary keepalive frame has {size - _KEEPALIVE_SIZE} unexpected trailing byte(s) at offset "
                f"{_KEEPALIVE_SIZE}")
        end, clock, reply = s.KEEPALIVE.unpack_from(view, 1)
        return PrimaryKeepalive(end, clock, reply == 1)
    if size == 0:
        raise ProtocolError("empty CopyData frame at offset 0")
    raise UnsupportedMessage(f"unsupported CopyData frame type {kind!r} at offset 0 ({size} bytes)")


def standby_status_update(written: int, flushed: int, applied: int, now_us_since_2000: int,
                          reply: bool = False) -> bytes:
    """'r': WAL positions received (written), durably handled (flushed) and applied; `reply` asks the server
    to answer with a keepalive at once. The server may recycle WAL and advance the slot up to `flushed`."""
    try:
        return s.STANDBY_STATUS.pack(b"r", written, flushed, applied, now_us_since_2000, 1 if reply else 0)
    except struct.error as exc:
        raise ValueError(f"standby status update out of range: {exc}") from None
