"""Resume rules for offsets written by pgcdc (transaction ends), by Debezium (any event) and after a snapshot."""

from __future__ import annotations

import pytest

from pgcdc.capture.position import Position, ResumePoint, SnapshotDone


def test_own_offset_round_trip_skips_the_whole_transaction() -> None:
    pos = Position(end_lsn=500, commit_lsn=480, last_lsn=470, xid=9, commit_us=1)
    rp = ResumePoint.from_offset(pos.to_offset())
    assert rp.start_lsn == 500
    assert rp.skips_transaction(480) and rp.skips_transaction(100)
    assert not rp.skips_transaction(481)


def test_debezium_mid_transaction_offset_skips_processed_events_only() -> None:
    rp = ResumePoint.from_offset({"lsn_proc": 300, "messageType": "INSERT", "lsn_commit": 480, "lsn": 300,
                                  "txId": 9, "ts_usec": 1})
    assert not rp.skips_transaction(480) and rp.skips_transaction(479)
    assert rp.skips_event(480, 300) and not rp.skips_event(480, 301)
    assert not rp.skips_event(600, 10)
    assert rp.start_lsn == 300


def test_snapshot_offset_streams_everything_from_the_consistent_point() -> None:
    rp = ResumePoint.from_offset(SnapshotDone(end_lsn=1000, xid=5, ts_us=2).to_offset())
    assert rp.start_lsn == 1000
    assert not rp.skips_transaction(1000) and rp.skips_transaction(999)
    assert not rp.skips_event(1000, 1000)


@pytest.mark.parametrize("offset", [
    {"last_snapshot_record": True, "lsn": 23, "txId": 1, "ts_usec": 1, "snapshot": "INITIAL",
     "snapshot_completed": True},
    {"transaction_id": "1152", "lsn_proc": 23, "messageType": "COMMIT", "lsn_commit": 23, "lsn": 23, "txId": 1152,
     "ts_usec": 1},
])
def test_debezium_offsets_parse(offset: dict) -> None:
    assert ResumePoint.from_offset(offset).start_lsn == 23
