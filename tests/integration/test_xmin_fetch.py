"""xmin.fetch.interval.ms on a real PostgreSQL: streamed events carry the slot's catalog_xmin in source.xmin, in
JSON and in Avro written from its parts (converters/avro_events.py caches the source fields per transaction),
snapshot records carry none, and without the property none carries it. Compared with Debezium in
tests/conformance/test_autoset_and_xmin_vs_debezium.py."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pytest

from pgcdc.converters.avro_schema import writer_schema
from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_events import parts_taken
from tests.integration.test_avro_events import avro_connector

WORKLOAD = ["INSERT INTO t VALUES (2, 'b')", "BEGIN; UPDATE t SET v = 'c' WHERE id = 1; DELETE FROM t WHERE id = 2; "
            "COMMIT", "INSERT INTO t SELECT g, 'x' FROM generate_series(10, 30) g"]
STREAMED = 1 + 2 + 21


def catalog_xmin(pg: PostgresCluster, slot: str) -> int:
    return int(pg.execute(f"SELECT catalog_xmin::text FROM pg_replication_slots WHERE slot_name = '{slot}'")[0][0])


def sources(records: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(r["value"]["payload"]["op"], r["value"]["payload"]["source"]["xmin"]) for r in records if r["value"]]


def test_json_events_carry_the_slots_catalog_xmin(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')", dbname)
    sink = MemorySink()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial", "xmin.fetch.interval.ms": "50"})
    with Running(config, sink=sink):
        before = catalog_xmin(pg, f"slot_{dbname}")
        for stmt in WORKLOAD:
            pg.execute(stmt, dbname)
        wait_for(lambda: len(sources(sink.records)) >= 1 + STREAMED, 30, "the streamed changes")
        after = catalog_xmin(pg, f"slot_{dbname}")
    seen = sources(sink.records)
    assert seen[0] == ("r", None)
    streamed = [x for _, x in seen[1:]]
    assert len(streamed) == STREAMED and all(isinstance(x, int) and before <= x <= after for x in streamed)


def test_no_xmin_without_the_property(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')", dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        for stmt in WORKLOAD:
            pg.execute(stmt, dbname)
        wait_for(lambda: len(sources(sink.records)) >= STREAMED, 30, "the streamed changes")
    assert {x for _, x in sources(sink.records)} == {None}


def test_avro_parts_carry_the_slots_catalog_xmin(pg: PostgresCluster, dbname: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    taken = parts_taken(monkeypatch)
    pg.execute(f"CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a');"
               f"CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    name = f"avro_{dbname}"
    config, value_conv, sink, keep = avro_connector(pg, dbname, name, {"xmin.fetch.interval.ms": "50"})
    with Running(config, sink=sink):
        before = catalog_xmin(pg, name)
        for stmt in WORKLOAD:
            pg.execute(stmt, dbname)
        wait_for(lambda: sum(v is not None for _, _, v in keep.records) >= STREAMED, 30, "the streamed changes")
        after = catalog_xmin(pg, name)
    xmins = []
    for _, _, value in keep.records:
        if value is None:
            continue
        text = value_conv.client.get_schema(int.from_bytes(value[1:5], "big")).schema_str
        datum = fastavro.schemaless_reader(io.BytesIO(value[5:]), fastavro.parse_schema(writer_schema(text)))
        xmins.append(datum["source"]["xmin"])
    assert len(xmins) == STREAMED and all(isinstance(x, int) and before <= x <= after for x in xmins), \
        (before, xmins, after)
    assert len(taken) == STREAMED  # every change went the parts path
