"""Sans-IO replication protocol: COPY frames and pgoutput (v1-4) bytes in, frozen messages out.

Nothing here opens a socket or imports a database driver; ``pgcdc.source`` feeds it bytes.
"""

from pgcdc.protocol import messages
from pgcdc.protocol.messages import (
    UNCHANGED_TOAST,
    Begin,
    BeginPrepare,
    Column,
    Commit,
    CommitPrepared,
    Delete,
    Insert,
    LogicalMessage,
    Message,
    Origin,
    Prepare,
    Relation,
    RollbackPrepared,
    StreamAbort,
    StreamCommit,
    StreamPrepare,
    StreamStart,
    StreamStop,
    Truncate,
    TypeMessage,
    Update,
    Value,
)
from pgcdc.protocol.pgoutput import PgoutputDecoder
from pgcdc.protocol.replication import PrimaryKeepalive, XLogData, parse_copy_data, standby_status_update

__all__ = [
    "UNCHANGED_TOAST", "Begin", "BeginPrepare", "Column", "Commit", "CommitPrepared", "Delete", "Insert",
    "LogicalMessage", "Message", "Origin", "PgoutputDecoder", "Prepare", "PrimaryKeepalive", "Relation",
    "RollbackPrepared", "StreamAbort", "StreamCommit", "StreamPrepare", "StreamStart", "StreamStop",
    "Truncate", "TypeMessage", "Update", "Value", "XLogData", "messages", "parse_copy_data",
    "standby_status_update",
]
