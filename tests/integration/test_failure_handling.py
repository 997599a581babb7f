"""event.processing.failure.handling.mode in incremental and blocking snapshots (signals) on a real PostgreSQL:
with `warn`, a row whose values cannot be written is left out and the snapshot reads every other row; with `fail`
(the default) it stops the connector in one line naming the row. Streaming and the initial snapshot are compared
with Debezium in tests/conformance/test_failure_handling_vs_debezium.py."""

from __future__ import annotations

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_for
from tests.integration.test_incremental_snapshot import SIGNAL, props, signal, snapshot_ops

SETUP = ("CREATE TABLE nn (id int PRIMARY KEY, n numeric NOT NULL);"
         "INSERT INTO nn SELECT g, CASE WHEN g % 50 = 7 THEN 'NaN'::numeric ELSE g END FROM generate_series(1, 200) g;"
         + SIGNAL)
GOOD = [i for i in range(1, 201) if i % 50 != 7]


@pytest.mark.parametrize("kind", ["incremental", "blocking"])
def test_rows_debezium_cannot_write_are_left_out_with_warn(pg: PostgresCluster, dbname: str, kind: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    pg.execute(SETUP, dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname, **props(), **{"event.processing.failure.handling.mode": "warn"}),
                 sink=sink):
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.nn"], "type": kind})
        signal(pg, dbname, "log", {"message": "end"}, "end-marker")
        wait_for(lambda: any(rec["key"]["payload"] == {"id": "end-marker"} for rec in sink.records
                             if rec["topic"] == "test.public.dbz_signal"), 60, "the marker")
        wait_for(lambda: len(snapshot_ops(sink.records, "test.public.nn")) >= len(GOOD), 60, "the snapshot")
    ids = [p["after"]["id"] for p in snapshot_ops(sink.records, "test.public.nn")]
    assert sorted(ids) == GOOD
    left_out = [r.getMessage() for r in caplog.records if "event.processing.failure.handling.mode=warn" in
                r.getMessage()]
    assert len(left_out) == 4 and all("public.nn.n (numeric) value 'NaN'" in m for m in left_out)


def test_with_fail_the_incremental_snapshot_stops_naming_the_row(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(SETUP, dbname)
    sink = MemorySink()
    running = Running(make_config(pg, dbname, **props()), sink=sink)
    running.__enter__()
    signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.nn"], "type": "incremental"})
    wait_for(lambda: not running.thread.is_alive(), 60, "the connector to stop")
    with pytest.raises(Exception, match=r"cannot convert public\.nn\.n \(numeric\) value 'NaN' in the incremental "
                                        r"snapshot's chunk read at LSN [0-9A-F/]+, row \(id\)=\(7\)"):
        running.stop()
