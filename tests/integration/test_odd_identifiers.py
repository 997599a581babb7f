"""Names PostgreSQL allows once quoted: a database, schema, table and columns with capitals, spaces, dots,
quotes and non-ASCII letters, and a publication named with capitals, a comma and quotes. pgcdc creates its
publication for such a table, streams from it by its exact name (pgoutput reads publication_names as a list of
identifiers: the unquoted name was refused, or folded to lower case), snapshots and streams the table (a
primary-key change included) with the names as they are in the events, the topic name made of Kafka's legal
characters as Debezium's default topic naming makes it ('_' for the others)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records

DB = 'Odd DB-é "1"'
TABLE = '"Sch.ema"."Ta""ble é"'


@pytest.mark.parametrize("threads", ["1", "2"])
def test_odd_names_snapshot_and_stream(pg: PostgresCluster, threads: str) -> None:
    quoted_db = '"' + DB.replace('"', '""') + '"'
    pg.execute(f"CREATE DATABASE {quoted_db}")
    try:
        pg.execute(f'CREATE SCHEMA "Sch.ema"; CREATE TABLE {TABLE} ("Id ""k""" int PRIMARY KEY, "Col 1" text, '
                   f'"a.b" int, "ÜNI" text); INSERT INTO {TABLE} VALUES (1, \'x\', 2, \'ü\'), (0, \'\', 0, \'\')', DB)
        sink = MemorySink()
        config = make_config(pg, DB, **{"snapshot.mode": "initial", "slot.name": "slot_odd",
                                         "snapshot.max.threads": threads, "snapshot.fetch.size": "1",
                                         "publication.name": "Pub, \"Odd\" 'q'"})
        with Running(config, sink=sink):
            wait_records(sink, 2)
            pg.execute(f"INSERT INTO {TABLE} VALUES (2, 'y', NULL, NULL); "
                       f"UPDATE {TABLE} SET \"Id \"\"k\"\"\" = 3 WHERE \"Id \"\"k\"\"\" = 2", DB)
            records = wait_records(sink, 6)
        ops: list[Any] = [payload(r)["op"] if r["value"] else None for r in records]
        assert ops == ["r", "r", "c", "d", None, "c"]
        assert {r["topic"] for r in records} == {"test.Sch.ema.Ta_ble__"}
        first = payload(records[1])  # (in key order)
        assert first["after"] == {'Id "k"': 1, "Col 1": "x", "a.b": 2, "ÜNI": "ü"}
        assert (first["source"]["db"], first["source"]["schema"], first["source"]["table"]) == (
            DB, "Sch.ema", 'Ta"ble é')
        assert payload(records[0])["after"] == {'Id "k"': 0, "Col 1": "", "a.b": 0, "ÜNI": ""}
        assert payload(records[5])["after"] == {'Id "k"': 3, "Col 1": "y", "a.b": None, "ÜNI": None}
        assert records[5]["key"]["payload"] == {'Id "k"': 3}
    finally:
        pg.execute("SELECT pg_drop_replication_slot('slot_odd') FROM pg_replication_slots "
                   "WHERE slot_name = 'slot_odd'")
        pg.execute(f"DROP DATABASE {quoted_db}")


def test_odd_names_incremental_snapshot(pg: PostgresCluster, dbname: str) -> None:
    """An incremental snapshot of such a table, asked for by a signal whose data collection is a regex of its
    `schema.table` name, as Debezium matches them."""
    pg.execute(f'CREATE SCHEMA "Sch.ema"; CREATE TABLE {TABLE} ("Id ""k""" int PRIMARY KEY, "Col 1" text); '
               f"INSERT INTO {TABLE} SELECT g, g::text FROM generate_series(1, 5) g; "
               "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
               dbname)
    sink = MemorySink()
    config = make_config(pg, dbname, **{"signal.data.collection": "public.dbz_signal",
                                        "incremental.snapshot.chunk.size": "2"})
    with Running(config, sink=sink):
        data = json.dumps({"data-collections": ['Sch\\.ema\\.Ta"ble é'], "type": "incremental"})
        pg.execute(f"INSERT INTO dbz_signal VALUES ('s1', 'execute-snapshot', '{data}')", dbname)
        wait_for(lambda: sum(r["topic"] == "test.Sch.ema.Ta_ble__" for r in sink.records) >= 5, 60,
                 "the table's five rows", lambda: [r["topic"] for r in sink.records])
    rows = [payload(r)["after"] for r in sink.records if r["topic"] == "test.Sch.ema.Ta_ble__"]
    assert sorted(rows, key=lambda r: r['Id "k"']) == [{'Id "k"': i, "Col 1": str(i)} for i in range(1, 6)]
    assert {payload(r)["op"] for r in sink.records if r["topic"] == "test.Sch.ema.Ta_ble__"} == {"r"}
