"""pgoutput decoder, protocol versions 1-4: one message's bytes in, one frozen message out. Sans-IO.

Spec: PG docs, "Logical Replication Message Formats" (each XLogData payload holds exactly one message) and
"Logical Streaming Replication Protocol" (which fields each protocol version adds).

The only state is whether we are between StreamStart and StreamStop: there, Relation, Type, Insert, Update,
Delete, Truncate and Message carry the xid of the streamed transaction right after the message byte
(protocol version 2+). Nothing else needs the negotiated version: the v4 fields of Stream Abort are told
apart by the message length.

Malformed input raises ProtocolError naming the message and the offset; an unknown message byte raises
UnsupportedMessage. Low-level errors (IndexError, struct.error, UnicodeDecodeError) never escape.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from itertools import repeat

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
_T, _N, _U, _B = b"tnub"  # TupleData column kinds as ints (PG docs, "TupleData")

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
def _unpack(st: struct.Struct, buf: bytes, pos: int, size: int) -> tuple:
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


def _gid_message(cls: type, st: struct.Struct) -> _Handler:
    """Two-phase messages: fixed fields, then the GID string, then nothing (PG docs, protocol v3)."""

    def decode(buf: bytes, pos: int, size: int, xid: int | None) -> Message:
        fields = _unpack(st, buf, pos, size)
        gid, end = _cstring(buf, pos + st.size, size)
        if end != size:
            raise _end(end, size)
        return cls(*fields, gid)

    return decode


def _fixed(cls: type, st: struct.Struct) -> _Handler:
    """Messages that are a fixed struct and nothing else: Begin, Commit, Stream Commit."""

    def decode(buf: bytes, pos: int, size: int, xid: int | None) -> Message:
        if pos + st.size != size:
            raise _end(pos + st.size, size)
        return cls(*st.unpack_from(buf, pos))

    return decode


# -- hot path: TupleData -----------------------------------------------------------------------------------
# One struct call per column, values sliced from a latin-1 view of the message: when that view is ASCII,
# each char is one byte and the slice *is* the UTF-8 decoding, saving a bytes slice and a decode call per
# column. The per-column branch on the kind is kept (a table call per value would cost more than it saves).
def _values_ascii(buf: bytes, text: str, pos: int, n: int) -> tuple[tuple[Value, ...], int]:
    kind_len = s.KIND_LEN.unpack_from
    out: list[Value] = []
    append = out.append
    try:
        for _ in repeat(None, n):
            kind, ln = kind_len(buf, pos)
            if kind == _T:
                pos += ln + 5
                append(text[pos - ln:pos])
            elif kind == _N:
                append(None)
                pos += 1
            elif kind == _U:
                append(UNCHANGED_TOAST)
                pos += 1
            elif kind == _B:
                pos += ln + 5
                append(buf[pos - ln:pos])
            else:
                raise _Malformed(pos, f"unknown column kind {kind:#04x}")
    except struct.error:  # pos ran past the padding: a length pointed beyond the message
        raise _Malformed(pos, "tuple data truncated") from None
    return tuple(out), pos


def _values_utf8(buf: bytes, text: str, pos: int, n: int) -> tuple[tuple[Value, ...], int]:
    """The same for messages with non-ASCII bytes: those columns get a real UTF-8 decode."""
    kind_len = s.KIND_LEN.unpack_from
    out: list[Value] = []
    append = out.append
    try:
        for _ in repeat(None, n):
            kind, ln = kind_len(buf, pos)
            if kind == _T:
                pos += ln + 5
                v = text[pos - ln:pos]
                append(v if v.isascii() else buf[pos - ln:pos].decode())
            elif kind == _N:
                append(None)
                pos += 1
            elif kind == _U:
                append(UNCHANGED_TOAST)
                pos += 1
            elif kind == _B:
                pos += ln + 5
                append(buf[pos - ln:pos])
            else:
                raise _Malformed(pos, f"unknown column kind {kind:#04x}")
    except struct.error:
        raise _Malformed(pos, "tuple data truncated") from None
    except UnicodeDecodeError as exc:
        raise _Malformed(pos - ln + exc.start, "column value is not valid UTF-8") from None
    return tuple(out), pos


_ValuesFn = Callable[[bytes, str, int, int], "tuple[tuple[Value, ...], int]"]
_VALUES: dict[bool, _ValuesFn] = {True: _values_ascii, False: _values_utf8}


def _insert(buf: bytes, pos: int, size: int, xid: int | None) -> m.Insert:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    if kind != b"N":
        raise _Malformed(pos + 4, f"expected tuple type 'N', got {kind!r}")
    text = buf.decode("latin-1")
    # Only the tuple part must be ASCII: relation OIDs and xids in the header often are not.
    new, end = _VALUES[text[pos + 7:].isascii()](buf, text, pos + 7, n)
    if end != size:
        raise _end(end, size)
    return m.Insert(xid, oid, new)


def _update(buf: bytes, pos: int, size: int, xid: int | None) -> m.Update:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    text = buf.decode("latin-1")
    values = _VALUES[text[pos + 7:].isascii()]
    old = old_kind = None
    pos += 7
    if kind != b"N":
        # 'K' (replica identity key changed) or 'O' (REPLICA IDENTITY FULL) old tuple comes first.
        old_kind = _OLD_KINDS.get(kind)
        if old_kind is None:
            raise _Malformed(pos - 3, f"expected tuple type 'K', 'O' or 'N', got {kind!r}")
        old, pos = values(buf, text, pos, n)
        if pos + 3 > size:
            raise _end(pos + 3, size)
        kind, n = s.TUPLE_HEAD.unpack_from(buf, pos)
        if kind != b"N":
            raise _Malformed(pos, f"expected tuple type 'N', got {kind!r}")
        pos += 3
    new, end = values(buf, text, pos, n)
    if end != size:
        raise _end(end, size)
    return m.Update(xid, oid, old, old_kind, new)


def _delete(buf: bytes, pos: int, size: int, xid: int | None) -> m.Delete:
    if pos + 7 > size:
        raise _end(pos + 7, size)
    oid, kind, n = s.CHANGE_HEAD.unpack_from(buf, pos)
    old_kind = _OLD_KINDS.get(kind)
    if old_kind is None:
        raise _Malformed(pos + 4, f"expected tuple type 'K' or 'O', got {kind!r}")
    text = buf.decode("latin-1")
    old, end = _VALUES[text[pos + 7:].isascii()](buf, text, pos + 7, n)
    if end != size:
        raise _end(end, size)
    return m.Delete(xid, oid, old, old_kind)


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
    """Decodes one pgoutput message per call. Keep one per replication connection."""

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
            msg = handler(buf, 5, size, s.unpack_uint32(buf, 1)[0]) if has_xid else handler(buf, 1, size, None)
        except _Malformed as exc:
            raise ProtocolError(f"malformed pgoutput {_NAMES[buf[:1]]} message at offset "
                                f"{min(exc.offset, size)} of {size} bytes: {exc.reason}") from None
        self._table = following
        return msg

    def _unexpected(self, buf: bytes, size: int) -> ProtocolError:
        if size == 0:
            return ProtocolError("empty pgoutput message at offset 0")
        name = _NAMES.get(buf[:1])
        if name is None:
            return UnsupportedMessage(f"unsupported pgoutput message type {buf[:1]!r} at offset 0 ({size} bytes)")
        where = "inside" if self._table is _INSIDE else "outside"
        return ProtocolError(f"unexpected pgoutput {name} message at offset 0: not valid {where} a streamed "
                             "transaction (Stream Start .. Stream Stop)")
