"""Records pgcdc wrote with Confluent's JsonSchemaConverter (keys and values) into a real schema registry, read
back with pgcdc.spark.jsonschema.JsonSchemaFormat into typed tables identical to PostgreSQL, schema changes
included (the Protobuf test's tables and workload; JSON Schema keeps nulls, so the NOT NULLs there only keep
the two tests alike)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.registry import ApicurioRegistry
from pgcdc.spark import apply_changes, decode_changes, read_quarantine, read_table, table_path
from pgcdc.spark.jsonschema import JsonSchemaFormat
from pgcdc.spark.verify import verify
from tests.spark.conftest import Capture, run_capture
from tests.spark.test_avro import Counting, schema_ids
from tests.spark.test_end_to_end import read_all
from tests.spark.test_protobuf import SETUP, SNAPSHOT, STREAM, TABLES, assert_exact

JSONSCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
NULLS = ["INSERT INTO items VALUES (500, 'nulls', NULL, 0, 0, false, '', 0)"]


@pytest.fixture(scope="module")
def js_capture(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> Capture:
    capture = run_capture(pg, broker, SETUP, SNAPSHOT, [*NULLS, *STREAM], TABLES, **{
        "key.converter": JSONSCHEMA, "value.converter": JSONSCHEMA,
        "converter.schema.registry.url": registry.url})
    capture.registry = registry.url
    return capture


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_jsonschema_tables_equal_postgres(spark: SparkSession, js_capture: Capture, tmp_path: Path,
                                          fmt: str) -> None:
    raw = read_all(spark, js_capture)
    values = [bytes(r[0]) for r in raw.select("value").filter("value IS NOT NULL").collect()]
    assert values and {v[:1] for v in values} == {b"\x00"} and {v[5:6] for v in values} == {b"{"}
    record_format = JsonSchemaFormat(js_capture.registry)
    counting = record_format.client = Counting(record_format.client)
    assert apply_changes(spark, decode_changes(raw, fmt=record_format), tmp_path, fmt) == {}
    assert_exact(js_capture, tmp_path, fmt)
    items = read_table(spark, table_path(tmp_path, js_capture.topics["items"]), fmt)
    assert [(f.name, f.dataType) for f in items.schema.fields if not f.name.startswith("_pgcdc")] == [
        ("id", T.IntegerType()), ("v", T.StringType()), ("n", T.DecimalType(10, 2)), ("big", T.LongType()),
        ("f", T.DoubleType()), ("ok", T.BooleanType()), ("b", T.BinaryType()), ("s", T.ShortType())]
    assert items.filter("id = 500").first()["n"] is None
    evolve = read_table(spark, table_path(tmp_path, js_capture.topics["evolve"]), fmt)
    assert [(f.name, f.dataType) for f in evolve.schema.fields] == [
        ("id", T.IntegerType()), ("qty", T.LongType()), ("note", T.StringType())]
    # the snapshot's schema, then one per change: each id fetched from the registry once
    assert len(schema_ids(raw.filter(F.col("topic") == js_capture.topics["evolve"]), "value")) == 4
    assert sorted(counting.asked) == sorted(schema_ids(raw, "value") | schema_ids(raw, "key"))


def test_records_that_are_not_json_schema_are_quarantined(spark: SparkSession, js_capture: Capture,
                                                          tmp_path: Path) -> None:
    topic = js_capture.topics["pair"]
    raw = read_all(spark, js_capture, subscribe=topic)
    good = raw.filter("value IS NOT NULL").first()
    bad_topic = f"{topic}.bad{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": js_capture.bootstrap})
    producer.produce(bad_topic, key=b'{"id": 1}', value=b'{"schema": null, "payload": {}}')
    producer.produce(bad_topic, key=bytes(good["key"]), value=b"\x00\x7f\xff\xff\xf0" + bytes(good["value"])[5:])
    assert producer.flush(30) == 0
    both = raw.unionByName(read_all(spark, js_capture, subscribe=bad_topic))
    counts = apply_changes(spark, decode_changes(both, fmt=JsonSchemaFormat(js_capture.registry)), tmp_path)
    assert counts == {
        "not Confluent's wire format (magic byte 0, 4-byte schema id)": 1,
        f"schema id {0x7ffffff0} is not in the schema registry": 1}
    assert read_quarantine(spark, str(tmp_path / "_quarantine")).count() == 2
    report = verify(js_capture.dsn, "public.pair", table_path(tmp_path, topic), "parquet")
    assert report.ok, report.text()
