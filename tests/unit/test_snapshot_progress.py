"""Snapshot progress in the offsets, the marker table, snapshot.* config and the progress numbers."""

from __future__ import annotations

import json

import pytest

from pgcdc.capture.position import ResumePoint, SnapshotDone, SnapshotProgress, snapshot_in_progress
from pgcdc.capture.snapshot import marker
from pgcdc.capture.snapshot_progress import ProgressReporter, SnapshotMetrics, TableProgress
from pgcdc.config import build_config
from pgcdc.errors import ConfigError

BASE = {"topic.prefix": "p", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "bootstrap.servers": "b:9092"}


@pytest.mark.parametrize("progress", [
    SnapshotProgress(100, 7, 5, None, None, None, 0),
    SnapshotProgress(100, 7, 5, ("public", "a"), ("public", "b"), ("42", "x,y"), 1234),
    SnapshotProgress(100, 7, 5, None, ("s", "nopk"), None, 3),
])
def test_progress_round_trips_through_a_json_offset(progress: SnapshotProgress) -> None:
    offset = json.loads(json.dumps(progress.to_offset()))
    assert SnapshotProgress.from_offset(offset) == progress
    assert snapshot_in_progress(offset)
    # Only primitives (Kafka Connect's rule for offsets); Debezium's own fields as it writes them mid-snapshot.
    assert all(isinstance(v, (bool, int, str)) for v in offset.values())
    assert (offset["snapshot"], offset["snapshot_completed"], offset["last_snapshot_record"]) == (
        "INITIAL", False, False)


def test_completed_and_streaming_offsets_carry_no_progress() -> None:
    done = SnapshotDone(100, 7, 5).to_offset()
    assert SnapshotProgress.from_offset(done) is None and not snapshot_in_progress(done)
    assert "pgcdc_snapshot" not in done
    assert ResumePoint.from_offset(done).start_lsn == 100
    debezium_mid_snapshot = {"last_snapshot_record": False, "lsn": 1, "txId": 2, "ts_usec": 3,
                             "snapshot": "INITIAL", "snapshot_completed": False}
    assert snapshot_in_progress(debezium_mid_snapshot)
    assert SnapshotProgress.from_offset(debezium_mid_snapshot) is None  # Debezium's: start over


@pytest.mark.parametrize(("first_table", "first_row", "last_row", "expected"), [
    (True, True, False, "first"), (True, True, True, "first"), (False, True, True, "last_in_data_collection"),
    (True, False, False, "true"), (False, False, True, "last_in_data_collection"), (False, False, False, "true"),
])
def test_markers(first_table: bool, first_row: bool, last_row: bool, expected: str) -> None:
    assert marker(first_table, first_row, last_row) == expected


def test_snapshot_properties() -> None:
    c = build_config({**BASE, "snapshot.mode": "configuration_based",
                      "snapshot.mode.configuration.based.snapshot.data": "true",
                      "snapshot.include.collection.list": "public\\.a.*, other\\.t",
                      "snapshot.select.statement.overrides": "public.a",
                      "snapshot.select.statement.overrides.public.a": "SELECT * FROM public.a WHERE id > 3",
                      "snapshot.max.threads": "4", "snapshot.fetch.size": "500", "snapshot.lock.timeout.ms": "0"})
    assert c.snapshot_cb_data and not c.snapshot_cb_stream
    assert c.snapshots("public", "abc") and c.snapshots("other", "t") and not c.snapshots("public", "b")
    assert c.snapshot_select_statements == {"public.a": "SELECT * FROM public.a WHERE id > 3"}
    assert (c.snapshot_max_threads, c.snapshot_fetch_size, c.snapshot_lock_timeout_ms) == (4, 500, 0)
    with pytest.raises(ConfigError, match=r"snapshot.select.statement.overrides.public.b is not set"):
        build_config({**BASE, "snapshot.select.statement.overrides": "public.b"})
    with pytest.raises(ConfigError, match="snapshot.include.collection.list"):
        build_config({**BASE, "snapshot.include.collection.list": "("})


def test_metrics_numbers_and_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    metrics = SnapshotMetrics()
    metrics.tables["public.a"] = TableProgress("public.a", 1000)
    metrics.tables["public.b"] = TableProgress("public.b", 3000)
    reporter = ProgressReporter(metrics, interval_s=0, terminal=False)
    reporter.start()
    reporter.table_started("public.a")
    with caplog.at_level("INFO", logger="pgcdc.snapshot"):
        reporter.add("public.a", 400)
    assert "rows/s" in caplog.text and "ETA" in caplog.text
    reporter.add("public.a", 600)
    reporter.table_done("public.a")
    numbers = metrics.snapshot()
    assert (numbers["rows"], numbers["tables_done"], numbers["tables_total"]) == (1000, 1, 2)
    assert numbers["eta_seconds"] is not None and numbers["eta_seconds"] > 0  # 3000 rows of b left
    reporter.close()


def test_terminal_bars_render() -> None:
    metrics = SnapshotMetrics()
    metrics.tables["public.a"] = TableProgress("public.a", 10)
    reporter = ProgressReporter(metrics, terminal=True)
    reporter.start()
    reporter.table_started("public.a")
    reporter.add("public.a", 10)
    reporter.table_done("public.a")
    reporter.close()
    assert metrics.snapshot()["rows"] == 10 and metrics.finished is not None
