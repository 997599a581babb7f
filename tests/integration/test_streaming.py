"""Streaming against a real PostgreSQL: every op, PK changes, TOAST, replica identity, metadata, messages."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.pgtypes.numbers import decimal_bytes
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records


def ops(records: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(r["topic"], payload(r)["op"] if r["value"] else None) for r in records]


def run_sql(pg: PostgresCluster, db: str, *statements: str) -> None:
    for stmt in statements:
        pg.execute(stmt, db)


def test_insert_update_delete(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(8,2))")
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        run_sql(pg, dbname, "INSERT INTO items VALUES (1, 'apple', 1.25)",
                "UPDATE items SET price = 2.50 WHERE id = 1", "DELETE FROM items WHERE id = 1")
        records = wait_records(sink, 4)
    assert ops(records) == [("test.public.items", "c"), ("test.public.items", "u"), ("test.public.items", "d"),
                            ("test.public.items", None)]
    c, u, d, tomb = records
    assert payload(c)["before"] is None
    assert payload(c)["after"] == {"id": 1, "name": "apple", "price": decimal_bytes(125)}
    assert payload(u)["before"] is None  # REPLICA IDENTITY DEFAULT: no old row
    assert payload(u)["after"]["price"] == decimal_bytes(250)
    # Only the key is logged; Debezium fills NOT NULL columns with their fallback ("" for text).
    assert payload(d)["before"] == {"id": 1, "name": "", "price": None}
    assert payload(d)["after"] is None
    assert tomb["key"] == d["key"] == {"schema": c["key"]["schema"], "payload": {"id": 1}}
    assert tomb["value"] is None
    src = payload(c)["source"]
    assert (src["connector"], src["name"], src["db"], src["schema"], src["table"], src["snapshot"]) == (
        "postgresql", "test", dbname, "public", "items", "false")
    assert src["lsn"] < payload(u)["source"]["lsn"] < payload(d)["source"]["lsn"]
    assert list(payload(c)) == ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
    assert c["value"]["schema"]["name"] == "test.public.items.Envelope"
    assert c["key"]["schema"]["name"] == "test.public.items.Key"


def test_primary_key_change_is_delete_tombstone_create(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE k (id int PRIMARY KEY, v text)", "INSERT INTO k VALUES (1, 'x')")
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        run_sql(pg, dbname, "UPDATE k SET id = 2 WHERE id = 1")
        records = wait_records(sink, 3)
    assert ops(records) == [("test.public.k", "d"), ("test.public.k", None), ("test.public.k", "c")]
    delete, _tomb, create = records
    assert delete["key"]["payload"] == {"id": 1} and create["key"]["payload"] == {"id": 2}
    assert ["__debezium.newkey", {"schema": delete["key"]["schema"], "payload": {"id": 2}}] in delete["headers"]
    assert ["__debezium.oldkey", {"schema": delete["key"]["schema"], "payload": {"id": 1}}] in create["headers"]
    assert payload(create)["after"] == {"id": 2, "v": "x"}


@pytest.mark.parametrize("decimal_mode", ["precise", "double"])
def test_update_of_a_row_keyed_by_floats_is_an_update(pg: PostgresCluster, dbname: str, decimal_mode: str) -> None:
    # With REPLICA IDENTITY FULL the old row comes with every update; an unchanged key of doubles (float8, and
    # numeric under decimal.handling.mode=double) must not be taken for a key change.
    run_sql(pg, dbname, "CREATE TABLE fk (x float8, n numeric(6,2), v text, PRIMARY KEY (x, n))",
            "ALTER TABLE fk REPLICA IDENTITY FULL", "INSERT INTO fk VALUES (1.5, 2.25, 'a'), (-0.0, 0, 'b')")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"decimal.handling.mode": decimal_mode}), sink=sink):
        run_sql(pg, dbname, "UPDATE fk SET v = v || '!'", "UPDATE fk SET x = 3.5 WHERE v = 'a!'")
        records = wait_records(sink, 5)
    assert [op for _, op in ops(records)] == ["u", "u", "d", None, "c"]
    assert payload(records[0])["after"]["v"] == "a!" and payload(records[1])["after"]["v"] == "b!"


def test_replica_identity_full_and_toast(pg: PostgresCluster, dbname: str) -> None:
    big = "".join(chr(0x41 + (i * 7919) % 26) for i in range(20000))
    run_sql(pg, dbname,
            "CREATE TABLE full_t (id int PRIMARY KEY, v text)", "ALTER TABLE full_t REPLICA IDENTITY FULL",
            "CREATE TABLE toast_t (id int PRIMARY KEY, counter int, doc text)",
            "ALTER TABLE toast_t ALTER COLUMN doc SET STORAGE EXTERNAL",
            "INSERT INTO full_t VALUES (1, 'old')", f"INSERT INTO toast_t VALUES (1, 0, '{big}')")
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        run_sql(pg, dbname, "UPDATE full_t SET v = 'new'", "DELETE FROM full_t",
                "UPDATE toast_t SET counter = 1")
        records = wait_records(sink, 4)
    upd, dele, _tomb, toast = records
    assert payload(upd)["before"] == {"id": 1, "v": "old"} and payload(upd)["after"] == {"id": 1, "v": "new"}
    assert payload(dele)["before"] == {"id": 1, "v": "new"}
    assert payload(toast)["after"] == {"id": 1, "counter": 1, "doc": "__debezium_unavailable_value"}


def test_table_without_primary_key_has_null_key(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE nopk (a int, b text)")
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        run_sql(pg, dbname, "INSERT INTO nopk VALUES (1, 'x')")
        (rec,) = wait_records(sink, 1)
    assert rec["key"] is None and payload(rec)["after"] == {"a": 1, "b": "x"}


def test_message_key_columns(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE mk (a int, b text, c int)")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"message.key.columns": "public\\.mk:b,a"}), sink=sink):
        run_sql(pg, dbname, "INSERT INTO mk VALUES (1, 'x', 3)")
        (rec,) = wait_records(sink, 1)
    assert rec["key"]["payload"] == {"b": "x", "a": 1}
    assert [f["field"] for f in rec["key"]["schema"]["fields"]] == ["b", "a"]


def test_transaction_metadata(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"provide.transaction.metadata": "true"}), sink=sink):
        run_sql(pg, dbname, "BEGIN; INSERT INTO a VALUES (1); INSERT INTO b VALUES (1); INSERT INTO a VALUES (2); "
                            "COMMIT")
        records = wait_records(sink, 5)
    assert [r["topic"] for r in records] == ["test.transaction", "test.public.a", "test.public.b", "test.public.a",
                                             "test.transaction"]
    begin, a1, b1, a2, end = (payload(r) for r in records)
    assert begin["status"] == "BEGIN" and end["status"] == "END"
    # Debezium's PostgreSQL transaction id is "<txId>:<LSN>" with the LSN of the event (BEGIN: the first
    # change, END: the commit's end), so BEGIN and END ids share the txId part only.
    xid = str(a1["source"]["txId"])
    assert begin["id"] == f"{xid}:{a1['source']['lsn']}" and end["id"].startswith(f"{xid}:")
    assert end["event_count"] == 3
    assert end["data_collections"] == [{"data_collection": "public.a", "event_count": 2},
                                       {"data_collection": "public.b", "event_count": 1}]
    assert [(e["transaction"]["total_order"], e["transaction"]["data_collection_order"]) for e in (a1, b1, a2)] == [
        (1, 1), (2, 1), (3, 2)]
    assert a1["transaction"]["id"] == begin["id"] and b1["transaction"]["id"] == f"{xid}:{b1['source']['lsn']}"


def test_truncate_and_logical_messages(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE tr (id int PRIMARY KEY)", "INSERT INTO tr VALUES (1)")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"skipped.operations": "none"}), sink=sink):
        run_sql(pg, dbname, "TRUNCATE tr", "SELECT pg_logical_emit_message(true, 'app', 'hello')",
                "SELECT pg_logical_emit_message(false, 'app', 'now')", "INSERT INTO tr VALUES (2)")
        records = wait_records(sink, 4 if pg.major >= 14 else 2)
    if pg.major < 14:
        # pgoutput sends logical-decoding messages from PostgreSQL 14 (protocol 1 with messages=true): an older
        # server decodes them and sends nothing, so the stream goes from the TRUNCATE to the INSERT.
        assert ops(records) == [("test.public.tr", "t"), ("test.public.tr", "c")]
        return
    assert ops(records) == [("test.public.tr", "t"), ("test.message", "m"), ("test.message", "m"),
                            ("test.public.tr", "c")]
    assert records[0]["key"] is None
    msg = payload(records[1])
    assert msg["message"] == {"prefix": "app", "content": base64.b64encode(b"hello").decode()}
    assert records[1]["key"]["payload"] == {"prefix": "app"}
    assert payload(records[2])["source"]["txId"] is None


def test_skipped_operations_default_skips_truncate(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE tr (id int PRIMARY KEY)")
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        run_sql(pg, dbname, "TRUNCATE tr", "INSERT INTO tr VALUES (5)")
        records = wait_records(sink, 1)
    assert ops(records) == [("test.public.tr", "c")]


def test_filters_exclude_tables(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE keep (id int PRIMARY KEY)", "CREATE TABLE drop_me (id int PRIMARY KEY)")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"table.exclude.list": "public\\.drop_me"}), sink=sink):
        run_sql(pg, dbname, "INSERT INTO drop_me VALUES (1)", "INSERT INTO keep VALUES (1)")
        records = wait_records(sink, 1)
    assert ops(records) == [("test.public.keep", "c")]


@pytest.mark.parametrize("schemas", ["true", "false"])
def test_schemas_enable(pg: PostgresCluster, dbname: str, schemas: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE s (id int PRIMARY KEY)")
    sink = MemorySink()
    cfg = {"key.converter.schemas.enable": schemas, "value.converter.schemas.enable": schemas}
    with Running(make_config(pg, dbname, **cfg), sink=sink):
        run_sql(pg, dbname, "INSERT INTO s VALUES (7)")
        (rec,) = wait_records(sink, 1)
    if schemas == "true":
        assert set(rec["key"]) == {"schema", "payload"} and set(rec["value"]) == {"schema", "payload"}
    else:
        assert rec["key"] == {"id": 7} and rec["value"]["after"] == {"id": 7}



def test_heartbeats_advance_the_slot_of_an_idle_captured_table(pg: PostgresCluster, dbname: str) -> None:
    run_sql(pg, dbname, "CREATE TABLE captured (id int PRIMARY KEY)", "CREATE TABLE busy (id int PRIMARY KEY)")
    sink = MemorySink()
    config = make_config(pg, dbname, **{"table.include.list": "public\\.captured", "heartbeat.interval.ms": "200"})
    slot = config.slot_name
    with Running(config, sink=sink):
        start = pg.execute(f"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '{slot}'")[0][0]
        for i in range(200):  # writes the connector filters out
            pg.execute(f"INSERT INTO busy VALUES ({i})", dbname)
        target = pg.execute("SELECT pg_current_wal_insert_lsn()")[0][0]
        wait_for(lambda: pg.execute(f"SELECT confirmed_flush_lsn >= '{target}' FROM pg_replication_slots "
                                    f"WHERE slot_name = '{slot}'") == [(True,)], 30, "the slot to pass the writes")
    beats = [r for r in sink.records if r["topic"] == "__debezium-heartbeat.test"]
    assert beats and beats[0]["key"]["payload"] == {"serverName": "test"} and beats[0]["partition"] == 0
    assert all(not r["topic"].startswith("test.public") for r in sink.records)
    assert start is not None


def test_stop_at_lsn_ends_with_the_transaction_holding_it(pg: PostgresCluster, dbname: str) -> None:
    # stop_at_lsn (the benchmarks' end point): the run returns once the transaction holding that LSN is
    # emitted, and handles nothing after it even when later transactions arrive in the same read.
    import psycopg

    from pgcdc.lsn import parse_lsn
    from pgcdc.runner import Connector

    run_sql(pg, dbname, "CREATE TABLE s (id int PRIMARY KEY)")
    config = make_config(pg, dbname)
    with Running(config, sink=MemorySink()):  # creates the slot; nothing to read yet
        pass
    run_sql(pg, dbname, "INSERT INTO s SELECT generate_series(1, 10)")
    with psycopg.connect(pg.dsn(dbname)) as conn:  # one transaction: an LSN after its changes, before its commit
        conn.execute("INSERT INTO s SELECT generate_series(11, 20)")
        row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
    assert row is not None
    run_sql(pg, dbname, "INSERT INTO s SELECT generate_series(21, 30)")
    sink = MemorySink()
    Connector(config, sink=sink, stop_at_lsn=parse_lsn(row[0])).run()
    assert sorted(payload(r)["after"]["id"] for r in sink.records) == list(range(1, 21))


def test_table_without_columns(pg: PostgresCluster, dbname: str) -> None:
    """Its rows, snapshotted and streamed, are empty structs (Debezium's snapshot stops on such a table)."""
    run_sql(pg, dbname, "CREATE TABLE nocols (); INSERT INTO nocols DEFAULT VALUES")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{"snapshot.mode": "initial"}), sink=sink):
        wait_records(sink, 1)
        run_sql(pg, dbname, "INSERT INTO nocols DEFAULT VALUES")
        records = wait_records(sink, 2)
    assert [(payload(r)["op"], payload(r)["after"], r["key"]) for r in records] == [("r", {}, None), ("c", {}, None)]
    assert records[1]["value"]["schema"]["fields"][1]["fields"] == []
