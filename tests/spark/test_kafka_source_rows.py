"""`pgcdc_kafka` against the contract of Spark's built-in `kafka` source, as written in its guide and code.

The schema `pgcdc_kafka` declares is the kafka source's, column for column, and a DataFrame with that schema
built from the records as a plain Kafka consumer (confluent-kafka) reads them decodes and applies to the same
tables as the `pgcdc_kafka` rows. test_builtin_kafka_source.py compares with the built-in source itself.
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pgcdc.spark import apply_changes, decode_changes, read_table, table_path
from tests.spark.conftest import TABLES, Capture
from tests.spark.test_end_to_end import assert_exact, read_all

# Spark's Structured Streaming + Kafka Integration Guide, "Reading Data from Kafka": "Each row in the source
# has the following schema": key binary, value binary, topic string, partition int, offset long, timestamp
# timestamp, timestampType int, and headers array (optional, with includeHeaders=true). Nullability and the
# headers' element type are not in the guide; they are those of Spark's source code
# (connector/kafka-0-10-sql/.../KafkaRecordToRowConverter.scala: StructField defaults, i.e. nullable, and
# headersType = ArrayType(StructType(key StringType, value BinaryType))).
KAFKA_SOURCE_SCHEMA = T.StructType([
    T.StructField("key", T.BinaryType(), True),
    T.StructField("value", T.BinaryType(), True),
    T.StructField("topic", T.StringType(), True),
    T.StructField("partition", T.IntegerType(), True),
    T.StructField("offset", T.LongType(), True),
    T.StructField("timestamp", T.TimestampType(), True),
    T.StructField("timestampType", T.IntegerType(), True),
])
HEADERS_FIELD = T.StructField("headers", T.ArrayType(T.StructType([
    T.StructField("key", T.StringType(), True),
    T.StructField("value", T.BinaryType(), True),
]), containsNull=True), True)
WITH_HEADERS = T.StructType([*KAFKA_SOURCE_SCHEMA.fields, HEADERS_FIELD])


@pytest.mark.parametrize("headers", [False, True])
def test_schema_is_the_kafka_source_schema(spark: SparkSession, capture: Capture, headers: bool) -> None:
    expected = WITH_HEADERS if headers else KAFKA_SOURCE_SCHEMA
    options = capture.reader_options(includeHeaders=str(headers).lower())
    batch = spark.read.format("pgcdc_kafka").options(**options).load()
    stream = spark.readStream.format("pgcdc_kafka").options(**options).load()
    assert batch.schema == expected  # StructType equality: names, order, types, nullability
    assert stream.schema == expected
    assert batch.limit(1).collect()[0].__fields__ == expected.names


def consumer_rows(bootstrap: str, topics: list[str]) -> list[tuple[Any, ...]]:
    """Every record of the topics as the kafka source would turn it into a row
    (KafkaRecordToRowConverter): the record's key and value bytes, its milliseconds as an instant, Kafka's
    timestamp type id, its headers or null when it has none."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pgcdc-spark-direct",
                         "enable.auto.commit": "false", "enable.partition.eof": "true"})
    rows: list[tuple[Any, ...]] = []
    try:
        md = consumer.list_topics(timeout=30)
        assignment = [TopicPartition(t, p, 0) for t in topics for p in md.topics[t].partitions]
        consumer.assign(assignment)
        remaining = {(tp.topic, tp.partition) for tp in assignment}
        while remaining:
            msgs = consumer.consume(1000, 10)
            assert msgs, f"no record and no partition end within 10 s; waiting for {sorted(remaining)}"
            for msg in msgs:
                if msg.error() is not None:
                    assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
                    remaining.discard((msg.topic(), msg.partition()))
                    continue
                ts_type, ts = msg.timestamp()
                instant = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ts)
                headers = [(k, v) for k, v in msg.headers()] if msg.headers() else None
                # librdkafka counts timestamp types 0 none, 1 create, 2 log append; Kafka's ids are -1, 0, 1
                rows.append((msg.key(), msg.value(), msg.topic(), msg.partition(), msg.offset(), instant,
                             ts_type - 1, headers))
    finally:
        consumer.close()
    return rows


def test_kafka_source_shaped_rows_give_the_same_tables(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    # pgcdc's records all carry __debezium.context.* headers; one more topic has records without headers
    # (the kafka source gives null there, not an empty array) and without key or value.
    plain = f"plain{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": capture.bootstrap})
    producer.produce(plain, key=b"k", value=b"v")
    producer.produce(plain, key=None, value=b"v", headers=[("h", None), ("h", b"\x00")])
    producer.produce(plain, key=b"k", value=None)
    producer.flush(30)
    topics = [*capture.topics.values(), plain]
    direct = spark.createDataFrame(consumer_rows(capture.bootstrap, topics), WITH_HEADERS)
    via_source = read_all(spark, capture, subscribe=",".join(topics), includeHeaders="true")
    order = ["topic", "partition", "offset"]
    got = via_source.orderBy(*order).collect()
    assert got == direct.orderBy(*order).collect()
    headers = {(r["key"], r["value"]): r["headers"] for r in got if r["topic"] == plain}
    assert headers == {(b"k", b"v"): None, (None, b"v"): [("h", None), ("h", b"\x00")], (b"k", None): None}

    for name, raw in (("direct", direct.drop("headers")), ("pgcdc_kafka", via_source)):
        assert apply_changes(spark, decode_changes(raw.filter(raw.topic != plain)), tmp_path / name, "parquet") == {}
        assert_exact(capture, tmp_path / name, "parquet")
    for t in TABLES:
        topic = capture.topics[t]
        tables = [read_table(spark, table_path(tmp_path / name, topic), "parquet", meta=True)
                  for name in ("direct", "pgcdc_kafka")]
        assert tables[0].schema == tables[1].schema, t
        assert sorted(tables[0].collect()) == sorted(tables[1].collect()), t
