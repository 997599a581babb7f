"""snapshot.tables.order.by.row.count on a real PostgreSQL: a chunked snapshot reads its tables by exact row
count (ties in name order), a one-thread snapshot keeps name order, and an interrupted sorted snapshot starts
again from its first table with every row. Compared with Debezium in
tests/conformance/test_snapshot_row_count_order_vs_debezium.py."""

from __future__ import annotations

import logging
import threading

import pytest

from pgcdc.capture.position import SnapshotProgress
from pgcdc.local import PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for

SETUP = ("CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a SELECT generate_series(1, 3);"
         "CREATE TABLE b (id int PRIMARY KEY); INSERT INTO b SELECT generate_series(1, 30);"
         "CREATE TABLE c (id int PRIMARY KEY); INSERT INTO c SELECT generate_series(1, 3);"
         "CREATE TABLE d (id int PRIMARY KEY); INSERT INTO d SELECT generate_series(1, 10)")


def tables_in_order(sink: MemorySink) -> list[str]:
    out: list[str] = []
    for r in sink.records:
        if r["value"] and payload(r)["op"] == "r" and payload(r)["source"]["table"] not in out:
            out.append(payload(r)["source"]["table"])
    return out


@pytest.mark.parametrize(("props", "order"), [
    ({"snapshot.max.threads": "2", "snapshot.tables.order.by.row.count": "descending"}, ["b", "d", "a", "c"]),
    ({"snapshot.max.threads": "2", "snapshot.tables.order.by.row.count": "ascending"}, ["a", "c", "d", "b"]),
    ({"snapshot.max.threads.multiplier": "3", "snapshot.tables.order.by.row.count": "descending"},
     ["b", "d", "a", "c"]),
    ({"snapshot.max.threads": "2", "snapshot.tables.order.by.row.count": "descending",
      "legacy.snapshot.max.threads": "true"}, ["a", "b", "c", "d"]),
    ({"snapshot.tables.order.by.row.count": "descending"}, ["a", "b", "c", "d"]),
])
def test_tables_read_in_row_count_order_when_chunked(pg: PostgresCluster, dbname: str, props: dict[str, str],
                                                     order: list[str], caplog: pytest.LogCaptureFixture) -> None:
    pg.execute(SETUP, dbname)
    sink = MemorySink()
    with caplog.at_level(logging.INFO, logger="pgcdc"), \
            Running(make_config(pg, dbname, **{"snapshot.mode": "initial", **props}), sink=sink):
        pass
    assert tables_in_order(sink) == order
    marks = [(payload(r)["source"]["table"], payload(r)["source"]["snapshot"]) for r in sink.records
             if payload(r)["source"]["snapshot"] in ("first", "last")]
    assert marks == [(order[0], "first"), (order[-1], "last")]
    assert f"Sort tables by row count '{props['snapshot.tables.order.by.row.count'].upper()}'" in caplog.text


def test_an_interrupted_sorted_snapshot_starts_again(pg: PostgresCluster, dbname: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    pg.execute("CREATE TABLE big (id int PRIMARY KEY); INSERT INTO big SELECT generate_series(1, 60000);"
               "CREATE TABLE small (id int PRIMARY KEY); INSERT INTO small SELECT generate_series(1, 5)", dbname)
    offsets = MemoryOffsetStore()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial", "snapshot.max.threads": "2",
                                        "snapshot.tables.order.by.row.count": "descending",
                                        "pgcdc.snapshot.chunk.rows": "500", "snapshot.fetch.size": "200",
                                        "offset.flush.interval.ms": "50"})
    first = Connector(config, sink=MemorySink(), offsets=offsets)
    t = threading.Thread(target=first.run)
    t.start()
    wait_for(lambda: first.snapshot_metrics.rows > 15_000, 60, "part of the snapshot")
    first.stop()
    t.join(60)
    stored = offsets.load()
    progress = SnapshotProgress.from_offset(stored) if stored else None
    assert progress is not None and progress.table == ("public", "big") and progress.key is not None
    sink = MemorySink()
    with caplog.at_level(logging.INFO, logger="pgcdc"), Running(config, sink=sink, offsets=offsets):
        pass
    assert "starts again from its first table" in caplog.text
    ids = [payload(r)["after"]["id"] for r in sink.records if r["value"] and payload(r)["source"]["table"] == "big"]
    assert sorted(ids) == list(range(1, 60001))
    assert tables_in_order(sink) == ["big", "small"]
    assert payload(sink.records[0])["source"]["snapshot"] == "first"
