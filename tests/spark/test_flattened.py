"""Flattened records (ExtractNewRecordState) from a real pgcdc run -> the same exact current-state tables.

One capture, two transforms chosen by topic (a TopicNameMatches predicate): the tables of `TABLES` get the
exact configuration (delete.tombstone.handling.mode=rewrite, add.fields=op,lsn,source.ts_ms), `lossy` gets one
that cannot be applied exactly (tombstone mode, no LSN), which decode_changes refuses unless asked not to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pgcdc.errors import ConfigError
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.registry import ApicurioRegistry
from pgcdc.spark import AvroFormat, DecodeOptions, ProtobufFormat, apply_changes, decode_changes, read_table
from pgcdc.spark import table_path
from pgcdc.spark.verify import verify
from tests.harness import read_topic
from tests.spark.conftest import AVRO, Capture, run_capture
from tests.spark.test_protobuf import PROTOBUF

SETUP = [
    # doc is stored out of line uncompressed (TOAST); REPLICA IDENTITY FULL makes an update that leaves it
    # unchanged carry its value (under DEFAULT it is the placeholder: docs/spark.md)
    "CREATE TABLE items (id int PRIMARY KEY, v text, n numeric(10,2), doc text)",
    "ALTER TABLE items ALTER COLUMN doc SET STORAGE EXTERNAL",
    "ALTER TABLE items REPLICA IDENTITY FULL",
    "CREATE TABLE moves (id int PRIMARY KEY, v text)",
    "CREATE TABLE pair (a int, b text, v int, PRIMARY KEY (a, b))",
    "CREATE TABLE lossy (id int PRIMARY KEY, v text)",
    "CREATE TABLE sentinel (id int PRIMARY KEY)",
]
SNAPSHOT = [
    "INSERT INTO items SELECT g, 'v' || g, g * 1.25, repeat(md5(g::text), 400) FROM generate_series(1, 30) g",
    "INSERT INTO moves SELECT g, 'm' || g FROM generate_series(1, 20) g",
    "INSERT INTO pair SELECT g, 'k' || g, g FROM generate_series(1, 10) g",
    "INSERT INTO lossy SELECT g, 'l' || g FROM generate_series(1, 10) g",
]
STREAM = [
    "INSERT INTO items SELECT g, 'v' || g, g * 1.25, repeat(md5(g::text), 400) FROM generate_series(31, 50) g",
    # TOAST-unchanged: doc is not touched
    "UPDATE items SET v = 'touched ' || id, n = n + 1 WHERE id % 4 = 0",
    "UPDATE items SET doc = repeat('new', 5000) WHERE id = 3",
    "DELETE FROM items WHERE id % 10 = 7",
    # several changes of one row in one transaction, a delete and re-insert of one key, a key moved and back
    "BEGIN; UPDATE items SET v = 'tx a' WHERE id = 1; UPDATE items SET v = 'tx b', n = 0 WHERE id = 1; "
    "DELETE FROM items WHERE id = 2; INSERT INTO items VALUES (2, 'reborn', 2, 'short'); "
    "UPDATE moves SET id = 50 WHERE id = 4; UPDATE moves SET v = 'moved' WHERE id = 50; "
    "UPDATE moves SET id = 4 WHERE id = 50; DELETE FROM items WHERE id = 5; COMMIT",
    # primary key changes: moved, moved again, a key reused after a delete
    "UPDATE moves SET id = id + 100 WHERE id <= 3",
    "UPDATE moves SET id = 1000 WHERE id = 101",
    "DELETE FROM moves WHERE id BETWEEN 6 AND 8",
    "INSERT INTO moves VALUES (6, 'back')",
    "UPDATE moves SET v = 'again' WHERE id = 6",
    "UPDATE pair SET v = v * 10 WHERE a <= 3",
    "UPDATE pair SET b = 'moved' WHERE a = 4",
    "DELETE FROM pair WHERE a = 5",
    "UPDATE lossy SET v = 'changed' WHERE id <= 3",
    "DELETE FROM lossy WHERE id IN (2, 4)",
    "INSERT INTO sentinel VALUES (1)",
]
TABLES = ("items", "moves", "pair")
UNWRAP = "io.debezium.transforms.ExtractNewRecordState"
PROPS = {
    "transforms": "unwrap,lossy",
    "transforms.unwrap.type": UNWRAP,
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": "op,lsn,source.ts_ms",
    "transforms.unwrap.predicate": "isLossy", "transforms.unwrap.negate": "true",
    "transforms.lossy.type": UNWRAP,
    "transforms.lossy.delete.tombstone.handling.mode": "tombstone",
    "transforms.lossy.add.fields": "op",
    "transforms.lossy.predicate": "isLossy",
    "predicates": "isLossy",
    "predicates.isLossy.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isLossy.pattern": r".*\.lossy",
}


@pytest.fixture(scope="module")
def flat(pg: PostgresCluster, broker: KafkaBroker) -> Capture:
    return run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, (*TABLES, "lossy"), **PROPS)


@pytest.fixture(scope="module")
def flat_avro(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> Capture:
    """The same workload and transforms, keys and values written with Confluent's AvroConverter."""
    capture = run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, (*TABLES, "lossy"), **PROPS, **{
        "key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": registry.url})
    capture.registry = registry.url
    return capture


