"""The type zoo (tests/spark/zoo.py) through pgcdc -> broker -> pgcdc_kafka -> decode_changes -> apply_changes,
checked by `pgcdc verify`: every table identical, rows holding values Spark cannot represent kept (null there,
named in _pgcdc_unrepresentable) and counted by verify, truncates emptying the table between the changes
before and after them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from pgcdc.cli import main
from pgcdc.spark import DecodeOptions, apply_changes, decode_changes, read_table, stream_to_tables, table_path
from pgcdc.spark.verify import Report, verify
from tests.spark.conftest import Capture
from tests.spark.test_end_to_end import read_all
from tests.spark.zoo import TABLES

# The zoo's rows (1-based, per table) holding a value Spark cannot represent: NaN numerics (no event can
# carry them: null), numerics past 38 digits, infinite, BC and year > 9999 dates and timestamps.
UNREPRESENTABLE_ROWS = {"z_numeric": {2, 3}, "z_date": {2, 3, 4}, "z_timestamp": {2, 3, 4, 5}, "z_array": {2}}


def expected_keys(table: str) -> list[tuple[int]]:
    """The ids those rows have in PostgreSQL at the end: inserted as i and 100+i; id 1 moved to 1001, 102
    deleted (zoo.STREAM)."""
    ids = {n for i in UNREPRESENTABLE_ROWS.get(table, ()) for n in (i, 100 + i)}
    ids = {1001 if n == 1 else n for n in ids} - {102}
    return sorted((n,) for n in ids)


def reports(capture: Capture, root: Path, fmt: str) -> dict[str, Report]:
    return {t: verify(capture.dsn, f"public.{t}", table_path(root, capture.topics[t]), fmt) for t in TABLES}


def assert_identical(capture: Capture, root: Path, fmt: str) -> dict[str, Report]:
    found = reports(capture, root, fmt)
    assert [t for t, r in found.items() if not r.ok] == [], "\n".join(r.text() for r in found.values())
    return found


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_zoo_is_identical_and_unrepresentable_rows_are_counted(spark: SparkSession, zoo_capture: Capture,
                                                               tmp_path: Path, fmt: str) -> None:
    quarantined = apply_changes(spark, decode_changes(read_all(spark, zoo_capture)), tmp_path, fmt)
    assert quarantined == {}
    found = assert_identical(zoo_capture, tmp_path, fmt)
    assert {t: [k for k, _ in r.unrepresentable] for t, r in found.items() if r.unrepresentable} == {
        t: expected_keys(t) for t in UNREPRESENTABLE_ROWS}
    assert "rows with values unrepresentable in Spark" in found["z_timestamp"].text()
    # Debezium leaves money[] and point[] out and writes bit(n)[] as null: named, not compared
    assert found["z_array"].not_carried == ["ma", "pa", "bits"]
    ts = read_table(spark, table_path(tmp_path, zoo_capture.topics["z_timestamp"]), fmt)
    row = ts.filter("id = 2").first()
    assert (row["ts"], row["ts3"], row["tstz"], sorted(row["_pgcdc_unrepresentable"])) == (
        None, None, None, ["ts", "ts3", "tstz"])
    assert ts.filter("id = 101").first()["_pgcdc_unrepresentable"] is None


def test_verify_cli_counts_unrepresentable_rows(spark: SparkSession, zoo_capture: Capture, tmp_path: Path) -> None:
    apply_changes(spark, decode_changes(read_all(spark, zoo_capture)), tmp_path)
    args = ["verify", "--dsn", zoo_capture.dsn]
    for t in TABLES:
        args += ["--table", f"public.{t}", "--target", str(table_path(tmp_path, zoo_capture.topics[t]))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.count("identical") == len(TABLES)
    assert "5 rows with values unrepresentable in Spark (d)" in result.output  # z_date: 2, 3, 4, 103, 104
    # a table without a primary key: one line, no traceback
    zoo_capture.pg.execute("CREATE TABLE IF NOT EXISTS nokey (v int)", zoo_capture.dbname)
    result = CliRunner().invoke(main, ["verify", "--dsn", zoo_capture.dsn, "--table", "public.nokey",
                                       "--target", str(table_path(tmp_path, zoo_capture.topics["z_int"]))])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["pgcdc: error: public.nokey has no primary key or unique index: "
                                                  "nothing to match rows by"]


def test_clamp_and_quarantine_options(spark: SparkSession, zoo_capture: Capture, tmp_path: Path) -> None:
    topics = [zoo_capture.topics[t] for t in ("z_date", "z_timestamp")]
    raw = read_all(spark, zoo_capture, subscribe=",".join(topics)).persist()
    apply_changes(spark, decode_changes(raw, DecodeOptions(unrepresentable="clamp")), tmp_path / "clamp")
    for t in ("z_date", "z_timestamp"):
        report = verify(zoo_capture.dsn, f"public.{t}", table_path(tmp_path / "clamp", zoo_capture.topics[t]))
        assert report.ok, report.text()
        assert [k for k, _ in report.unrepresentable] == expected_keys(t)
    ts = read_table(spark, table_path(tmp_path / "clamp", zoo_capture.topics["z_timestamp"]), "parquet")
    row = ts.filter("id = 2").first()  # infinity, -infinity, infinity
    assert (row["ts"], row["ts3"]) == (dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(1, 1, 1))
    assert ts.filter("id = 5").first()["ts"] == dt.datetime(1, 1, 1)  # 44 BC
    dates = read_table(spark, table_path(tmp_path / "clamp", zoo_capture.topics["z_date"]), "parquet")
    assert [r["d"] for r in dates.filter("id IN (2, 4)").orderBy("id").collect()] == [dt.date(9999, 12, 31)] * 2
    counts = apply_changes(spark, decode_changes(raw, DecodeOptions(unrepresentable="quarantine")), tmp_path / "q")
    assert sum(counts.values()) == sum(len(expected_keys(t)) for t in ("z_date", "z_timestamp")) + 2  # + deleted
    raw.unpersist()


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_truncate_one_record_per_batch(spark: SparkSession, zoo_capture: Capture, tmp_path: Path, fmt: str) -> None:
    """Every record of the truncated table in a batch of its own: the truncate alone in its batch."""
    topic = zoo_capture.topics["z_truncate"]
    raw = read_all(spark, zoo_capture, subscribe=topic).persist()
    assert raw.filter(raw.value.cast("string").contains('"op":"t"')).count() == 1
    # partition by partition: a partition's older records arrive after the truncate of another
    for r in raw.select("partition", "offset").orderBy("partition", "offset").collect():
        one = raw.filter((F.col("partition") == r["partition"]) & (F.col("offset") == r["offset"]))
        apply_changes(spark, decode_changes(one), tmp_path, fmt)
    report = verify(zoo_capture.dsn, "public.z_truncate", table_path(tmp_path, topic), fmt)
    assert report.ok, report.text()
    rows = read_table(spark, table_path(tmp_path, topic), fmt).orderBy("id").collect()
    assert [(r["id"], r["v"]) for r in rows] == [(1, "in tx after"), (2, "updated after"), (3, "after")]
    raw.unpersist()


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_zoo_through_foreach_batch(spark: SparkSession, zoo_capture: Capture, tmp_path: Path, fmt: str) -> None:
    query = stream_to_tables(spark, zoo_capture.reader_options(startingOffsets="earliest"), str(tmp_path / "t"),
                             str(tmp_path / "checkpoint"), fmt=fmt)
    query.awaitTermination()
    assert query.exception() is None
    assert_identical(zoo_capture, tmp_path / "t", fmt)

