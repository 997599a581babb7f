"""Initial snapshots of each snapshot.mode and snapshot.* property, through Debezium 3.x and pgcdc: the
same `op: r` records, table order and `source.snapshot` markers (first, first_in_data_collection, true,
last_in_data_collection, last) included. pgcdc reads in small primary-key chunks with several readers here,
so chunking and parallel reading are compared too.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.file import FileSink
from pgcdc.sink.memory import MemorySink
from tests.conformance.compare import assert_same, load
from tests.conformance.oracle import run_oracle
from tests.conformance import test_debezium_streaming as streaming
from tests.conformance.test_debezium_streaming import run_both
from tests.conformance.test_offsets_interop import debezium_run_config
from tests.harness import Running, make_config, wait_for, wait_records


# Empty first and last tables, upper case and other schemas, no primary key, a composite key, several chunks.
SETUP = (
    'CREATE TABLE "Upper" (id int PRIMARY KEY, v text); CREATE TABLE a_empty (id int PRIMARY KEY);'
    "CREATE TABLE b (id int PRIMARY KEY, v text); CREATE TABLE nopk (x int, y text);"
    "CREATE TABLE comp (k1 text, k2 int, v numeric(6,2), PRIMARY KEY (k1, k2));"
    "CREATE TABLE zz_empty (id int PRIMARY KEY); CREATE SCHEMA other; CREATE TABLE other.t (id bigint PRIMARY KEY);"
    "CREATE SCHEMA \"Aschema\"; CREATE TABLE \"Aschema\".e (id int PRIMARY KEY);"
    "INSERT INTO \"Upper\" VALUES (1, 'u1'), (2, 'u2');"
    "INSERT INTO b SELECT g, 'row ' || g FROM generate_series(1, 7) g;"
    "INSERT INTO nopk VALUES (1, 'one'), (2, NULL);"
    "INSERT INTO comp VALUES ('a', 1, 1.5), ('a', 2, 2.5), ('b', 1, -3), ('c', 0, 0);"
    "INSERT INTO other.t VALUES (10), (11), (12); INSERT INTO \"Aschema\".e VALUES (5)"
)
PGCDC_ONLY = {"pgcdc.snapshot.chunk.rows": "2", "snapshot.max.threads": "3"}


def snapshot_only(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both connectors in a mode that stops after the snapshot: Debezium until it goes quiet, pgcdc to its end."""
    pg.execute(setup, dbname)
    common = {"topic.prefix": "dbserver1", **props}
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **common,
                                             "slot.name": f"dbz_{dbname}", "publication.name": f"dbzpub_{dbname}"}},
               theirs_path, idle_timeout=6, timeout=120)
    config = make_config(pg, dbname, **{**common, **PGCDC_ONLY, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                        "publication.name": f"pgcdcpub_{dbname}"})
    Connector(config, sink=FileSink(str(ours_path))).run()  # returns once the snapshot is done
    return load(ours_path), load(theirs_path)


MODES: dict[str, dict[str, str]] = {
    "initial_only": {"snapshot.mode": "initial_only"},
    "configuration_based_data_only": {
        "snapshot.mode": "configuration_based", "snapshot.mode.configuration.based.snapshot.data": "true",
        "snapshot.mode.configuration.based.start.stream": "false"},
    "include_collection_list": {"snapshot.mode": "initial_only",
                                "snapshot.include.collection.list": "public.b,other\\..*"},
    "select_statement_overrides": {
        "snapshot.mode": "initial_only", "snapshot.select.statement.overrides": "public.b,public.comp",
        "snapshot.select.statement.overrides.public.b": "SELECT * FROM public.b WHERE id > 4 ORDER BY id",
        "snapshot.select.statement.overrides.public.comp": "SELECT * FROM public.comp WHERE k1 <> 'b' ORDER BY 1, 2"},
    "fetch_size_and_threads": {"snapshot.mode": "initial_only", "snapshot.fetch.size": "3",
                               "snapshot.lock.timeout.ms": "5000"},
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_snapshot_only_modes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = snapshot_only(pg, dbname, tmp_path, SETUP, MODES[mode])
    assert_same(mode, ours, theirs, snapshot=True)


@pytest.mark.parametrize("mode", ["initial", "always", "when_needed"])
def test_snapshot_then_streaming_modes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                      mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunking and readers for pgcdc only: Debezium with snapshot.max.threads > 1 emits tables in no fixed order.
    monkeypatch.setattr(streaming, "make_config", lambda *a, **kw: make_config(*a, **{**kw, **PGCDC_ONLY}))
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"snapshot.mode": mode},
                            ["INSERT INTO b VALUES (100, 'streamed')", "DELETE FROM comp WHERE k1 = 'a'"])
    assert_same(mode, ours, theirs, snapshot=True)
    assert any(r["value"] and r["value"]["payload"]["op"] == "c" for r in theirs)


def handoff_props(pg: PostgresCluster, dbname: str, tmp_path: Path) -> dict[str, str]:
    return {**pg.connection_properties(dbname), "name": "handoff", "topic.prefix": "dbserver1",
            "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}", "snapshot.mode": "initial",
            "offset.storage.file.filename": str(tmp_path / "offsets.dat")}


def debezium_file_config(props: dict[str, str]) -> dict[str, Any]:
    return {"name": props["name"], "config": {
        **props, "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.flush.interval.ms": "100"}}


def ops(records: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(r["value"]["payload"]["op"], r["value"]["payload"]["after"]["id"]) for r in records if r["value"]]


def test_debezium_streams_on_after_a_pgcdc_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """pgcdc's completed-snapshot offset is Debezium's: Debezium takes no snapshot and streams what follows."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 5)", dbname)
    props = handoff_props(pg, dbname, tmp_path)
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{**props, **PGCDC_ONLY, "offset.storage": "file"}), sink=sink):
        wait_records(sink, 5)
    assert ops(sink.records) == [("r", i) for i in range(1, 6)]
    pg.execute("INSERT INTO t VALUES (6)", dbname)
    theirs = debezium_run_config(pg, dbname, debezium_file_config(props), props["slot.name"],
                                 tmp_path / "dbz.jsonl", ["INSERT INTO t VALUES (7)"], 2)
    assert ops(theirs) == [("c", 6), ("c", 7)]


def test_debezium_starts_over_from_a_pgcdc_snapshot_in_progress(pg: PostgresCluster, dbname: str,
                                                                 tmp_path: Path) -> None:
    """Given pgcdc's offset from the middle of a snapshot, Debezium (which ignores pgcdc's cursor field) takes
    the whole snapshot again, then streams: nothing lost."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 30000)", dbname)
    props = handoff_props(pg, dbname, tmp_path)
    connector = Connector(make_config(pg, dbname, **{
        **props, "offset.storage": "file", "pgcdc.snapshot.chunk.rows": "1000", "offset.flush.interval.ms": "20"}),
        sink=MemorySink())
    runner = threading.Thread(target=connector.run)
    runner.start()
    wait_for(lambda: connector.snapshot_metrics.rows > 5000, 60, "part of the snapshot")
    connector.stop()
    runner.join(60)
    theirs = debezium_run_config(pg, dbname, debezium_file_config(props), props["slot.name"],
                                 tmp_path / "dbz.jsonl", ["INSERT INTO t VALUES (30001)"], 30001)
    assert sorted(ops(theirs)) == sorted([("r", i) for i in range(1, 30001)] + [("c", 30001)])
