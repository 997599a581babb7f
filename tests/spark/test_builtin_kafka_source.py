"""Spark's built-in `kafka` source (spark-sql-kafka-0-10, fetched from Maven Central into the Ivy cache) on
pgcdc's topics: batch and Structured Streaming (checkpoint, Trigger.AvailableNow) through decode/apply into
tables equal to PostgreSQL, the same rows as `pgcdc_kafka`, and the source's own options users set."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.sql import DataFrame, SparkSession

from pgcdc.spark import apply_changes, decode_changes, read_table, stream_to_tables, table_path
from pgcdc.spark.verify import verify
from tests.spark.conftest import TABLES, Capture
from tests.spark.test_end_to_end import assert_exact, read_all

ORDER = ["topic", "partition", "offset"]


def builtin(spark: SparkSession, capture: Capture, **options: str) -> DataFrame:
    return spark.read.format("kafka").options(**capture.reader_options(**options)).load()


def test_batch_rows_equal_pgcdc_kafka_and_tables_equal_postgres(spark: SparkSession, capture: Capture,
                                                                 tmp_path: Path) -> None:
    real = builtin(spark, capture, includeHeaders="true", startingOffsets="earliest")
    ours = read_all(spark, capture, includeHeaders="true")
    assert real.schema == ours.schema
    rows = real.orderBy(*ORDER).collect()
    assert {r["topic"] for r in rows} == set(capture.topics.values())
    assert rows == ours.orderBy(*ORDER).collect()  # every column: bytes, timestamps, header order
    for fmt in ("parquet", "delta"):
        assert apply_changes(spark, decode_changes(real), tmp_path / fmt, fmt) == {}
        assert_exact(capture, tmp_path / fmt, fmt)
    assert apply_changes(spark, decode_changes(ours), tmp_path / "ours", "parquet") == {}
    for t in TABLES:
        tables = [read_table(spark, table_path(tmp_path / name, capture.topics[t]), "parquet", meta=True)
                  for name in ("parquet", "ours")]
        assert sorted(tables[0].collect()) == sorted(tables[1].collect()), t


def batches(query: object) -> list[int]:
    return [p["numInputRows"] for p in query.recentProgress]  # type: ignore[attr-defined]


def test_available_now_stream_with_max_offsets_per_trigger(spark: SparkSession, capture: Capture,
                                                           tmp_path: Path) -> None:
    total = builtin(spark, capture, startingOffsets="earliest").count()
    options = capture.reader_options(startingOffsets="earliest", maxOffsetsPerTrigger="100")
    for fmt in ("delta", "parquet"):
        query = stream_to_tables(spark, options, str(tmp_path / fmt), str(tmp_path / f"{fmt}-checkpoint"),
                                 fmt=fmt, source="kafka")
        query.awaitTermination()
        assert query.exception() is None
        rows = batches(query)
        # AvailableNow honours the rate limit: several micro-batches, none above it, all records once
        assert len(rows) >= total // 100 and max(rows) <= 100 and sum(rows) == total, rows
        assert_exact(capture, tmp_path / fmt, fmt)
    # a second run from the checkpoint finds nothing new and leaves the tables exact
    query = stream_to_tables(spark, options, str(tmp_path / "delta"), str(tmp_path / "delta-checkpoint"),
                             fmt="delta", source="kafka")
    query.awaitTermination()
    assert sum(batches(query)) == 0
    assert_exact(capture, tmp_path / "delta", "delta")


def test_starting_and_ending_timestamp_split_the_stream(spark: SparkSession, capture: Capture,
                                                        tmp_path: Path) -> None:
    topic = capture.topics["every"]
    whole = builtin(spark, capture, subscribe=topic, startingOffsets="earliest").orderBy(*ORDER).collect()
    stamps = sorted({r["timestamp"] for r in whole})
    assert len(stamps) > 2, "the capture's records all carry one timestamp"
    middle = stamps[len(stamps) // 2]
    ms = str(int(middle.replace(tzinfo=dt.UTC).timestamp() * 1000) if middle.tzinfo is None
             else int(middle.timestamp() * 1000))
    after = builtin(spark, capture, subscribe=topic, startingTimestamp=ms)
    before = builtin(spark, capture, subscribe=topic, startingOffsets="earliest", endingTimestamp=ms)
    by_map = builtin(spark, capture, subscribe=topic,
                     startingOffsetsByTimestamp=json.dumps({topic: {"0": int(ms)}}))
    # the producer stamps records in order: from the first record at or after the instant on
    assert after.orderBy(*ORDER).collect() == [r for r in whole if r["timestamp"] >= middle]
    assert before.orderBy(*ORDER).collect() == [r for r in whole if r["timestamp"] < middle]
    assert by_map.orderBy(*ORDER).collect() == after.orderBy(*ORDER).collect()
    root = tmp_path / "split"
    apply_changes(spark, decode_changes(after), root, "delta")  # the later half first: positions decide
    apply_changes(spark, decode_changes(before), root, "delta")
    report = verify(capture.dsn, "public.every", table_path(root, topic), "delta")
    assert report.ok, report.text()


def test_fail_on_data_loss(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    """Records deleted below a query's start: failOnDataLoss=true stops the query, false reads from the log
    start on, and what it reads decodes and applies like the same records read by `pgcdc_kafka`."""
    source = read_all(spark, capture, subscribe=capture.topics["moves"], includeHeaders="true")
    records = source.orderBy(*ORDER).collect()
    copy = f"{capture.topics['moves']}.copy{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": capture.bootstrap})
    for r in records:
        producer.produce(copy, key=r["key"], value=r["value"], partition=0, headers=r["headers"])
    assert producer.flush(30) == 0
    lost = len(records) // 3
    admin = AdminClient({"bootstrap.servers": capture.bootstrap})
    for future in admin.delete_records([TopicPartition(copy, 0, lost)]).values():
        future.result(30)

    options = {"kafka.bootstrap.servers": capture.bootstrap, "subscribe": copy,
               "startingOffsets": json.dumps({copy: {"0": 0}})}
    failing = stream_to_tables(spark, {**options, "failOnDataLoss": "true"}, str(tmp_path / "strict"),
                               str(tmp_path / "strict-checkpoint"), source="kafka")
    with pytest.raises(Exception, match="(?i)data.*lost|out of range|failOnDataLoss"):
        failing.awaitTermination()
    lenient = stream_to_tables(spark, {**options, "failOnDataLoss": "false"}, str(tmp_path / "lenient"),
                               str(tmp_path / "lenient-checkpoint"), source="kafka")
    lenient.awaitTermination()
    assert lenient.exception() is None
    assert sum(batches(lenient)) == len(records) - lost
    ours = read_all(spark, capture, subscribe=copy)
    assert ours.count() == len(records) - lost
    apply_changes(spark, decode_changes(ours), tmp_path / "ours")
    got, want = (read_table(spark, table_path(tmp_path / name, copy), "parquet", meta=True).collect()
                 for name in ("lenient", "ours"))
    assert len(want) > 0 and sorted(got) == sorted(want)


def test_jars_that_cannot_be_had_are_one_line(tmp_path: Path) -> None:
    """A release Maven Central does not have (as for a PySpark whose kafka jar is not published): the session
    is not started and the error is one line naming the coordinates and the Ivy folder."""
    missing = "org.apache.spark:spark-sql-kafka-0-10_2.13:0.0.1-none"
    code = ("from pgcdc.errors import ConfigError\n"
            "from pgcdc.spark import local_session\n"
            "try:\n"
            f"    local_session(packages=[{missing!r}])\n"
            "except ConfigError as e:\n"
            "    print('ERROR ' + str(e))\n")
    env = {**os.environ, "PGCDC_PG_CACHE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, done.stdout + done.stderr
    assert errors[0].startswith(f"ERROR spark.jars.packages: cannot fetch {missing} from Maven Central into "
                                f"{tmp_path / 'ivy'}"), errors[0]
