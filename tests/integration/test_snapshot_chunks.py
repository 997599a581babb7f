"""Chunked, parallel, resumable initial snapshots and the snapshot.mode decisions, against a real PostgreSQL.

Correctness is measured from PostgreSQL itself: snapshot records and streamed changes folded into a table
state must equal the table's final rows.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from pgcdc.capture.position import SnapshotProgress
from pgcdc.local import PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, random_writes, wait_for

CHUNKED = {"pgcdc.snapshot.chunk.rows": "500", "snapshot.max.threads": "2", "snapshot.fetch.size": "200"}


def fold(records: list[dict[str, Any]], state: dict[Any, Any] | None = None) -> dict[Any, Any]:
    state = {} if state is None else state
    for r in records:
        if r["value"] is None:
            continue
        p = payload(r)
        if p["op"] in ("r", "c", "u"):
            if p["before"] is not None and p["before"]["id"] != p["after"]["id"]:
                state.pop(p["before"]["id"], None)
            state[p["after"]["id"]] = p["after"]["n"]
        elif p["op"] == "d":
            state.pop(p["before"]["id"], None)
    return state


def random_writer(pg: PostgresCluster, db: str, stop: threading.Event, seed: int) -> None:
    """Inserts, updates, deletes and primary-key changes in small transactions until told to stop."""
    random_writes(pg, db, stop, seed, tables=("c",), first_id=1_000_000, targets=20_000, statements=20, column="n")


def final_state_after_marker(pg: PostgresCluster, db: str, sink: MemorySink) -> dict[Any, Any]:
    """The table's rows once the connector has streamed everything up to a marker row (removed from both)."""
    final = dict(pg.execute("SELECT id, n FROM c", db))
    pg.execute("INSERT INTO c VALUES (-1, -1)", db)
    wait_for(lambda: any((payload(r) or {}).get("after") == {"id": -1, "n": -1} for r in sink.records
                         if r["value"]), 90, "the marker row")
    return final


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunked_parallel_snapshot_under_concurrent_writes_is_exact(pg: PostgresCluster, dbname: str,
                                                                     seed: int) -> None:
    pg.execute("CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL);"
               "INSERT INTO c SELECT g, 0 FROM generate_series(1, 20000) g", dbname)
    stop = threading.Event()
    writer = threading.Thread(target=random_writer, args=(pg, dbname, stop, seed))
    writer.start()
    sink = MemorySink()
    try:
        with Running(make_config(pg, dbname, **{"snapshot.mode": "initial", **CHUNKED}), sink=sink) as running:
            stop.set()
            writer.join()
            final = final_state_after_marker(pg, dbname, sink)
            metrics = running.connector.snapshot_metrics
    finally:
        stop.set()
        writer.join()
    reads = [payload(r) for r in sink.records if r["value"] and payload(r)["op"] == "r"]
    ids = [p["after"]["id"] for p in reads]
    assert ids == sorted(ids) and len(ids) == len(set(ids)), "snapshot rows are in key order, each once"
    assert metrics.rows == len(reads) and metrics.tables["public.c"].done
    state = fold(sink.records)
    state.pop(-1)
    assert state == final


