"""Offsets carry over: Debezium's KafkaOffsetBackingStore -> pgcdc, and pgcdc -> Debezium, on one slot.

A user switching either way keeps the slot and the offset topic; the second connector must emit exactly
the changes committed after the first one stopped: none lost, none repeated.
"""

from __future__ import annotations

from pathlib import Path

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.conformance.oracle import read_records, start_oracle, stop_oracle
from tests.harness import Running, make_config, payload, read_topic, wait_for, wait_records

NAME = "inventory-connector"


def shared(pg: PostgresCluster, dbname: str, broker: KafkaBroker) -> dict[str, str]:
    return {**pg.connection_properties(dbname), "name": NAME, "topic.prefix": "dbserver1",
            "snapshot.mode": "no_data", "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}",
            "bootstrap.servers": broker.bootstrap_servers, "offset.storage.topic": f"offsets_{dbname}",
            "offset.storage": "kafka", "offset.storage.partitions": "1", "offset.storage.replication.factor": "1"}


def debezium_config(props: dict[str, str]) -> dict:
    return {"name": NAME, "config": {
        **props, "offset.storage": "org.apache.kafka.connect.storage.KafkaOffsetBackingStore",
        "offset.flush.interval.ms": "100"}}


def created_ids(records: list[dict]) -> list[int]:
    return [payload(r)["after"]["id"] for r in records if r["value"] is not None and payload(r)["op"] == "c"]


def debezium_run(pg: PostgresCluster, dbname: str, props: dict[str, str], out: Path, writes: list[str],
                 expect: int) -> list[dict]:
    return debezium_run_config(pg, dbname, debezium_config(props), props["slot.name"], out, writes, expect)


def debezium_run_config(pg: PostgresCluster, dbname: str, config: dict, slot: str, out: Path, writes: list[str],
                        expect: int) -> list[dict]:
    proc = start_oracle(config, out)
    try:
        wait_for(lambda: pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = "
                                    f"'{slot}'") == [(True,)] or proc.poll() is not None,
                 120, "Debezium to stream")
        assert proc.poll() is None, out.with_suffix(".jvm.log").read_text()[-3000:]
        for sql in writes:
            pg.execute(sql, dbname)
        wait_for(lambda: len(read_records(out)) >= expect, 60, f"{expect} Debezium records")
    finally:
        stop_oracle(proc, out)
    return read_records(out)


def test_debezium_offsets_resume_in_pgcdc(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                          tmp_path: Path) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    props = shared(pg, dbname, broker)
    first = debezium_run(pg, dbname, props, tmp_path / "dbz.jsonl",
                         [f"INSERT INTO t VALUES ({i})" for i in range(1, 6)], 5)
    assert created_ids(first) == [1, 2, 3, 4, 5]
    stored = read_topic(broker.bootstrap_servers, props["offset.storage.topic"])
    assert stored and stored[-1]["key"] == [NAME, {"server": "dbserver1"}]
    pg.execute("INSERT INTO t SELECT generate_series(6, 10)", dbname)  # while nothing runs
    sink = MemorySink()
    with Running(make_config(pg, dbname, broker.bootstrap_servers, **props), sink=sink):
        wait_records(sink, 5)
        pg.execute("INSERT INTO t VALUES (11)", dbname)
        wait_records(sink, 6)
    assert created_ids(sink.records) == [6, 7, 8, 9, 10, 11]


def test_pgcdc_offsets_resume_in_debezium(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                          tmp_path: Path) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    props = shared(pg, dbname, broker)
    sink = MemorySink()
    with Running(make_config(pg, dbname, broker.bootstrap_servers, **props), sink=sink):
        pg.execute("INSERT INTO t SELECT generate_series(1, 3)", dbname)
        pg.execute("INSERT INTO t SELECT generate_series(4, 5)", dbname)
        wait_records(sink, 5)
    assert created_ids(sink.records) == [1, 2, 3, 4, 5]
    pg.execute("INSERT INTO t SELECT generate_series(6, 10)", dbname)
    second = debezium_run(pg, dbname, props, tmp_path / "dbz.jsonl", ["INSERT INTO t VALUES (11)"], 6)
    assert created_ids(second) == [6, 7, 8, 9, 10, 11]


def test_offset_file_carries_over_both_ways(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                            tmp_path: Path) -> None:
    """The same offset file: Debezium's FileOffsetBackingStore, then pgcdc, then Debezium again."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    offsets = tmp_path / "offsets.dat"
    props = {**shared(pg, dbname, broker), "offset.storage.file.filename": str(offsets)}
    dbz = {"name": NAME, "config": {
        **props, "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.flush.interval.ms": "100"}}
    first = debezium_run_config(pg, dbname, dbz, props["slot.name"], tmp_path / "dbz1.jsonl",
                                ["INSERT INTO t SELECT generate_series(1, 3)"], 3)
    assert created_ids(first) == [1, 2, 3]
    pg.execute("INSERT INTO t VALUES (4)", dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{**props, "offset.storage": "file", "sink.type": "file"}), sink=sink):
        wait_records(sink, 1)
        pg.execute("INSERT INTO t VALUES (5)", dbname)
        wait_records(sink, 2)
    assert created_ids(sink.records) == [4, 5]
    pg.execute("INSERT INTO t VALUES (6)", dbname)
    third = debezium_run_config(pg, dbname, dbz, props["slot.name"], tmp_path / "dbz2.jsonl",
                                ["INSERT INTO t VALUES (7)"], 2)
    assert created_ids(third) == [6, 7]
