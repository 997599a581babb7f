"""Topics of a real pgcdc capture -> pgcdc_kafka DataSource -> typed rows -> Parquet and Delta tables, compared
with PostgreSQL: values (pgcdc.spark.verify, per-row checksums) and Spark types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pgcdc.spark import DecodeOptions, apply_changes, decode_changes, read_table, table_path
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
    # the columns whose values Spark could not hold (decimals, dates, timestamps, bytes can fail)
    "_pgcdc_unrepresentable": T.ArrayType(T.StringType()),
}
# PostGIS (io.debezium.data.geometry.Geometry/Geography) and hstore in its default mode (json).
GEOMETRY = T.StructType([T.StructField("wkb", T.BinaryType()), T.StructField("srid", T.IntegerType())])
SHAPES_TYPES = {"id": T.IntegerType(), "geom": GEOMETRY, "pt": GEOMETRY, "geog": GEOMETRY, "tags": T.StringType(),
                "_pgcdc_unrepresentable": T.ArrayType(T.StringType())}
# The other modes (conftest.MODES_PROPS): bytea as hex text marked BYTEA by datatype.propagate.source.type,
# hstore as a map, intervals as ISO-8601 text, times as IsoDate/IsoTime/IsoTimestamp text.
MODES_TYPES = {
    "id": T.IntegerType(), "c_bytea": T.BinaryType(), "c_time": T.LongType(), "c_time3": T.LongType(),
    "c_date": T.DateType(), "c_ts": T.TimestampNTZType(), "c_ts3": T.TimestampNTZType(), "c_interval": T.StringType(),
    "c_tags": T.MapType(T.StringType(), T.StringType()), "_pgcdc_unrepresentable": T.ArrayType(T.StringType()),
}


def types_of(df: DataFrame) -> dict[str, T.DataType]:
    return {f.name: f.dataType for f in df.schema.fields}


def read_all(spark: SparkSession, capture: Capture, **options: str) -> DataFrame:
    reader = spark.read.format("pgcdc_kafka")
    for k, v in capture.reader_options(**options).items():
        reader = reader.option(k, v)
    return reader.load()


def assert_exact(capture: Capture, root: Path, fmt: str) -> None:
    reports = [verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in TABLES]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)


def apply(spark: SparkSession, raw: DataFrame, root: Path, fmt: str,
          options: DecodeOptions | None = None) -> dict[str, int]:
    return apply_changes(spark, decode_changes(raw, options), root, fmt)


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_snapshot_and_stream_equal_postgres(spark: SparkSession, capture: Capture, tmp_path: Path, fmt: str) -> None:
    raw = read_all(spark, capture)
    quarantined = apply(spark, raw, tmp_path, fmt)
    assert quarantined == {}
    assert_exact(capture, tmp_path, fmt)
    every = read_table(spark, table_path(tmp_path, capture.topics["every"]), fmt)
    assert types_of(every) == EXPECTED_TYPES
    shapes = read_table(spark, table_path(tmp_path, capture.topics["shapes"]), fmt)
    assert types_of(shapes) == SHAPES_TYPES
    evolve = read_table(spark, table_path(tmp_path, capture.topics["evolve"]), fmt)
    assert [(f.name, f.dataType) for f in evolve.schema.fields] == [
        ("id", T.IntegerType()), ("qty", T.LongType()), ("note", T.StringType())]


def test_times_as_strings(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    """DecodeOptions(time_as="string"): MicroTime (time) and Time (time(3), milliseconds) as 'HH:MM:SS.ffffff'."""
    raw = read_all(spark, capture, subscribe=capture.topics["every"])
    assert apply(spark, raw, tmp_path, "parquet", DecodeOptions(time_as="string")) == {}
    path = table_path(tmp_path, capture.topics["every"])
    report = verify(capture.dsn, "public.every", path, "parquet")
    assert report.ok, report.text()
    every = read_table(spark, path, "parquet")
    assert types_of(every) == {**EXPECTED_TYPES, "c_time": T.StringType(), "c_time3": T.StringType()}
    row = every.filter("id = 1").select("c_time", "c_time3").first()
    assert (row["c_time"], row["c_time3"]) == ("00:01:01.123456", "12:00:01.123000")


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_other_handling_modes_equal_postgres(spark: SparkSession, modes_capture: Capture, tmp_path: Path,
                                            fmt: str) -> None:
    raw = read_all(spark, modes_capture)
    assert apply(spark, raw, tmp_path, fmt, DecodeOptions(binary_mode="hex")) == {}
    path = table_path(tmp_path, modes_capture.topics["modes"])
    report = verify(modes_capture.dsn, "public.modes", path, fmt)
    assert report.ok, report.text()
    modes = read_table(spark, path, fmt)
    assert types_of(modes) == MODES_TYPES
    rows = {r["id"]: r for r in modes.filter("id IN (21, 23)").collect()}
    assert (rows[21]["c_interval"], rows[21]["c_tags"], bytes(rows[21]["c_bytea"])) == (
        "P0Y0M-2DT0H0M-3S", {'q"uote': "ü"}, b"")
    assert rows[23]["c_interval"] == "P0Y-2M-3DT-4H-5M-6.000001S"


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
    first = read_all(spark, capture, endingOffsets=middle).persist()  # read once, applied to both targets
    second = read_all(spark, capture, startingOffsets=middle).persist()
    for fmt in ("parquet", "delta"):
        root = tmp_path / fmt
        apply(spark, first, root, fmt)
        apply(spark, second, root, fmt)
        assert_exact(capture, root, fmt)
        apply(spark, second, root, fmt)  # the second run again, from the middle
        assert_exact(capture, root, fmt)
    for df in (raw, first, second):
        df.unpersist()