@pytest.fixture(scope="module")
def flat_protobuf(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> Capture:
    """Again with Confluent's ProtobufConverter (no column here is ever null: proto3 would lose it)."""
    capture = run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, (*TABLES, "lossy"), **PROPS, **{
        "key.converter": PROTOBUF, "value.converter": PROTOBUF, "converter.schema.registry.url": registry.url})
    capture.registry = registry.url
    return capture


def read(spark: SparkSession, capture: Capture, tables: tuple[str, ...], **options: str) -> DataFrame:
    reader = spark.read.format("pgcdc_kafka")
    subscribe = ",".join(capture.topics[t] for t in tables)
    for k, v in capture.reader_options(subscribe=subscribe, **options).items():
        reader = reader.option(k, v)
    return reader.load()


def assert_exact(capture: Capture, root: Path, fmt: str, tables: tuple[str, ...] = TABLES) -> None:
    reports = [verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in tables]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)


def test_the_topics_hold_flattened_rows(flat: Capture) -> None:
    """What the decoder is given: rows with the added fields and rewritten deletes, no envelope, no tombstone."""
    records = read_topic(flat.bootstrap, flat.topics["moves"])
    values = [r["value"] for r in records]
    assert all(v is not None for v in values)
    fields = [f["field"] for f in values[0]["schema"]["fields"]]
    assert fields == ["id", "v", "__deleted", "__op", "__lsn", "__source_ts_ms"]
    assert values[0]["schema"]["name"].endswith(".Value")
    deletes = [v["payload"] for v in values if v["payload"]["__deleted"] == "true"]
    assert deletes and all(d["__op"] == "d" and d["__lsn"] for d in deletes)
    # `lsn` is each change's own LSN, not its transaction's: the two updates of items 1 in one transaction
    # are ordered by it, so a replay of the first can never win over the second
    items = [r["value"]["payload"] for r in read_topic(flat.bootstrap, flat.topics["items"])]
    tx = [(p["__lsn"], p["v"]) for p in items if p["id"] == 1 and p["__op"] == "u"]
    assert [v for _, v in tx] == ["tx a", "tx b"] and tx[0][0] < tx[1][0]


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_flattened_equal_postgres(spark: SparkSession, flat: Capture, tmp_path: Path, fmt: str) -> None:
    raw = read(spark, flat, TABLES)
    assert apply_changes(spark, decode_changes(raw), tmp_path, fmt) == {}
    assert_exact(flat, tmp_path, fmt)
    items = read_table(spark, table_path(tmp_path, flat.topics["items"]), fmt)
    # the added fields are not columns; the types are the envelope's
    assert [(f.name, f.dataType) for f in items.schema.fields if not f.name.startswith("_pgcdc")] == [
        ("id", T.IntegerType()), ("v", T.StringType()), ("n", T.DecimalType(10, 2)), ("doc", T.StringType())]
    row = items.filter("id = 4").first()
    assert (row["v"], len(row["doc"])) == ("touched 4", 12800)  # the TOASTed value kept through the update


