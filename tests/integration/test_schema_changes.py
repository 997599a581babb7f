"""DDL while streaming: the next event carries the new schema, without a restart."""

from __future__ import annotations

from typing import Any

from pgcdc.local import PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_records


def fields(record: dict[str, Any], side: str = "after") -> list[tuple[str, str]]:
    env = {f["field"]: f for f in record["value"]["schema"]["fields"]}
    return [(f["field"], f["type"]) for f in env[side]["fields"]]


def test_columns_added_dropped_retyped_and_renamed(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, a int, b text)", dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        for sql in ("INSERT INTO t VALUES (1, 10, 'x')",
                    "ALTER TABLE t ADD COLUMN c int NOT NULL DEFAULT 5",
                    "INSERT INTO t VALUES (2, 20, 'y')",
                    "ALTER TABLE t DROP COLUMN b",
                    "INSERT INTO t VALUES (3, 30)",
                    "ALTER TABLE t ALTER COLUMN a TYPE bigint",
                    "INSERT INTO t VALUES (4, 40000000000)",
                    "ALTER TABLE t RENAME COLUMN a TO amount",
                    "UPDATE t SET amount = 1 WHERE id = 4"):
            pg.execute(sql, dbname)
        r1, r2, r3, r4, r5 = wait_records(sink, 5)
    assert fields(r1) == [("id", "int32"), ("a", "int32"), ("b", "string")]
    assert fields(r2) == [("id", "int32"), ("a", "int32"), ("b", "string"), ("c", "int32")]
    assert payload(r2)["after"] == {"id": 2, "a": 20, "b": "y", "c": 5}
    c_field = next(f for f in r2["value"]["schema"]["fields"][1]["fields"] if f["field"] == "c")
    assert c_field["default"] == 5 and c_field["optional"] is False
    assert fields(r3) == [("id", "int32"), ("a", "int32"), ("c", "int32")]
    assert fields(r4) == [("id", "int32"), ("a", "int64"), ("c", "int32")]
    assert payload(r4)["after"]["a"] == 40000000000
    assert fields(r5) == [("id", "int32"), ("amount", "int64"), ("c", "int32")]
    assert payload(r5)["op"] == "u" and payload(r5)["after"]["amount"] == 1


def test_new_and_renamed_tables(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE old_name (id int PRIMARY KEY)", dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        for sql in ("INSERT INTO old_name VALUES (1)",
                    "CREATE TABLE brand_new (id int PRIMARY KEY, v text)",
                    "INSERT INTO brand_new VALUES (1, 'hello')",
                    "ALTER TABLE old_name RENAME TO new_name",
                    "INSERT INTO new_name VALUES (2)"):
            pg.execute(sql, dbname)
        records = wait_records(sink, 3)
    assert [(r["topic"], payload(r)["after"]) for r in records] == [
        ("test.public.old_name", {"id": 1}),
        ("test.public.brand_new", {"id": 1, "v": "hello"}),
        ("test.public.new_name", {"id": 2}),
    ]
    assert payload(records[2])["source"]["table"] == "new_name"
    assert records[2]["value"]["schema"]["name"] == "test.public.new_name.Envelope"


def test_changes_older_than_the_catalog_keep_their_own_schema(pg: PostgresCluster, dbname: str) -> None:
    """A connector that lags reads rows written before a DDL after the catalog changed."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, a int)", dbname)
    offsets = MemoryOffsetStore()
    config = make_config(pg, dbname)
    with Running(config, sink=MemorySink(), offsets=offsets):
        pass  # creates the slot
    pg.execute("INSERT INTO t VALUES (1, 1)", dbname)
    pg.execute("ALTER TABLE t ADD COLUMN extra text DEFAULT 'd'", dbname)
    pg.execute("INSERT INTO t VALUES (2, 2)", dbname)
    pg.execute("ALTER TABLE t DROP COLUMN a", dbname)
    pg.execute("INSERT INTO t VALUES (3)", dbname)
    sink = MemorySink()
    with Running(config, sink=sink, offsets=offsets):
        r1, r2, r3 = wait_records(sink, 3)
    assert [payload(r)["after"] for r in (r1, r2, r3)] == [
        {"id": 1, "a": 1}, {"id": 2, "a": 2, "extra": "d"}, {"id": 3, "extra": "d"}]
    assert fields(r1) == [("id", "int32"), ("a", "int32")]
    assert fields(r3) == [("id", "int32"), ("extra", "string")]
