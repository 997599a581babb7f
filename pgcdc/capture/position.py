"""Stream positions and their form in the offset store (Debezium's offset fields for PostgreSQL).

Debezium's offset value: `lsn` (last processed position), `lsn_proc` (last processed event), `lsn_commit`
(commit LSN of the transaction that event belongs to), `txId`, `ts_usec` (commit time), and `messageType`.
pgcdc stores offsets only at transaction ends, so its `lsn_proc` and `lsn_commit` describe a whole
transaction; on resume it also honours a Debezium offset stored in the middle of a transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pgcdc.capture import java_keys
from pgcdc.protocol._slots import slot_setters


@dataclass(frozen=True, slots=True)
class Position:
    """The end of a transaction whose records were all handed to the sink."""

    end_lsn: int  # Commit.end_lsn: what the slot may confirm
    commit_lsn: int
    last_lsn: int  # LSN of its last change event
    xid: int
    commit_us: int
    # Fields of an incremental snapshot under way (IncrementalProgress.to_fields), stored with the position.
    extra: tuple[tuple[str, Any], ...] = ()
    xmin: int | None = None  # the slot's catalog_xmin as source.xmin had it (xmin.fetch.interval.ms)

    def to_offset(self) -> dict[str, Any]:
        # Exactly what Debezium stores after it processed a COMMIT: every LSN is the commit's end LSN. The keys
        # in its HashMap's order (xmin, when it has one, comes second).
        offset: dict[str, Any] = {"lsn_proc": self.end_lsn}
        if self.xmin is not None:
            offset["xmin"] = self.xmin
        offset.update({
            "messageType": "COMMIT",
            "lsn_commit": self.end_lsn,
            "lsn": self.end_lsn,
            "txId": self.xid,
            "ts_usec": self.commit_us,
        })
        offset.update(self.extra)
        return offset


_P0, _P1, _P2, _P3, _P4, _P5, _P6 = slot_setters(Position)
_new = object.__new__


def committed(end_lsn: int, commit_lsn: int, last_lsn: int, xid: int, commit_us: int,
              extra: tuple[tuple[str, Any], ...], xmin: int | None) -> Position:
    """`Position(…)` with its slots filled directly (protocol/_slots.py): the same instance in about 40% of the
    frozen dataclass's time, measured. The capture makes one per transaction."""
    p: Position = _new(Position)
    _P0(p, end_lsn)
    _P1(p, commit_lsn)
    _P2(p, last_lsn)
    _P3(p, xid)
    _P4(p, commit_us)
    _P5(p, extra)
    _P6(p, xmin)
    return p


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


SNAPSHOT_PROGRESS_FIELD = "pgcdc_snapshot"


@dataclass(frozen=True, slots=True)
class SnapshotProgress:
    """An initial snapshot under way, stored so a restart continues after the last emitted row.

    The offset is the one Debezium stores while it snapshots (`snapshot_completed: false`: Debezium, given
    it, starts the snapshot over), plus one field Debezium does not read, `pgcdc_snapshot`: a JSON string
    (Connect offsets hold primitives only) with pgcdc's cursor. Tables sort as (schema, table); every table
    up to `done` is complete; `table` was emitted up to the primary key `key` (output-function text), or
    must be read again from its start when `key` is null (no primary key, or a select override).
    """

    end_lsn: int  # where streaming starts once the snapshot completes
    xid: int
    ts_us: int
    done: tuple[str, str] | None
    table: tuple[str, str] | None
    key: tuple[str, ...] | None
    rows: int  # records emitted so far, for the log
    table_rows: int = 0  # records of `table` emitted up to `key` (its notification's total_rows_scanned)

    def to_offset(self) -> dict[str, Any]:
        cursor = {"done": self.done, "table": self.table, "key": self.key, "rows": self.rows,
                  "table_rows": self.table_rows}
        return {"last_snapshot_record": False, "lsn": self.end_lsn, "txId": self.xid, "ts_usec": self.ts_us,
                "snapshot": "INITIAL", "snapshot_completed": False,
                SNAPSHOT_PROGRESS_FIELD: json.dumps(cursor, separators=(",", ":"))}

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> SnapshotProgress | None:
        """pgcdc's cursor in an unfinished snapshot's offset; None if the offset is anything else."""
        text = offset.get(SNAPSHOT_PROGRESS_FIELD)
        if offset.get("snapshot_completed") is not False or not isinstance(text, str):
            return None
        cursor = json.loads(text)

        def pair(v: Any) -> tuple[str, str] | None:
            return (str(v[0]), str(v[1])) if v else None

        key = cursor.get("key")
        return cls(int(offset.get("lsn") or 0), int(offset.get("txId") or 0), int(offset.get("ts_usec") or 0),
                   pair(cursor.get("done")), pair(cursor.get("table")),
                   tuple(str(k) for k in key) if key is not None else None, int(cursor.get("rows") or 0),
                   int(cursor.get("table_rows") or 0))