def test_flattened_replays_and_splits_stay_exact(spark: SparkSession, flat: Capture, tmp_path: Path) -> None:
    """The LSN orders the rows, not the Kafka offset: duplicates, halves in either order, a replayed half."""
    raw = read(spark, flat, TABLES).persist()
    apply_changes(spark, decode_changes(raw.unionByName(raw)), tmp_path / "twice", "parquet")
    assert_exact(flat, tmp_path / "twice", "parquet")
    middles: dict[str, dict[str, int]] = {}
    for row in raw.groupBy("topic", "partition").agg({"offset": "max"}).collect():
        middles.setdefault(row["topic"], {})[str(row["partition"])] = row["max(offset)"] // 2
    middle = json.dumps(middles)
    first = read(spark, flat, TABLES, endingOffsets=middle).persist()
    second = read(spark, flat, TABLES, startingOffsets=middle).persist()
    for fmt in ("parquet", "delta"):
        root = tmp_path / fmt
        apply_changes(spark, decode_changes(second), root, fmt)  # the later half first
        apply_changes(spark, decode_changes(first), root, fmt)
        assert_exact(flat, root, fmt)
        apply_changes(spark, decode_changes(first), root, fmt)  # and the earlier one replayed
        assert_exact(flat, root, fmt)
    for df in (raw, first, second):
        df.unpersist()


def test_a_config_that_is_not_exact_is_refused(spark: SparkSession, flat: Capture, tmp_path: Path) -> None:
    raw = read(spark, flat, ("lossy", "moves"))
    with pytest.raises(ConfigError) as refused:
        apply_changes(spark, decode_changes(raw), tmp_path, "parquet")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{flat.topics['lossy']}: flattened records (ExtractNewRecordState) cannot be "
                              "applied exactly, missing __deleted (delete.tombstone.handling.mode=rewrite")
    # and __op: in the tombstone mode a delete's record has none of the added fields
    assert "; __lsn or __source_lsn (lsn in add.fields" in message and "; __op (op in add.fields" in message
    assert message.endswith("; or pass DecodeOptions(exact=False) to apply them in Kafka offset order")
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing applied, the exact topic neither
    # asked for it, the same records are applied in Kafka offset order (right here: one batch, no replays)
    assert apply_changes(spark, decode_changes(raw, DecodeOptions(exact=False)), tmp_path, "parquet") == {}
    assert_exact(flat, tmp_path, "parquet", ("lossy", "moves"))


@pytest.mark.parametrize("decoder", ["spark", "arrow"])
def test_avro_flattened_equal_postgres(spark: SparkSession, flat_avro: Capture, tmp_path: Path,
                                       decoder: str) -> None:
    """Flattened rows in Confluent's Avro: the same tables and types; the lossy topic refused the same way."""
    raw = read(spark, flat_avro, TABLES)
    assert {bytes(r[0][:1]) for r in raw.select("value").collect()} == {b"\x00"}
    fmt = AvroFormat(flat_avro.registry, decoder=decoder)
    assert apply_changes(spark, decode_changes(raw, fmt=fmt), tmp_path, "parquet") == {}
    assert_exact(flat_avro, tmp_path, "parquet")
    items = read_table(spark, table_path(tmp_path, flat_avro.topics["items"]), "parquet")
    assert [(f.name, f.dataType) for f in items.schema.fields if not f.name.startswith("_pgcdc")] == [
        ("id", T.IntegerType()), ("v", T.StringType()), ("n", T.DecimalType(10, 2)), ("doc", T.StringType())]
    with pytest.raises(ConfigError, match=r"lossy: flattened records \(ExtractNewRecordState\) cannot be applied"):
        decode_changes(read(spark, flat_avro, ("lossy",)), fmt=fmt)


def test_protobuf_flattened_equal_postgres(spark: SparkSession, flat_protobuf: Capture, tmp_path: Path) -> None:
    raw = read(spark, flat_protobuf, TABLES)
    assert {bytes(r[0][:1]) for r in raw.select("value").collect()} == {b"\x00"}
    fmt = ProtobufFormat(flat_protobuf.registry)
    assert apply_changes(spark, decode_changes(raw, fmt=fmt), tmp_path, "parquet") == {}
    assert_exact(flat_protobuf, tmp_path, "parquet")
    items = read_table(spark, table_path(tmp_path, flat_protobuf.topics["items"]), "parquet")
    assert [(f.name, f.dataType) for f in items.schema.fields if not f.name.startswith("_pgcdc")] == [
        ("id", T.IntegerType()), ("v", T.StringType()), ("n", T.DecimalType(10, 2)), ("doc", T.StringType())]
    with pytest.raises(ConfigError, match=r"lossy: flattened records \(ExtractNewRecordState\) cannot be applied"):
        decode_changes(read(spark, flat_protobuf, ("lossy",)), fmt=fmt)
