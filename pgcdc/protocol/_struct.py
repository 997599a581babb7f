"""Precompiled structs for the replication wire formats (the pattern of psycopg's ``_struct.py``).

Everything on the wire is network byte order (PG docs, "Message Data Types"). LSNs are unsigned 64-bit,
timestamps signed 64-bit microseconds since 2000-01-01, xids and OIDs unsigned 32-bit, type modifiers
signed 32-bit. Names say the layout so call sites read like the docs' field lists.
"""

from __future__ import annotations

import struct

# -- scalars ---------------------------------------------------------------------------------------------
UINT8 = struct.Struct("!B")
UINT16 = struct.Struct("!H")
UINT32 = struct.Struct("!I")
INT64 = struct.Struct("!q")
UINT64 = struct.Struct("!Q")

unpack_uint16 = UINT16.unpack_from
unpack_uint32 = UINT32.unpack_from

# -- streaming replication COPY frames (PG docs, "Streaming Replication Protocol") -----------------------
XLOG_DATA = struct.Struct("!QQq")  # 'w': WAL start, WAL end, server clock
KEEPALIVE = struct.Struct("!QqB")  # 'k': WAL end, server clock, reply requested
STANDBY_STATUS = struct.Struct("!cQQQqB")  # 'r': written, flushed, applied, client clock, reply requested

# -- pgoutput messages (PG docs, "Logical Replication Message Formats") ------------------------------------
BEGIN = struct.Struct("!QqI")  # final LSN, commit ts, xid
COMMIT = struct.Struct("!BQQq")  # flags, commit LSN, end LSN, commit ts (also Stream Commit after its xid)
ORIGIN_LSN = UINT64
RELATION_HEAD = struct.Struct("!I")  # relation OID; namespace and name follow as C strings
COLUMN_TAIL = struct.Struct("!Ii")  # type OID, type modifier (after flags and the name)
TRUNCATE_HEAD = struct.Struct("!IB")  # number of relations, options
MESSAGE_HEAD = struct.Struct("!BQ")  # flags, LSN (prefix and content follow)
STREAM_START = struct.Struct("!IB")  # xid, first-segment flag
STREAM_COMMIT = struct.Struct("!IBQQq")  # xid, flags, commit LSN, end LSN, commit ts
STREAM_ABORT = struct.Struct("!II")  # xid, subxid
STREAM_ABORT_V4 = struct.Struct("!IIQq")  # ... plus abort LSN and abort ts under parallel streaming (v4)
BEGIN_PREPARE = struct.Struct("!QQqI")  # prepare LSN, end LSN, prepare ts, xid (gid follows)
PREPARE = struct.Struct("!BQQqI")  # flags, LSN, end LSN, ts, xid: Prepare, Commit Prepared, Stream Prepare
ROLLBACK_PREPARED = struct.Struct("!BQQqqI")  # flags, prepare end, rollback end, prepare ts, rollback ts, xid

# Insert/Update/Delete: relation OID, then the tuple kind byte ('N', 'K' or 'O') and the column count.
CHANGE_HEAD = struct.Struct("!IcH")
XID_CHANGE_HEAD = struct.Struct("!IIcH")  # the same, preceded by the xid inside a streamed transaction
TUPLE_HEAD = struct.Struct("!cH")  # a second tuple in an Update: 'N' and its column count
# TupleData column: kind byte and, for 't'/'b', the value length. Read together in one call on the hot path
# (the decoder pads its buffer so this never over-reads on a trailing 'n'/'u' column).
KIND_LEN = struct.Struct("!BI")
