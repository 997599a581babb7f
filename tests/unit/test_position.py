"""Resume rules for offsets written by pgcdc and by Debezium (measured formats), and after a snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from pgcdc.capture.position import Position, ResumePoint, SnapshotDone, committed


def test_own_offset_is_debeziums_commit_offset() -> None:
    pos = Position(end_lsn=500, commit_lsn=480, last_lsn=470, xid=9, commit_us=1)
    assert pos.to_offset() == {"lsn_proc": 500, "messageType": "COMMIT", "lsn_commit": 500, "lsn": 500,
                               "txId": 9, "ts_usec": 1}
    rp = ResumePoint.from_offset(pos.to_offset())
    assert rp.start_lsn == 500 and rp.complete
    assert rp.skips_transaction(480) and not rp.skips_transaction(501)
    assert not rp.partial(600)


def test_debezium_mid_transaction_offset() -> None:
    # Stored by Debezium after the DELETE at 300 of a transaction that commits at 480; the previous
    # transaction ended at 200.
    rp = ResumePoint.from_offset({"lsn_proc": 300, "messageType": "DELETE", "lsn_commit": 200, "lsn": 300,
                                  "txId": 9, "ts_usec": 1})
    assert rp.start_lsn == 200
    assert rp.skips_transaction(150) and not rp.skips_transaction(480)
    assert rp.partial(480) and rp.lsn_proc == 300


def test_debezium_offset_where_event_and_previous_commit_coincide() -> None:
    # In a quiet database the previous commit ends exactly where the next transaction's first change starts.
    rp = ResumePoint.from_offset({"lsn_proc": 26363272, "messageType": "DELETE", "lsn_commit": 26363272,
                                  "lsn": 26363272, "txId": 732, "ts_usec": 1})
    assert not rp.complete and rp.partial(26363400) and rp.lsn_proc == 26363272


def test_snapshot_offset_streams_everything_from_the_consistent_point() -> None:
    rp = ResumePoint.from_offset(SnapshotDone(end_lsn=1000, xid=5, ts_us=2).to_offset())
    assert rp.start_lsn == 1000
    assert not rp.skips_transaction(1000) and rp.skips_transaction(999)
    assert not rp.partial(1000)


def test_debezium_first_transaction_after_snapshot() -> None:
    rp = ResumePoint.from_offset({"lsn_proc": 52551360, "messageType": "INSERT", "lsn": 52551360, "txId": 800,
                                  "ts_usec": 1})
    assert rp.partial(52551500) and rp.lsn_proc == 52551360 and not rp.skips_transaction(52551500)


@pytest.mark.parametrize("offset", [
    {"last_snapshot_record": True, "lsn": 23, "txId": 1, "ts_usec": 1, "snapshot": "INITIAL",
     "snapshot_completed": True},
    {"transaction_id": "1152", "lsn_proc": 23, "messageType": "COMMIT", "lsn_commit": 23, "lsn": 23, "txId": 1152,
     "ts_usec": 1},
])
def test_debezium_offsets_parse(offset: dict) -> None:
    assert ResumePoint.from_offset(offset).start_lsn == 23


@pytest.mark.parametrize("extra, xmin", [((), None), ((("incremental_snapshot_primary_key", "x"),), 2**63 - 1)])
def test_committed_is_the_dataclass_position(extra: tuple[tuple[str, Any], ...], xmin: int | None) -> None:
    """The capture's constructor (slots filled directly) makes what the dataclass makes: equal, same hash, same
    offset, and as frozen."""
    args = (0x1_0000_0010, 0x1_0000_0008, 0x1_0000_0004, 4_294_967_295, -1)
    made, expected = committed(*args, extra, xmin), Position(*args, extra=extra, xmin=xmin)
    assert made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)
    assert made.to_offset() == expected.to_offset()
    with pytest.raises(AttributeError):
        made.xid = 1  # type: ignore[misc]
