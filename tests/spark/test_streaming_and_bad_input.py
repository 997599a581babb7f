"""Structured Streaming with Trigger.AvailableNow through foreachBatch, bad records in quarantine, and
`pgcdc verify` catching a target that lags behind PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from click.testing import CliRunner
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from pgcdc.cli import main
from pgcdc.spark import apply_changes, decode_changes, read_quarantine, stream_to_tables, table_path
from pgcdc.spark.verify import verify
from tests.spark.conftest import TABLES, Capture
from tests.spark.test_end_to_end import assert_exact, read_all


def test_available_now_stream_into_delta_and_parquet(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    for fmt in ("delta", "parquet"):
        query = stream_to_tables(spark, capture.reader_options(startingOffsets="earliest"), str(tmp_path / fmt),
                                 str(tmp_path / f"{fmt}-checkpoint"), fmt=fmt)
        query.awaitTermination()
        assert query.exception() is None
        assert_exact(capture, tmp_path / fmt, fmt)
    # a second run from the checkpoint finds nothing new and leaves the tables exact
    query = stream_to_tables(spark, capture.reader_options(startingOffsets="earliest"), str(tmp_path / "delta"),
                             str(tmp_path / "delta-checkpoint"), fmt="delta")
    query.awaitTermination()
    assert_exact(capture, tmp_path / "delta", "delta")


def test_bad_records_go_to_quarantine(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    junk = f"junk{uuid.uuid4().hex[:6]}"
    good_topic = capture.topics["moves"]
    producer = Producer({"bootstrap.servers": capture.bootstrap})
    valid_key = json.dumps({"schema": {"type": "struct", "fields": [], "optional": False}, "payload": {}}).encode()
    producer.produce(junk, key=b"k", value=b"{not json")
    producer.produce(junk, key=valid_key, value=json.dumps({"schema": {"type": "struct"}, "payload": {}}).encode())
    producer.produce(junk, key=None, value=None)
    producer.produce(f"{junk}.other", key=b"1", value=b'{"schema":{},"payload":{"op":"c"}}')
    producer.flush(30)
    raw = read_all(spark, capture, subscribe=f"{good_topic},{junk},{junk}.other")
    known = {good_topic, junk}
    counts = apply_changes(spark, decode_changes(raw, topics=known), tmp_path, "parquet")
    reasons = sorted((r["topic"], r["reason"]) for r in read_quarantine(spark, tmp_path / "_quarantine").collect())
    assert reasons == sorted([
        (junk, "malformed envelope: value is not JSON with schema and payload "
               "(value.converter.schemas.enable must be true)"),
        (junk, "malformed envelope: no payload.op"),
        (junk, "record without key and value"),
        (f"{junk}.other", "unknown topic"),
    ])
    assert sum(counts.values()) == 4
    report = verify(capture.dsn, "public.moves", table_path(tmp_path, good_topic), "parquet")
    assert report.ok, report.text()


def test_verify_reports_a_lagging_target(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    raw = read_all(spark, capture)
    firsts = {}
    for row in raw.groupBy("topic", "partition").agg({"offset": "max"}).collect():
        firsts.setdefault(row["topic"], {})[str(row["partition"])] = row["max(offset)"] // 3
    apply_changes(spark, decode_changes(read_all(spark, capture, endingOffsets=json.dumps(firsts))), tmp_path)
    args = ["verify", "--dsn", capture.dsn]
    for t in TABLES:
        args += ["--table", f"public.{t}", "--target", str(table_path(tmp_path, capture.topics[t]))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "DIFFERENT" in result.output
    reports = [verify(capture.dsn, f"public.{t}", table_path(tmp_path, capture.topics[t])) for t in TABLES]
    assert not all(r.ok for r in reports)
    for r in reports:
        assert r.text() in result.output
    apply_changes(spark, decode_changes(read_all(spark, capture, startingOffsets=json.dumps(firsts))), tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.count("identical") == len(TABLES)