def test_stop_mid_snapshot_resumes_after_the_last_stored_row(pg: PostgresCluster, dbname: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    pg.execute("CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL); CREATE TABLE d (id int PRIMARY KEY, n int);"
               "INSERT INTO c SELECT g, 0 FROM generate_series(1, 60000) g;"
               "INSERT INTO d SELECT g, 0 FROM generate_series(1, 5000) g", dbname)
    offsets = MemoryOffsetStore()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial", **CHUNKED, "offset.flush.interval.ms": "50"})
    stop = threading.Event()
    writer = threading.Thread(target=random_writer, args=(pg, dbname, stop, 7))
    writer.start()
    try:
        first_sink = MemorySink()
        first = Connector(config, sink=first_sink, offsets=offsets)
        t = threading.Thread(target=first.run)
        t.start()
        wait_for(lambda: first.snapshot_metrics.rows > 15_000, 60, "part of the snapshot")
        first.stop()  # what SIGTERM does
        t.join(60)
        stored = offsets.load()
        assert stored is not None
        progress = SnapshotProgress.from_offset(stored)
        assert progress is not None and progress.table == ("public", "c") and progress.key is not None
        emitted_before = {payload(r)["after"]["id"] for r in first_sink.records}
        durable = {i for i in emitted_before if i <= int(progress.key[0])}
        second_sink = MemorySink()
        with caplog.at_level(logging.INFO, logger="pgcdc"), Running(config, sink=second_sink, offsets=offsets):
            stop.set()
            writer.join()
            final = final_state_after_marker(pg, dbname, second_sink)
    finally:
        stop.set()
        writer.join()
    assert "resuming the initial snapshot" in caplog.text
    reread = [payload(r)["after"]["id"] for r in second_sink.records
              if r["value"] and payload(r)["op"] == "r" and payload(r)["source"]["table"] == "c"]
    assert not durable & set(reread), "rows stored as emitted were emitted again"
    assert not any(payload(r)["source"]["snapshot"] == "first" for r in second_sink.records if r["value"])
    c_records = [r for r in first_sink.records + second_sink.records if r["topic"].endswith(".c")]
    state = fold(c_records)
    state.pop(-1)
    assert state == final
    assert any(h.get("snapshot_completed") is True for h in offsets.history)


def snapshot_ids(sink: MemorySink) -> list[tuple[str, int]]:
    return [(payload(r)["source"]["table"], payload(r)["after"]["id"]) for r in sink.records
            if r["value"] and payload(r)["op"] == "r"]


def run_once(pg: PostgresCluster, dbname: str, offsets: MemoryOffsetStore, streams: bool, **props: str
             ) -> MemorySink:
    sink = MemorySink()
    config = make_config(pg, dbname, **props)
    if streams:
        with Running(config, sink=sink, offsets=offsets):
            pass
    else:
        Connector(config, sink=sink, offsets=offsets).run()
    return sink


def test_snapshot_modes_decide_when_to_read(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY);"
               "INSERT INTO a VALUES (1), (2); INSERT INTO b VALUES (3)", dbname)
    offsets = MemoryOffsetStore()
    # initial_only: a snapshot, then stop (run() returns).
    assert snapshot_ids(run_once(pg, dbname, offsets, False, **{"snapshot.mode": "initial_only"})) == [
        ("a", 1), ("a", 2), ("b", 3)]
    # initial, with a completed snapshot stored: none.
    assert snapshot_ids(run_once(pg, dbname, offsets, True, **{"snapshot.mode": "initial"})) == []
    # always: again, from the existing slot (a new snapshot, streaming from the stored position).
    assert snapshot_ids(run_once(pg, dbname, offsets, True, **{"snapshot.mode": "always"})) == [
        ("a", 1), ("a", 2), ("b", 3)]
    # configuration_based without snapshot.data: none; with it and include list: only b.
    assert snapshot_ids(run_once(pg, dbname, offsets, True, **{"snapshot.mode": "configuration_based",
                                                              "snapshot.mode.configuration.based.start.stream":
                                                              "true"})) == []
    assert snapshot_ids(run_once(pg, dbname, offsets, False, **{
        "snapshot.mode": "configuration_based", "snapshot.mode.configuration.based.snapshot.data": "true",
        "snapshot.include.collection.list": "public\\.b"})) == [("b", 3)]
    # when_needed: the stored position is still available: none; the slot dropped: a new snapshot.
    assert snapshot_ids(run_once(pg, dbname, offsets, True, **{"snapshot.mode": "when_needed"})) == []
    pg.execute(f"SELECT pg_drop_replication_slot('slot_{dbname}')", dbname)
    assert snapshot_ids(run_once(pg, dbname, offsets, True, **{"snapshot.mode": "when_needed"})) == [
        ("a", 1), ("a", 2), ("b", 3)]
    # no_data: never.
    assert snapshot_ids(run_once(pg, dbname, MemoryOffsetStore(), True, **{"snapshot.mode": "no_data"})) == []


def test_select_statement_override_and_progress_numbers(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE a (id int PRIMARY KEY, n int); INSERT INTO a SELECT g, g FROM generate_series(1, 50) g",
               dbname)
    sink = MemorySink()
    config = make_config(pg, dbname, **{
        "snapshot.mode": "initial_only", "snapshot.select.statement.overrides": "public.a",
        "snapshot.select.statement.overrides.public.a": "SELECT * FROM public.a WHERE n % 10 = 0 ORDER BY id;"})
    connector = Connector(config, sink=sink)
    connector.run()
    assert snapshot_ids(sink) == [("a", i) for i in range(10, 51, 10)]
    numbers = connector.snapshot_metrics.snapshot()
    assert numbers["rows"] == 5 and numbers["tables_done"] == numbers["tables_total"] == 1
    assert numbers["tables"]["public.a"]["rows"] == 5
