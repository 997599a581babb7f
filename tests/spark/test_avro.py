"""Records pgcdc wrote with Confluent's AvroConverter (keys and values) into a real schema registry, read back with
pgcdc.spark.avro.AvroFormat (both decoders) into the same typed tables as JSON, compared with PostgreSQL."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark import AvroFormat, apply_changes, decode_changes, read_quarantine, read_table, stream_to_tables
from pgcdc.spark import table_path
from pgcdc.spark.verify import verify
from tests.spark.conftest import AVRO_TABLES, Capture
from tests.spark.test_end_to_end import EXPECTED_TYPES, SHAPES_TYPES, read_all, types_of

DECODERS = ["arrow", "spark"]


def assert_exact(capture: Capture, root: Path, fmt: str) -> None:
    reports = [verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in AVRO_TABLES]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)


class Counting:
    """The real registry client, counting the schemas asked for by id."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.asked: list[int] = []

    def get_schema(self, schema_id: int, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(schema_id)
        return self.client.get_schema(schema_id, *args, **kwargs)


def schema_ids(raw: DataFrame, column: str) -> set[int]:
    ids = raw.filter(F.col(column).isNotNull()).select(F.conv(F.hex(F.substring(column, 2, 4)), 16, 10).cast("long"))
    return {r[0] for r in ids.distinct().collect()}


@pytest.mark.parametrize(("decoder", "fmt"), [("arrow", "parquet"), ("spark", "parquet"), ("arrow", "delta")])
def test_avro_tables_equal_postgres(spark: SparkSession, avro_capture: Capture, tmp_path: Path, decoder: str,
                                    fmt: str) -> None:
    raw = read_all(spark, avro_capture)
    assert {bytes(r[0][:1]) for r in raw.select("value").filter("value IS NOT NULL").collect()} == {b"\x00"}
    record_format = AvroFormat(avro_capture.registry, decoder=decoder)
    counting = record_format.client = Counting(record_format.client)
    assert apply_changes(spark, decode_changes(raw, fmt=record_format), tmp_path, fmt) == {}
    assert_exact(avro_capture, tmp_path, fmt)
    # The same Spark types as from JSON.
    topics = avro_capture.topics
    assert types_of(read_table(spark, table_path(tmp_path, topics["every"]), fmt)) == EXPECTED_TYPES
    assert types_of(read_table(spark, table_path(tmp_path, topics["shapes"]), fmt)) == SHAPES_TYPES
    evolve = read_table(spark, table_path(tmp_path, topics["evolve"]), fmt)
    assert [(f.name, f.dataType) for f in evolve.schema.fields] == [
        ("id", T.IntegerType()), ("qty", T.LongType()), ("note", T.StringType())]
    # Columns added, dropped and retyped mid-stream: a schema id each (the snapshot's, then three more); every
    # id fetched from the registry once.
    evolve_raw = raw.filter(F.col("topic") == topics["evolve"])
    assert len(schema_ids(evolve_raw, "value")) == 4
    wanted = schema_ids(raw, "value") | schema_ids(raw, "key")
    assert sorted(counting.asked) == sorted(wanted)


def test_decoders_give_the_same_rows(spark: SparkSession, avro_capture: Capture) -> None:
    raw = read_all(spark, avro_capture)
    by_decoder = {d: decode_changes(raw, fmt=AvroFormat(avro_capture.registry, decoder=d)) for d in DECODERS}
    arrow, other = by_decoder["arrow"], by_decoder["spark"]
    assert sorted(arrow.tables) == sorted(other.tables) == sorted(avro_capture.topics.values())
    for topic, table in arrow.tables.items():
        theirs = other.tables[topic]
        assert table.schema == theirs.schema and table.keys == theirs.keys
        mine = sorted(table.rows.collect(), key=lambda r: r["__pgcdc_pos"])
        assert mine == sorted(theirs.rows.collect(), key=lambda r: r["__pgcdc_pos"])
        assert len(mine) > 0


def test_streaming_fetches_each_schema_once(spark: SparkSession, avro_capture: Capture, tmp_path: Path) -> None:
    """Micro-batches of at most 100 records share one AvroFormat: each schema id is fetched once in all."""
    record_format = AvroFormat(avro_capture.registry, decoder="arrow")
    counting = record_format.client = Counting(record_format.client)
    options = avro_capture.reader_options(startingOffsets="earliest", maxOffsetsPerTrigger="100")
    query = stream_to_tables(spark, options, str(tmp_path / "t"), str(tmp_path / "checkpoint"), source="kafka",
                             record_format=record_format)
    query.awaitTermination()
    assert query.exception() is None
    inputs = [p["numInputRows"] for p in query.recentProgress]
    assert len(inputs) >= 3 and max(inputs) <= 100, inputs
    assert_exact(avro_capture, tmp_path / "t", "parquet")
    raw = read_all(spark, avro_capture)
    assert sorted(counting.asked) == sorted(schema_ids(raw, "value") | schema_ids(raw, "key"))


@pytest.mark.parametrize("decoder", DECODERS)
def test_records_that_are_not_avro_are_quarantined(spark: SparkSession, avro_capture: Capture, tmp_path: Path,
                                                   decoder: str) -> None:
    """A JSON record, an id the registry never handed out and bytes its schema cannot read: one reason each;
    the table's own records are applied."""
    topic = avro_capture.topics["moves"]
    raw = read_all(spark, avro_capture, subscribe=topic)
    good = raw.filter("value IS NOT NULL").first()
    bad_topic = f"{topic}.bad{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": avro_capture.bootstrap})
    producer.produce(bad_topic, key=b'{"id": 1}', value=b'{"schema": null, "payload": {}}')
    producer.produce(bad_topic, key=bytes(good["key"]), value=b"\x00\x7f\xff\xff\xf0" + bytes(good["value"])[5:])
    producer.produce(bad_topic, key=bytes(good["key"]), value=bytes(good["value"])[:6])
    assert producer.flush(30) == 0
    both = raw.unionByName(read_all(spark, avro_capture, subscribe=bad_topic))
    counts = apply_changes(spark, decode_changes(both, fmt=AvroFormat(avro_capture.registry, decoder=decoder)),
                           tmp_path)
    value_id = int.from_bytes(bytes(good["value"])[1:5], "big")
    key_id = int.from_bytes(bytes(good["key"])[1:5], "big")
    assert counts == {
        "not Confluent's wire format (magic byte 0, 4-byte schema id)": 1,
        f"schema id {0x7ffffff0} is not in the schema registry": 1,
        f"cannot decode Avro with schema ids value {value_id}, key {key_id}": 1}
    assert read_quarantine(spark, str(tmp_path / "_quarantine")).count() == 3
    report = verify(avro_capture.dsn, "public.moves", table_path(tmp_path, topic), "parquet")
    assert report.ok, report.text()