def snapshot_in_progress(offset: dict[str, Any] | None) -> bool:
    """Debezium's own test: an offset written before the snapshot finished (it starts over on it)."""
    return offset is not None and offset.get("snapshot_completed") is False


INCREMENTAL_PROGRESS_FIELD = "pgcdc_incremental"


@dataclass(frozen=True, slots=True)
class IncrementalProgress:
    """An incremental snapshot under way, stored in the streaming offset.

    Debezium's fields: `incremental_snapshot_correlation_id` (the signal's id), `incremental_snapshot_collections`
    (a JSON string of the tables still to read, the first one being read), `incremental_snapshot_primary_key`
    and `incremental_snapshot_maximum_key` (Java-serialized key arrays, hex: capture/java_keys.py; a null
    array for key types not serialized there, which makes Debezium read the current table again from its
    start). pgcdc keeps its own cursor in `pgcdc_incremental`: the first table was emitted up to `key`, read
    up to `max` (output-function text), and whether the snapshot is paused; without it (Debezium's offset)
    the keys come from Debezium's fields.
    """

    correlation_id: str | None
    collections: tuple[tuple[str, str | None, str | None], ...]  # (schema.table, additional condition, surrogate key)
    key: tuple[str, ...] | None
    max_key: tuple[str, ...] | None
    paused: bool = False
    key_types: tuple[str, ...] = ()  # format_type() of the key columns, for Debezium's serialized keys

    def to_fields(self) -> tuple[tuple[str, Any], ...]:
        collections = [{"incremental_snapshot_collections_id": c,
                        "incremental_snapshot_collections_additional_condition": cond,
                        "incremental_snapshot_collections_surrogate_key": sk} for c, cond, sk in self.collections]
        cursor = {"key": self.key, "max": self.max_key, "paused": self.paused}
        fields: list[tuple[str, Any]] = []
        if self.correlation_id is not None:
            fields.append(("incremental_snapshot_correlation_id", self.correlation_id))
        fields += [
            ("incremental_snapshot_maximum_key", java_keys.encode(self.max_key, self.key_types)),
            ("incremental_snapshot_collections", json.dumps(collections, separators=(",", ":"))),
            ("incremental_snapshot_primary_key", java_keys.encode(self.key, self.key_types)),
            (INCREMENTAL_PROGRESS_FIELD, json.dumps(cursor, separators=(",", ":"))),
        ]
        return tuple(fields)

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> IncrementalProgress | None:
        """The incremental snapshot an offset says is under way (Debezium's or pgcdc's); None if none."""
        text = offset.get("incremental_snapshot_collections")
        if not isinstance(text, str) or not text:
            return None
        collections = tuple((str(c["incremental_snapshot_collections_id"]),
                             c.get("incremental_snapshot_collections_additional_condition"),
                             c.get("incremental_snapshot_collections_surrogate_key")) for c in json.loads(text))
        if not collections:
            return None
        cursor_text = offset.get(INCREMENTAL_PROGRESS_FIELD)
        cursor = json.loads(cursor_text) if isinstance(cursor_text, str) else {}

        def key(v: Any) -> tuple[str, ...] | None:
            return tuple(str(x) for x in v) if v is not None else None

        if not isinstance(cursor_text, str):  # an offset Debezium wrote: its serialized keys, where readable
            return cls(offset.get("incremental_snapshot_correlation_id"), collections,
                       java_keys.decode(offset.get("incremental_snapshot_primary_key")),
                       java_keys.decode(offset.get("incremental_snapshot_maximum_key")))
        return cls(offset.get("incremental_snapshot_correlation_id"), collections, key(cursor.get("key")),
                   key(cursor.get("max")), bool(cursor.get("paused")))
