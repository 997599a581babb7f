"""pgoutput messages, decoded once and never mutated (the h11 events model): frozen, slotted dataclasses, but the
ones that come with every row or transaction (Begin, Commit, Insert, Update, Delete), which are named tuples:
as immutable, and built in one call from the values decoded (`tuple.__new__`), where a frozen dataclass sets
each slot through a descriptor call (0.4-0.6 us less per one-row transaction with replication.py's XLogData,
measured). A named tuple compares equal to a tuple of the same values: compare messages of one type.

Field names and order follow PG docs, "Logical Replication Message Formats". LSNs are ints (see
``pgcdc.lsn``), timestamps the raw microseconds since 2000-01-01 that the server sends, so nothing is lost
or converted on the hot path.

``xid`` on Relation/Type/Insert/Update/Delete/Truncate/LogicalMessage is only sent inside a streamed
transaction (between StreamStart and StreamStop, protocol version 2+); it is None otherwise. It may be a
subtransaction's xid: group streamed changes by the enclosing StreamStart.xid, and drop those whose xid a
StreamAbort names as subxid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple


class _UnchangedToast:
    """The type of UNCHANGED_TOAST. One instance, compared with ``is``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"

    def __reduce__(self) -> str:  # copy and pickle (e.g. to a process pool) give back the singleton
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST: Final = _UnchangedToast()
"""Tuple value for kind 'u': a TOASTed column that the UPDATE did not touch, so the server sent no value."""

Value = str | bytes | None | _UnchangedToast
"""One column of TupleData: 'n' -> None, 'u' -> UNCHANGED_TOAST, 't' -> str (UTF-8), 'b' -> bytes."""


# -- transaction boundaries ------------------------------------------------------------------------------
class Begin(NamedTuple):
    final_lsn: int
    commit_ts: int
    xid: int


class Commit(NamedTuple):
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts: int


@dataclass(frozen=True, slots=True)
class Origin:
    commit_lsn: int
    name: str


# -- schema ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Column:
    flags: int
    name: str
    type_oid: int
    type_modifier: int

    @property
    def is_key(self) -> bool:
        """Flag 1: the column is part of the replica identity key."""
        return bool(self.flags & 1)


@dataclass(frozen=True, slots=True)
class Relation:
    xid: int | None
    oid: int
    namespace: str  # "" stands for pg_catalog (PG docs)
    name: str
    replica_identity: str  # relreplident: 'd' default, 'n' nothing, 'f' full, 'i' index
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class TypeMessage:
    xid: int | None
    oid: int
    namespace: str
    name: str


# -- data ------------------------------------------------------------------------------------------------
class Insert(NamedTuple):
    xid: int | None
    relation_oid: int
    new: tuple[Value, ...]


class Update(NamedTuple):
    xid: int | None
    relation_oid: int
    old: tuple[Value, ...] | None
    old_kind: str | None  # 'K': key columns only (others None), 'O': whole old row (REPLICA IDENTITY FULL)
    new: tuple[Value, ...]


class Delete(NamedTuple):
    xid: int | None
    relation_oid: int
    old: tuple[Value, ...]
    old_kind: str


@dataclass(frozen=True, slots=True)
class Truncate:
    xid: int | None
    options: int
    relation_oids: tuple[int, ...]

    @property
    def cascade(self) -> bool:
        return bool(self.options & 1)

    @property
    def restart_identity(self) -> bool:
        return bool(self.options & 2)


@dataclass(frozen=True, slots=True)
class LogicalMessage:
    xid: int | None
    transactional: bool
    lsn: int
    prefix: str
    content: bytes


# -- streaming of in-progress transactions (protocol version 2+) -----------------------------------------
@dataclass(frozen=True, slots=True)
class StreamStart:
    xid: int
    first_segment: bool


@dataclass(frozen=True, slots=True)
class StreamStop:
    pass


@dataclass(frozen=True, slots=True)
class StreamCommit:
    xid: int
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts: int


@dataclass(frozen=True, slots=True)
class StreamAbort:
    xid: int
    subxid: int  # equal to xid when the whole transaction aborted
    abort_lsn: int | None = None  # sent only with protocol version 4 and streaming = parallel
    abort_ts: int | None = None


# -- two-phase commit (protocol version 3+) --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BeginPrepare:
    prepare_lsn: int
    end_lsn: int
    prepare_ts: int
    xid: int
    gid: str


@dataclass(frozen=True, slots=True)
class Prepare:
    flags: int
    prepare_lsn: int
    end_lsn: int
    prepare_ts: int
    xid: int
    gid: str


@dataclass(frozen=True, slots=True)
class CommitPrepared:
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts: int
    xid: int
    gid: str


@dataclass(frozen=True, slots=True)
class RollbackPrepared:
    flags: int
    prepare_end_lsn: int
    rollback_end_lsn: int
    prepare_ts: int
    rollback_ts: int
    xid: int
    gid: str


@dataclass(frozen=True, slots=True)
class StreamPrepare:
    flags: int
    prepare_lsn: int
    end_lsn: int
    prepare_ts: int
    xid: int
    gid: str


Message = (
    Begin | Commit | Origin | Relation | TypeMessage | Insert | Update | Delete | Truncate | LogicalMessage
    | StreamStart | StreamStop | StreamCommit | StreamAbort
    | BeginPrepare | Prepare | CommitPrepared | RollbackPrepared | StreamPrepare
)
