"""Records pgcdc wrote with Confluent's ProtobufConverter (keys and values) into a real schema registry, read back
with pgcdc.spark.protobuf.ProtobufFormat into typed tables identical to PostgreSQL, schema changes included.

Scalar columns here are NOT NULL: the converter (proto3, no wrappers) writes a null scalar as its default, so a
null text would read back as '' (docs/spark.md, "Protobuf"); numeric is a message and keeps its nulls.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.registry import ApicurioRegistry
from pgcdc.spark import apply_changes, decode_changes, read_quarantine, read_table, table_path
from pgcdc.spark.protobuf import ProtobufFormat
from pgcdc.spark.verify import verify
from tests.spark.conftest import (CAUGHT_UP, TOASTY_SETUP, TOASTY_SNAPSHOT, TOASTY_STREAM, Capture,
                                  run_capture)
from tests.spark.test_avro import Counting, schema_ids
from tests.spark.test_end_to_end import read_all

PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
SETUP = [
    "CREATE TABLE items (id int PRIMARY KEY, v text NOT NULL, n numeric(10,2), big bigint NOT NULL, "
    "f double precision NOT NULL, ok boolean NOT NULL, b bytea NOT NULL, s smallint NOT NULL)",
    "CREATE TABLE evolve (id int PRIMARY KEY, qty int NOT NULL, old text NOT NULL)",
    "CREATE TABLE pair (a int, b text, v int NOT NULL, PRIMARY KEY (a, b))",
    "CREATE TABLE sentinel (id int PRIMARY KEY)",
    *TOASTY_SETUP,  # TOASTed values and the placeholders of updates that leave them alone
    # dates and timestamps Python cannot hold: Protobuf lands Debezium's numbers for them
    "CREATE TABLE far (id int PRIMARY KEY, d date, ts timestamp, da date[])",
]
SNAPSHOT = [
    "INSERT INTO items SELECT g, 'v' || g, CASE WHEN g % 3 = 0 THEN NULL ELSE g * 1.25 END, g * 10000000000, "
    "g / 7.0, g % 2 = 0, decode(md5(g::text), 'hex'), g FROM generate_series(1, 30) g",
    "INSERT INTO evolve SELECT g, g, 'o' || g FROM generate_series(1, 10) g",
    "INSERT INTO pair SELECT g, 'k' || g, g FROM generate_series(1, 10) g",
    *TOASTY_SNAPSHOT,
    "INSERT INTO far VALUES (1, 'infinity', 'infinity', '{infinity,2020-01-01}'), "
    "(2, '-infinity', '-infinity', '{-infinity}'), (3, '2020-02-29', '2020-02-29 12:00', '{2020-01-01}')",
]
STREAM = [
    "INSERT INTO items SELECT g, 'v' || g, -g * 0.01, -g, -g / 3.0, true, '\\x00ff'::bytea, -g "
    "FROM generate_series(31, 40) g",
    "UPDATE items SET v = 'touched ' || id, n = NULL WHERE id % 4 = 0",
    "UPDATE items SET n = 99999999.99, s = 32767, big = -9223372036854775808 WHERE id = 5",
    "DELETE FROM items WHERE id % 10 = 7",
    "BEGIN; UPDATE items SET v = 'tx a' WHERE id = 1; UPDATE items SET v = 'tx b' WHERE id = 1; "
    "DELETE FROM items WHERE id = 2; INSERT INTO items VALUES (2, 'reborn', 2, 2, 2, false, '', 2); COMMIT",
    "UPDATE items SET id = 100 WHERE id = 3",
    # schema changes mid-stream: a column added (every row then rewritten), one dropped, one retyped
    "ALTER TABLE evolve ADD COLUMN note text NOT NULL DEFAULT 'x'",
    "UPDATE evolve SET note = 'n' || id",
    "INSERT INTO evolve VALUES (11, 11, 'o11', 'noted')",
    CAUGHT_UP,
    "ALTER TABLE evolve DROP COLUMN old",
    "UPDATE evolve SET qty = qty + 1 WHERE id = 4",
    CAUGHT_UP,
    "ALTER TABLE evolve ALTER COLUMN qty TYPE bigint",
    "UPDATE evolve SET qty = 5000000000 WHERE id = 5",
    "DELETE FROM evolve WHERE id = 6",
    "UPDATE pair SET v = v * 10 WHERE a <= 3",
    "UPDATE pair SET b = 'moved' WHERE a = 4",
    "DELETE FROM pair WHERE a = 5",
    *TOASTY_STREAM,
    # BC streamed as scalars only: a snapshot's date and an array's elements are read through JDBC, which
    # drops the era (docs/compatibility.md), a difference verify reports
    "INSERT INTO far VALUES (4, '0044-03-15 BC', '0044-03-15 12:00 BC', '{infinity,9999-12-31}'), "
    "(5, '9999-12-31', '0001-01-01 00:00', '{0001-01-01}')",
    "INSERT INTO sentinel VALUES (1)",
]
TABLES = ("items", "evolve", "pair", "toasty", "far")


@pytest.fixture(scope="module")
def proto_capture(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> Capture:
    capture = run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, TABLES, **{
        "key.converter": PROTOBUF, "value.converter": PROTOBUF, "converter.schema.registry.url": registry.url})
    capture.registry = registry.url
    return capture


def read(spark: SparkSession, capture: Capture) -> DataFrame:
    return read_all(spark, capture)


def assert_exact(capture: Capture, root: Path, fmt: str) -> None:
    reports = [verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in TABLES]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)
    # far: infinity, -infinity and BC are Debezium's numbers in the target, beyond Python's dates on both sides
    far = reports[TABLES.index("far")]
    assert sorted(far.unrepresentable) == [((1,), ["d", "ts", "da"]), ((2,), ["d", "ts", "da"]),
                                           ((4,), ["d", "ts", "da"])], far.text()


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_protobuf_tables_equal_postgres(spark: SparkSession, proto_capture: Capture, tmp_path: Path,
                                        fmt: str) -> None:
    raw = read(spark, proto_capture)
    values = [bytes(r[0]) for r in raw.select("value").filter("value IS NOT NULL").collect()]
    assert values and {v[:1] for v in values} == {b"\x00"} and {v[5:6] for v in values} == {b"\x00"}
    record_format = ProtobufFormat(proto_capture.registry)
    counting = record_format.client = Counting(record_format.client)
    assert apply_changes(spark, decode_changes(raw, fmt=record_format), tmp_path, fmt) == {}
    assert_exact(proto_capture, tmp_path, fmt)
    items = read_table(spark, table_path(tmp_path, proto_capture.topics["items"]), fmt)
    assert [(f.name, f.dataType) for f in items.schema.fields if not f.name.startswith("_pgcdc")] == [
        ("id", T.IntegerType()), ("v", T.StringType()), ("n", T.DecimalType(10, 2)), ("big", T.LongType()),
        ("f", T.DoubleType()), ("ok", T.BooleanType()), ("b", T.BinaryType()), ("s", T.ShortType())]
    evolve = read_table(spark, table_path(tmp_path, proto_capture.topics["evolve"]), fmt)
    assert [(f.name, f.dataType) for f in evolve.schema.fields] == [
        ("id", T.IntegerType()), ("qty", T.LongType()), ("note", T.StringType())]
    # the snapshot's schema, then one per change: each id fetched from the registry once
    assert len(schema_ids(raw.filter(F.col("topic") == proto_capture.topics["evolve"]), "value")) == 4
    assert sorted(counting.asked) == sorted(schema_ids(raw, "value") | schema_ids(raw, "key"))


def test_records_that_are_not_protobuf_are_quarantined(spark: SparkSession, proto_capture: Capture,
                                                       tmp_path: Path) -> None:
    topic = proto_capture.topics["pair"]
    raw = read_all(spark, proto_capture, subscribe=topic)
    good = raw.filter("value IS NOT NULL").first()
    bad_topic = f"{topic}.bad{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": proto_capture.bootstrap})
    producer.produce(bad_topic, key=b'{"id": 1}', value=b'{"schema": null, "payload": {}}')
    producer.produce(bad_topic, key=bytes(good["key"]), value=b"\x00\x7f\xff\xff\xf0" + bytes(good["value"])[5:])
    producer.produce(bad_topic, key=bytes(good["key"]), value=bytes(good["value"])[:-3] + b"\xff\xff\xff")
    assert producer.flush(30) == 0
    both = raw.unionByName(read_all(spark, proto_capture, subscribe=bad_topic))
    counts = apply_changes(spark, decode_changes(both, fmt=ProtobufFormat(proto_capture.registry)), tmp_path)
    value_id = int.from_bytes(bytes(good["value"])[1:5], "big")
    assert counts == {
        "not Confluent's wire format (magic byte 0, 4-byte schema id)": 1,
        f"schema id {0x7ffffff0} is not in the schema registry": 1,
        f"cannot decode Protobuf with schema id {value_id}": 1}
    assert read_quarantine(spark, str(tmp_path / "_quarantine")).count() == 3
    report = verify(proto_capture.dsn, "public.pair", table_path(tmp_path, topic), "parquet")
    assert report.ok, report.text()
