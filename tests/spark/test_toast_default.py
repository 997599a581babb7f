"""TOASTed columns under REPLICA IDENTITY DEFAULT (PostgreSQL's default): an update that leaves an out-of-line
value unchanged does not send it, and the event carries `unavailable.value.placeholder` in the column's type
(text, bytes, a one-element text array, an integer array of the placeholder's bytes, a date array of those bytes
as days, a one-element uuid array of their name-based UUID). The target keeps the value it had: the tables stay
exact in one batch, split in order, replayed, and in Delta as in Parquet."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.spark import apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.verify import verify
from tests.harness import read_topic
from tests.spark.conftest import Capture, run_capture

PLACEHOLDER = "__debezium_unavailable_value"
SETUP = [
    "CREATE TABLE docs (id int PRIMARY KEY, v int, t text, b bytea, j jsonb, ia int[], ta text[], ua uuid[], "
    "da date[])",
    *(f"ALTER TABLE docs ALTER COLUMN {c} SET STORAGE EXTERNAL" for c in ("t", "b", "j", "ia", "ta", "ua", "da")),
]


def row(key: str, seed: str) -> str:
    """A row whose seven TOASTable values (6,400 characters, 6,400 bytes, ...) are stored out of line."""
    big = f"repeat(md5(({seed})::text), 200)"
    return (f"{key}, {seed}, {big}, convert_to({big}, 'UTF8'), jsonb_build_object('k', {big}), "
            f"array_fill({seed}, ARRAY[1000]), array_fill(md5(({seed})::text), ARRAY[100]), "
            f"array_fill(md5(({seed})::text)::uuid, ARRAY[400]), array_fill(date '2000-01-01' + {seed}, ARRAY[1000])")


SNAPSHOT = [f"INSERT INTO docs SELECT {row('g', 'g')} FROM generate_series(1, 12) g"]
STREAM = [
    f"INSERT INTO docs SELECT {row('g', 'g')} FROM generate_series(13, 20) g",
    "UPDATE docs SET v = v + 100",  # every TOASTed column unchanged: placeholders in all seven
    "UPDATE docs SET t = 'short ' || id WHERE id % 3 = 0",  # one of them changed (and no longer out of line)
    "BEGIN; UPDATE docs SET v = -1 WHERE id = 1; UPDATE docs SET v = -2 WHERE id = 1; COMMIT",
    # a key deleted and inserted again, then updated: the value is the new row's, not the deleted one's
    f"BEGIN; DELETE FROM docs WHERE id = 2; INSERT INTO docs VALUES ({row('2', '1002')}); COMMIT",
    "UPDATE docs SET v = 7 WHERE id = 2",
    "UPDATE docs SET ia = ARRAY[1, 2, 3] WHERE id = 4",
    "UPDATE docs SET ua = ARRAY[md5('u')::uuid], da = ARRAY[date '1969-12-31'] WHERE id = 6",
    "UPDATE docs SET v = 8 WHERE id = 4",
    "DELETE FROM docs WHERE id = 5",
    "INSERT INTO sentinel VALUES (1)",
]


@pytest.fixture(scope="module")
def toast(pg: PostgresCluster, broker: KafkaBroker) -> Capture:
    return run_capture(pg, broker, [*SETUP, "CREATE TABLE sentinel (id int PRIMARY KEY)"], SNAPSHOT, STREAM,
                       ("docs",))


def read(spark: SparkSession, capture: Capture, **options: str) -> DataFrame:
    reader = spark.read.format("pgcdc_kafka")
    for k, v in capture.reader_options(**options).items():
        reader = reader.option(k, v)
    return reader.load()


def assert_exact(capture: Capture, root: Path, fmt: str) -> None:
    report = verify(capture.dsn, "public.docs", table_path(root, capture.topics["docs"]), fmt)
    assert report.ok, report.text()


def test_updates_carry_placeholders(toast: Capture) -> None:
    """What the decoder is given: the placeholder in each column's type (as Debezium 3.6 writes them)."""
    values = [r["value"]["payload"] for r in read_topic(toast.bootstrap, toast.topics["docs"]) if r["value"]]
    after = next(v["after"] for v in values if v["op"] == "u" and v["after"]["id"] == 3)
    assert after["t"] == PLACEHOLDER and after["j"] == PLACEHOLDER and after["ta"] == [PLACEHOLDER]
    assert after["ia"] == list(PLACEHOLDER.encode()) and after["da"] == after["ia"]
    assert after["ua"] == ["b68a35a7-17ad-35b3-af2a-ae46edb4545a"]  # Java's UUID.nameUUIDFromBytes of it


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_unchanged_toast_keeps_the_value(spark: SparkSession, toast: Capture, tmp_path: Path, fmt: str) -> None:
    assert apply_changes(spark, decode_changes(read(spark, toast)), tmp_path, fmt) == {}
    assert_exact(toast, tmp_path, fmt)
    rows = {r["id"]: r for r in read_table(spark, table_path(tmp_path, toast.topics["docs"]), fmt).collect()}
    assert rows[3]["t"] == "short 3" and len(rows[7]["t"]) == 6400 and rows[1]["v"] == -2


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_unchanged_toast_split_and_replayed(spark: SparkSession, toast: Capture, tmp_path: Path, fmt: str) -> None:
    """Batches in order, each one replayed: the value comes from the target when the batch lacks it."""
    raw = read(spark, toast).persist()
    last = raw.groupBy("partition").agg({"offset": "max"}).collect()
    assert len(last) == 1
    end = last[0]["max(offset)"]
    cuts = [0, *(end * k // 4 for k in (1, 2, 3)), end + 1]
    topic = toast.topics["docs"]
    for lo, hi in itertools.pairwise(cuts):
        part = read(spark, toast, startingOffsets=json.dumps({topic: {"0": lo}}),
                    endingOffsets=json.dumps({topic: {"0": hi}}))
        apply_changes(spark, decode_changes(part), tmp_path, fmt)
        apply_changes(spark, decode_changes(part), tmp_path, fmt)
    assert_exact(toast, tmp_path, fmt)
    raw.unpersist()
