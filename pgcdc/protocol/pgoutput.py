"""pgoutput decoder, protocol versions 1-4: one message's bytes in, one frozen message out. Sans-IO.

Spec: PG docs, "Logical Replication Message Formats" (each XLogData payload holds exactly one message) and
"Logical Streaming Replication Protocol" (which fields each protocol version adds).

The only state is whether we are between Stream Start and Stream Stop: there, Relation, Type, Insert,
Update, Delete, Truncate and Message carry an xid right after the message byte (protocol version 2+). It is
the xid of the (sub)transaction that made the change: rows written in a subtransaction carry the
subtransaction's xid, not the one in Stream Start (seen in tests/data/pgoutput/proto2_stream.bin). Nothing
else needs the negotiated version: the v4 fields of Stream Abort are told apart by the message length.

Malformed input raises ProtocolError naming the message and the offset; an unknown message byte raises
UnsupportedMessage. Low-level errors (IndexError, struct.error, UnicodeDecodeError) never escape.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from itertools import repeat
from typing import Any, cast

from pgcdc.errors import ProtocolError, UnsupportedMessage
from pgcdc.protocol import _struct as s
from pgcdc.protocol import messages as m
from pgcdc.protocol.messages import UNCHANGED_TOAST, Message, Value

# Zero bytes appended to every message so that the hot path can read fixed-size headers and the 5-byte
# kind+length of a column without bounds checks; reading into the padding is caught by the end check
# (`end != size`) or by an invalid tuple/column kind, both reported with their offset.
_PAD = bytes(16)

_NAMES = {
    b"B": "Begin", b"C": "Commit", b"O": "Origin", b"R": "Relation", b"Y": "Type", b"I": "Insert",
    b"U": "Update", b"D": "Delete", b"T": "Truncate", b"M": "Message", b"S": "Stream Start",
    b"E": "Stream Stop", b"c": "Stream Commit", b"A": "Stream Abort", b"b": "Begin Prepare",
    b"P": "Prepare", b"K": "Commit Prepared", b"r": "Rollback Prepared", b"p": "Stream Prepare",
}
_OLD_KINDS = {b"K": "K", b"O": "O"}  # Update/Delete: key columns only, or the whole old row

_Handler = Callable[[bytes, int, int, "int | None"], Message]


class _Malformed(Exception):
    """Where (byte offset in the message) and why a message does not decode; decode() adds the name."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(offset, reason)
        self.offset = offset
        self.reason = reason


def _end(end: int, size: int) -> _Malformed:
    if end > size:
        return _Malformed(size, "message truncated")
    return _Malformed(end, f"{size - end} unexpected trailing byte(s)")


# -- cold path helpers: checked reads with their offsets ----------------------------------------------------
def _unpack(st: struct.Struct, buf: bytes, pos: int, size: int) -> tuple[Any, ...]:
    if pos + st.size > size:
        raise _Malformed(pos, f"message truncated: {st.size} bytes needed, {max(size - pos, 0)} left")
    return st.unpack_from(buf, pos)


def _cstring(buf: bytes, pos: int, size: int) -> tuple[str, int]:
    """A NUL-terminated String (PG docs, "Message Data Types"); returns it and the offset after the NUL."""
    nul = buf.find(0, pos, size)
    if nul < 0:
        raise _Malformed(pos, "unterminated string")
    try:
        return buf[pos:nul].decode(), nul + 1
    except UnicodeDecodeError as exc:
        raise _Malformed(pos + exc.start, "string is not valid UTF-8") from None


def _gid_message(cls: Callable[..., Message], st: struct.Struct) -> _Handler:
    """Two-phase messages: fixed fields, then the GID string, then nothing (PG docs, protocol v3)."""

    def decode(buf: bytes, pos: int, size: int, xid: int | None) -> Message:
        head = _unpack(st, buf, pos, size)
        gid, end = _cstring(buf, pos + st.size, size)
        if end != size:
            raise _end(end, size)
        return cls(*head, gid)

    return decode


_new = tuple.__new__  # the row messages, Begin and Commit are named tuples (messages.py): built in one call


