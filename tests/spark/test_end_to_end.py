"""Topics of a real pgcdc capture -> pgcdc_kafka DataSource -> typed rows -> Parquet and Delta tables, compared
with PostgreSQL: values (pgcdc.spark.verify, per-row checksums) and Spark types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pgcdc.spark import apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.verify import verify
from tests.spark.conftest import TABLES, Capture

# PostgreSQL column type -> the Spark type the table must have (the mapping; default modes).
EXPECTED_TYPES = {
    "id": T.IntegerType(), "c_smallint": T.ShortType(), "c_int": T.IntegerType(), "c_big": T.LongType(),
    "c_num": T.DecimalType(12, 3), "c_numv": T.DecimalType(38, 18), "c_real": T.FloatType(),
    "c_double": T.DoubleType(), "c_bool": T.BooleanType(), "c_text": T.StringType(), "c_varchar": T.StringType(),
    "c_bytea": T.BinaryType(), "c_date": T.DateType(), "c_time": T.LongType(), "c_time3": T.LongType(),
    "c_ts": T.TimestampNTZType(), "c_ts3": T.TimestampNTZType(), "c_tstz": T.TimestampType(),
    "c_uuid": T.StringType(), "c_json": T.StringType(), "c_jsonb": T.StringType(), "c_enum": T.StringType(),
    "c_interval": T.LongType(), "c_int_arr": T.ArrayType(T.IntegerType()),
    "c_text_arr": T.ArrayType(T.StringType()), "c_num_arr": T.ArrayType(T.DecimalType(8, 2)),
}


def read_all(spark: SparkSession, capture: Capture, **options: str) -> DataFrame:
    reader = spark.read.format("pgcdc_kafka")
    for k, v in capture.reader_options(**options).items():
        reader = reader.option(k, v)
    return reader.load()


def assert_exact(capture: Capture, root: Path, fmt: str) -> None:
    reports = [verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in TABLES]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)


def apply(spark: SparkSession, raw: DataFrame, root: Path, fmt: str) -> dict[str, int]:
    return apply_changes(spark, decode_changes(raw), root, fmt)


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_snapshot_and_stream_equal_postgres(spark: SparkSession, capture: Capture, tmp_path: Path, fmt: str) -> None:
    raw = read_all(spark, capture)
    quarantined = apply(spark, raw, tmp_path, fmt)
    assert quarantined == {}
    assert_exact(capture, tmp_path, fmt)
    every = read_table(spark, table_path(tmp_path, capture.topics["every"]), fmt)
    assert {f.name: f.dataType for f in every.schema.fields} == EXPECTED_TYPES
    evolve = read_table(spark, table_path(tmp_path, capture.topics["evolve"]), fmt)
    assert [(f.name, f.dataType) for f in evolve.schema.fields] == [
        ("id", T.IntegerType()), ("qty", T.LongType()), ("note", T.StringType())]


def test_reader_rows_match_the_topic(spark: SparkSession, capture: Capture) -> None:
    from tests.harness import read_topic

    topic = capture.topics["moves"]
    expected = sorted(read_topic(capture.bootstrap, topic), key=lambda e: (e["partition"], e["offset"]))
    rows = read_all(spark, capture, subscribe=topic).orderBy("partition", "offset").collect()
    assert [(r["topic"], r["partition"], r["offset"]) for r in rows] == [
        (e["topic"], e["partition"], e["offset"]) for e in expected]
    assert [json.loads(r["value"]) if r["value"] else None for r in rows] == [e["value"] for e in expected]
    assert [json.loads(r["key"]) for r in rows] == [e["key"] for e in expected]


def test_replays_are_idempotent(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    raw = read_all(spark, capture).persist()
    # the whole topic twice in one batch (at-least-once duplicates)
    apply(spark, raw.unionByName(raw), tmp_path / "twice", "parquet")
    assert_exact(capture, tmp_path / "twice", "parquet")
    # the stream in two batches, then the second half again
    middles = {}
    for row in raw.groupBy("topic", "partition").agg({"offset": "max"}).collect():
        middles.setdefault(row["topic"], {})[str(row["partition"])] = row["max(offset)"] // 2
    middle = json.dumps(middles)
    first = read_all(spark, capture, endingOffsets=middle)
    second = read_all(spark, capture, startingOffsets=middle)
    for fmt in ("parquet", "delta"):
        root = tmp_path / fmt
        apply(spark, first, root, fmt)
        apply(spark, second, root, fmt)
        assert_exact(capture, root, fmt)
        apply(spark, second, root, fmt)  # the second run again, from the middle
        assert_exact(capture, root, fmt)
    raw.unpersist()
