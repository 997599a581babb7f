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
        # Exactly what Debezium stores after it processed a COMMIT: every LSN is the commit's end LSN.
        return {
            "lsn_proc": self.end_lsn,
            "messageType": "COMMIT",
            "lsn_commit": self.end_lsn,
            "lsn": self.end_lsn,
            "txId": self.xid,
            "ts_usec": self.commit_us,
        }


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """What a stored offset says was already emitted.

    Debezium's `lsn_commit` is the end LSN of the last transaction it finished; `lsn_proc` the last event it
    processed. After a COMMIT all three LSNs are that commit's end. Mid-transaction (an offset Debezium stored
    per event), the first transaction committing after `lsn_commit` was emitted up to `lsn_proc`.
    """

    lsn: int
    lsn_commit: int
    lsn_proc: int
    complete: bool  # no transaction after lsn_commit was partly emitted

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> ResumePoint:
        lsn = int(offset.get("lsn") or 0)
        if offset.get("lsn_commit") is None:
            if offset.get("messageType") is not None:
                # Debezium, inside the first transaction after its snapshot: no commit seen yet.
                return cls(lsn=lsn, lsn_commit=0, lsn_proc=int(offset.get("lsn_proc") or lsn), complete=False)
            # After a snapshot: stream everything that commits after the consistent point.
            return cls(lsn=lsn, lsn_commit=lsn, lsn_proc=0, complete=True)
        commit = int(offset["lsn_commit"])
        proc = int(offset.get("lsn_proc") or lsn)
        complete = offset.get("messageType") == "COMMIT"
        return cls(lsn=lsn, lsn_commit=commit, lsn_proc=proc, complete=complete)

    @property
    def start_lsn(self) -> int:
        """Where to ask the server to start: it skips transactions that committed before this point."""
        return self.lsn_commit

    def skips_transaction(self, final_lsn: int) -> bool:
        """A transaction whose commit record lies before the stored commit end was emitted whole."""
        return final_lsn < self.lsn_commit

    def partial(self, final_lsn: int) -> bool:
        """This transaction (the first one after lsn_commit) was emitted up to lsn_proc."""
        return not self.complete and final_lsn >= self.lsn_commit


@dataclass(frozen=True, slots=True)
class SnapshotDone:
    """The position after a completed initial snapshot: stream from the slot's consistent point."""

    end_lsn: int  # the consistent point
    xid: int
    ts_us: int

    def to_offset(self) -> dict[str, Any]:
        return {"last_snapshot_record": True, "lsn": self.end_lsn, "txId": self.xid, "ts_usec": self.ts_us,
                "snapshot": "INITIAL", "snapshot_completed": True}