def _fixed(cls: Callable[..., Message], st: struct.Struct) -> _Handler:
    """Messages that are a fixed struct and nothing else: Begin, Commit, Stream Commit."""
    unpack = st.unpack_from
    make = cls
    if isinstance(cls, type) and issubclass(cls, tuple):  # Begin, Commit: the struct's values are the message
        def decode_tuple(buf: bytes, pos: int, size: int, xid: int | None) -> Message:
            if pos + st.size != size:
                raise _end(pos + st.size, size)
            return cast(Message, _new(cls, unpack(buf, pos)))
        return decode_tuple

    def decode(buf: bytes, pos: int, size: int, xid: int | None) -> Message:
        if pos + st.size != size:
            raise _end(pos + st.size, size)
        return make(*unpack(buf, pos))

    return decode


# -- hot path: Insert, Update, Delete ---------------------------------------------------------------------
# Measured per 8-column text row, these choices each pay: one struct call per column for kind and length;
# values sliced from a latin-1 view of the tuple bytes (when that view is ASCII, a char is a byte and the
# slice *is* the UTF-8 decoding: no bytes slice and decode call per column); kind codes as literals; the
# message, a named tuple, built by tuple.__new__ without its generated __new__'s call. The per-column branch on
# the kind stays: a table call per value costs more.
def _values(body: bytes, text: str, pos: int, n: int) -> tuple[tuple[Value, ...], int]:
    """`n` TupleData columns from `pos` in `body` (PG docs, "TupleData"): the values and the end offset.
    `text` is `body` decoded as latin-1."""
    ascii_only = text.isascii()  # O(1): CPython strings know their widest char
    kind_len = s.KIND_LEN.unpack_from
    out: list[Value] = []
    append = out.append
    try:
        for _ in repeat(None, n):
            kind, ln = kind_len(body, pos)
            if kind == 116:  # 't' text
                pos += ln + 5
                v = text[pos - ln:pos]
                append(v if ascii_only or v.isascii() else body[pos - ln:pos].decode())
            elif kind == 110:  # 'n' null
                append(None)
                pos += 1
            elif kind == 117:  # 'u' unchanged TOAST
                append(UNCHANGED_TOAST)
                pos += 1
            elif kind == 98:  # 'b' binary
                pos += ln + 5
                append(body[pos - ln:pos])
            else:
                raise _Malformed(pos, f"unknown column kind {kind:#04x}")
    except struct.error:  # pos ran past the padding: a length pointed beyond the message
        raise _Malformed(pos, "message truncated") from None
    except UnicodeDecodeError as exc:
        raise _Malformed(pos - ln + exc.start, "column value is not valid UTF-8") from None
    return tuple(out), pos


def _insert(buf: bytes, pos: int, size: int, xid: int | None) -> m.Insert:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    if kind != b"N":
        raise _Malformed(pos + 4, f"expected tuple type 'N', got {kind!r}")
    pos += 7
    # The tuple bytes on their own: relation OIDs and xids in the header are often not ASCII, and
    # str.isascii() is O(1) on a whole string.
    body = buf[pos:]
    text = body.decode("latin-1")
    try:
        new, end = _values(body, text, 0, n)
    except _Malformed as exc:
        raise _Malformed(pos + exc.offset, exc.reason) from None
    if pos + end != size:
        raise _end(pos + end, size)
    return _new(m.Insert, (xid, oid, new))


def _update(buf: bytes, pos: int, size: int, xid: int | None) -> m.Update:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    base = pos + 4  # offsets below are relative to the first tuple type byte
    body = buf[base:]
    text = body.decode("latin-1")
    old = old_kind = None
    try:
        pos = 3
        if kind != b"N":
            # 'K' (replica identity changed) or 'O' (REPLICA IDENTITY FULL): the old tuple comes first.
            old_kind = _OLD_KINDS.get(kind)
            if old_kind is None:
                raise _Malformed(0, f"expected tuple type 'K', 'O' or 'N', got {kind!r}")
            old, pos = _values(body, text, pos, n)
            if base + pos + 3 > size:
                raise _Malformed(size - base, "message truncated")
            kind, n = s.TUPLE_HEAD.unpack_from(body, pos)
            if kind != b"N":
                raise _Malformed(pos, f"expected tuple type 'N', got {kind!r}")
            pos += 3
        new, end = _values(body, text, pos, n)
    except _Malformed as exc:
        raise _Malformed(base + exc.offset, exc.reason) from None
    if base + end != size:
        raise _end(base + end, size)
    return _new(m.Update, (xid, oid, old, old_kind, new))


