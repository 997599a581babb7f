"""Stream positions and their form in the offset store (Debezium's offset fields for PostgreSQL).

Debezium's offset value: `lsn` (last processed position), `lsn_proc` (last processed event), `lsn_commit`
(commit LSN of the transaction that event belongs to), `txId`, `ts_usec` (commit time), and `messageType`.
pgcdc stores offsets only at transaction ends, so its `lsn_proc` and `lsn_commit` describe a whole
transaction; on resume it also honours a Debezium offset stored in the middle of a transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Position:
    """The end of a transaction whose records were all handed to the sink."""

    end_lsn: int  # Commit.end_lsn: what the slot may confirm
    commit_lsn: int
    last_lsn: int  # LSN of its last change event
    xid: int
    commit_us: int

    def to_offset(self) -> dict[str, Any]:
        return {
            "lsn_proc": self.last_lsn,
            "messageType": "COMMIT",
            "lsn_commit": self.commit_lsn,
            "lsn": self.end_lsn,
            "txId": self.xid,
            "ts_usec": self.commit_us,
        }


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """What a stored offset says was already emitted."""

    lsn: int
    lsn_commit: int
    lsn_proc: int
    complete: bool  # the transaction at lsn_commit was fully emitted

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> ResumePoint:
        lsn = int(offset.get("lsn") or 0)
        if offset.get("lsn_commit") is None:
            # After a snapshot: stream everything that commits at or after the consistent point.
            return cls(lsn=lsn, lsn_commit=lsn, lsn_proc=0, complete=False)
        commit = int(offset["lsn_commit"])
        proc = int(offset.get("lsn_proc") or 0)
        return cls(lsn=lsn, lsn_commit=commit, lsn_proc=proc, complete=offset.get("messageType") == "COMMIT")

    @property
    def start_lsn(self) -> int:
        """Where to ask the server to start: it skips transactions that committed before this point."""
        return self.lsn if self.complete else min(self.lsn, self.lsn_commit)

    def skips_transaction(self, final_lsn: int) -> bool:
        return final_lsn < self.lsn_commit or (final_lsn == self.lsn_commit and self.complete)

    def skips_event(self, final_lsn: int, lsn: int) -> bool:
        return final_lsn == self.lsn_commit and lsn <= self.lsn_proc


@dataclass(frozen=True, slots=True)
class SnapshotDone:
    """The position after a completed initial snapshot: stream from the slot's consistent point."""

    end_lsn: int  # the consistent point
    xid: int
    ts_us: int

    def to_offset(self) -> dict[str, Any]:
        return {"last_snapshot_record": True, "lsn": self.end_lsn, "txId": self.xid, "ts_usec": self.ts_us,
                "snapshot": "INITIAL", "snapshot_completed": True}
