"""Tables without a primary key, keyed (as Debezium keys them) by a unique index: the rows whose key columns hold
values land exactly; a record whose key has a NULL (a unique index lets several rows hold one) is quarantined
with the column's name instead of merged with other rows sharing that key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.spark import apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.verify import VerifyError, verify
from tests.spark.conftest import run_capture
from tests.spark.test_end_to_end import read_all

SETUP = [
    "CREATE TABLE one (a int, b text, v int); CREATE UNIQUE INDEX one_a ON one (a);"
    "ALTER TABLE one REPLICA IDENTITY FULL",
    "CREATE TABLE two (a int NOT NULL, b int, v text); CREATE UNIQUE INDEX two_ab ON two (a, b);"
    "ALTER TABLE two REPLICA IDENTITY FULL",
    "CREATE TABLE three (a bigint NOT NULL, b text); CREATE UNIQUE INDEX three_a ON three (a);"
    "ALTER TABLE three REPLICA IDENTITY USING INDEX three_a",
    "CREATE TABLE sentinel (id int PRIMARY KEY)",
]
SNAPSHOT = [
    "INSERT INTO one VALUES (1, 'x', 1), (NULL, 'n1', 2), (NULL, 'n2', 3), (-2147483648, 'min', 4),"
    " (2147483647, 'max', 5)",
    "INSERT INTO two VALUES (1, 1, 'a'), (1, NULL, 'b'), (1, NULL, 'c'), (2, 0, 'd')",
    "INSERT INTO three VALUES (-9223372036854775808, 'min'), (9223372036854775807, 'max'), (0, '')",
]
STREAM = [
    "INSERT INTO one VALUES (NULL, 'n3', 6), (7, NULL, NULL)",
    "UPDATE one SET v = 10 WHERE a = 1",
    "UPDATE one SET a = 8 WHERE b = 'n1'",  # a NULL key becomes a value: delete (null key), create (key 8)
    "DELETE FROM one WHERE a = 2147483647",
    "INSERT INTO two VALUES (3, NULL, 'e'), (3, 3, 'f')",
    "UPDATE two SET v = 'g' WHERE a = 2",
    "DELETE FROM two WHERE a = 1 AND b = 1",
    "INSERT INTO three VALUES (5, NULL)",
    "UPDATE three SET a = 6 WHERE a = 0",
    "INSERT INTO sentinel VALUES (1)",
]


def test_null_keys_are_quarantined_not_merged(spark: SparkSession, pg: PostgresCluster, broker: KafkaBroker,
                                              tmp_path: Path) -> None:
    capture = run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, ("one", "two", "three"))
    decoded = decode_changes(read_all(spark, capture))
    reasons = apply_changes(spark, decoded, tmp_path, "parquet")
    why = "is null: a unique index that allows NULL does not name one row (the table has no primary key)"
    # one: 2 snapshot rows, 1 insert, the key change's delete and tombstone; two: 2 snapshot rows, 1 insert
    assert reasons == {f"key column a {why}": 5, f"key column b {why}": 3}
    one = {r["a"]: (r["b"], r["v"]) for r in read_table(spark, table_path(tmp_path, capture.topics["one"]),
                                                           "parquet").collect()}
    assert one == {1: ("x", 10), 8: ("n1", 2), -2147483648: ("min", 4), 7: (None, None)}
    two = {(r["a"], r["b"]): r["v"] for r in read_table(spark, table_path(tmp_path, capture.topics["two"]),
                                                         "parquet").collect()}
    assert two == {(2, 0): "g", (3, 3): "f"}
    rows = {tuple(r) for r in pg.execute("SELECT a, b, v FROM one WHERE a IS NOT NULL", capture.dbname)}
    assert rows == {(a, *bv) for a, bv in one.items()}
    # pgcdc verify matches rows by the same key: a NOT NULL unique index's table is exact; a nullable one is refused
    report = verify(capture.dsn, "public.three", table_path(tmp_path, capture.topics["three"]), "parquet")
    assert report.ok, report.text()
    for table, columns in (("one", "a"), ("two", "b")):
        with pytest.raises(VerifyError) as err:
            verify(capture.dsn, f"public.{table}", table_path(tmp_path, capture.topics[table]), "parquet")
        assert str(err.value) == (f"public.{table} is keyed by a unique index whose columns allow NULL ({columns}): "
                                  "rows with NULL there cannot be matched by it")