def _delete(buf: bytes, pos: int, size: int, xid: int | None) -> m.Delete:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    old_kind = _OLD_KINDS.get(kind)
    if old_kind is None:
        raise _Malformed(pos + 4, f"expected tuple type 'K' or 'O', got {kind!r}")
    pos += 7
    body = buf[pos:]
    text = body.decode("latin-1")
    try:
        old, end = _values(body, text, 0, n)
    except _Malformed as exc:
        raise _Malformed(pos + exc.offset, exc.reason) from None
    if pos + end != size:
        raise _end(pos + end, size)
    return _new(m.Delete, (xid, oid, old, old_kind))


# -- cold path: schema, truncate, messages, stream and two-phase control -----------------------------------
def _origin(buf: bytes, pos: int, size: int, xid: int | None) -> m.Origin:
    (lsn,) = _unpack(s.UINT64, buf, pos, size)
    name, end = _cstring(buf, pos + 8, size)
    if end != size:
        raise _end(end, size)
    return m.Origin(lsn, name)


def _relation(buf: bytes, pos: int, size: int, xid: int | None) -> m.Relation:
    (oid,) = _unpack(s.UINT32, buf, pos, size)
    namespace, pos = _cstring(buf, pos + 4, size)
    name, pos = _cstring(buf, pos, size)
    (ident,) = _unpack(s.UINT8, buf, pos, size)
    (ncols,) = _unpack(s.UINT16, buf, pos + 1, size)
    pos += 3
    columns = []
    for _ in range(ncols):
        (flags,) = _unpack(s.UINT8, buf, pos, size)
        colname, pos = _cstring(buf, pos + 1, size)
        type_oid, typmod = _unpack(s.COLUMN_TAIL, buf, pos, size)
        pos += 8
        columns.append(m.Column(flags, colname, type_oid, typmod))
    if pos != size:
        raise _end(pos, size)
    return m.Relation(xid, oid, namespace, name, chr(ident), tuple(columns))


def _type(buf: bytes, pos: int, size: int, xid: int | None) -> m.TypeMessage:
    (oid,) = _unpack(s.UINT32, buf, pos, size)
    namespace, pos = _cstring(buf, pos + 4, size)
    name, pos = _cstring(buf, pos, size)
    if pos != size:
        raise _end(pos, size)
    return m.TypeMessage(xid, oid, namespace, name)


def _truncate(buf: bytes, pos: int, size: int, xid: int | None) -> m.Truncate:
    nrels, options = _unpack(s.TRUNCATE_HEAD, buf, pos, size)
    pos += 5
    if pos + 4 * nrels != size:
        raise _end(pos + 4 * nrels, size)
    return m.Truncate(xid, options, struct.unpack_from(f"!{nrels}I", buf, pos))


def _message(buf: bytes, pos: int, size: int, xid: int | None) -> m.LogicalMessage:
    flags, lsn = _unpack(s.MESSAGE_HEAD, buf, pos, size)
    prefix, pos = _cstring(buf, pos + 9, size)
    (length,) = _unpack(s.UINT32, buf, pos, size)
    pos += 4
    if pos + length != size:
        raise _end(pos + length, size)
    return m.LogicalMessage(xid, bool(flags & 1), lsn, prefix, buf[pos:size])


def _stream_abort(buf: bytes, pos: int, size: int, xid: int | None) -> m.StreamAbort:
    # Protocol v4 with streaming = parallel appends abort LSN and timestamp; the length tells which.
    if size - pos == s.STREAM_ABORT_V4.size:
        return m.StreamAbort(*s.STREAM_ABORT_V4.unpack_from(buf, pos))
    if size - pos != s.STREAM_ABORT.size:
        raise _end(pos + s.STREAM_ABORT.size, size)
    return m.StreamAbort(*s.STREAM_ABORT.unpack_from(buf, pos))


def _stream_start(buf: bytes, pos: int, size: int, xid: int | None) -> m.StreamStart:
    if pos + s.STREAM_START.size != size:
        raise _end(pos + s.STREAM_START.size, size)
    txid, first = s.STREAM_START.unpack_from(buf, pos)
    return m.StreamStart(txid, first == 1)


def _stream_stop(buf: bytes, pos: int, size: int, xid: int | None) -> m.StreamStop:
    if pos != size:
        raise _end(pos, size)
    return m.StreamStop()


# Message byte -> (handler, whether an xid follows the message byte, the table for the next message).
# Outside a streamed block no message has an xid prefix; inside one the schema and data messages do (PG docs:
# "Xid of the transaction (only present for streamed transactions)"). Origin may follow Stream Start
# (pgoutput_stream_start), without an xid. Stream Start and Stream Stop switch tables: the decoder's state.
_Table = dict[int, tuple[_Handler, bool, "_Table"]]
_OUTSIDE: _Table = {}
_INSIDE: _Table = {}
_OUTSIDE.update({
    ord("B"): (_fixed(m.Begin, s.BEGIN), False, _OUTSIDE),
    ord("C"): (_fixed(m.Commit, s.COMMIT), False, _OUTSIDE),
    ord("O"): (_origin, False, _OUTSIDE),
    ord("R"): (_relation, False, _OUTSIDE),
    ord("Y"): (_type, False, _OUTSIDE),
    ord("I"): (_insert, False, _OUTSIDE),
    ord("U"): (_update, False, _OUTSIDE),
    ord("D"): (_delete, False, _OUTSIDE),
    ord("T"): (_truncate, False, _OUTSIDE),
    ord("M"): (_message, False, _OUTSIDE),
    ord("S"): (_stream_start, False, _INSIDE),
    ord("c"): (_fixed(m.StreamCommit, s.STREAM_COMMIT), False, _OUTSIDE),
    ord("A"): (_stream_abort, False, _OUTSIDE),
    ord("b"): (_gid_message(m.BeginPrepare, s.BEGIN_PREPARE), False, _OUTSIDE),
    ord("P"): (_gid_message(m.Prepare, s.PREPARE), False, _OUTSIDE),
    ord("K"): (_gid_message(m.CommitPrepared, s.PREPARE), False, _OUTSIDE),
    ord("r"): (_gid_message(m.RollbackPrepared, s.ROLLBACK_PREPARED), False, _OUTSIDE),
    ord("p"): (_gid_message(m.StreamPrepare, s.PREPARE), False, _OUTSIDE),
})
_INSIDE.update({
    **{ord(c): (_OUTSIDE[ord(c)][0], True, _INSIDE) for c in "RYIUDTM"},
    ord("O"): (_origin, False, _INSIDE),
    ord("E"): (_stream_stop, False, _OUTSIDE),
})


class PgoutputDecoder:
    """Decodes one pgoutput message (one XLogData payload) per call, in arrival order.

    Keep one per replication connection: it remembers whether a streamed block is open, which decides
    whether the next data message starts with an xid. A message that fails to decode leaves that unchanged.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table = _OUTSIDE

    @property
    def in_stream(self) -> bool:
        """True between Stream Start and Stream Stop."""
        return self._table is _INSIDE

    def reset(self) -> None:
        """Forget a half-read streamed block (a new replication connection starts outside one)."""
        self._table = _OUTSIDE

    def decode(self, data: bytes | memoryview) -> Message:
        size = len(data)
        buf = b"".join((data, _PAD))
        entry = self._table.get(buf[0])
        if entry is None:
            raise self._unexpected(buf, size)
        handler, has_xid, following = entry
        try:
            if has_xid:
                msg = handler(buf, 5, size, s.unpack_uint32(buf, 1)[0])
            else:
                msg = handler(buf, 1, size, None)
        except _Malformed as exc:
            # Whatever went wrong past the last byte (a bad kind read from the padding, say) is truncation.
            where, reason = (exc.offset, exc.reason) if exc.offset < size else (size, "message truncated")
            raise ProtocolError(f"malformed pgoutput {_NAMES[buf[:1]]} message at offset {where} of {size} "
                                f"bytes: {reason}") from None
        self._table = following
        return msg

    def _unexpected(self, buf: bytes, size: int) -> ProtocolError:
        if size == 0:
            return ProtocolError("empty pgoutput message at offset 0")
        name = _NAMES.get(buf[:1])
        if name is None:
            return UnsupportedMessage(
                f"unsupported pgoutput message type {buf[:1]!r} at offset 0 ({size} bytes)")
        where = "inside" if self._table is _INSIDE else "outside"
        return ProtocolError(f"unexpected pgoutput {name} message at offset 0: not valid {where} a streamed "
                             "transaction (Stream Start .. Stream Stop)")
