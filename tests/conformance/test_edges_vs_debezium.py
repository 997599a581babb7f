"""Edges compared with the real Debezium 3.6: snapshot markers of one-row and empty tables, transactions whose
only changes are skipped truncates with transaction metadata, and column rules (mask, truncate, hash) on a
TOASTed value an update leaves unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import BIG, run_both
from tests.conformance.test_snapshot_modes import snapshot_only

# Tables are snapshotted in name order; each layout puts one-row and empty tables first, between and last.
MARKER_LAYOUTS = {
    "one_row_tables_between_empty": (
        "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE c (id int PRIMARY KEY);"
        "CREATE TABLE d (id int PRIMARY KEY); CREATE TABLE e (id int PRIMARY KEY); CREATE TABLE f (id int PRIMARY KEY);"
        "CREATE TABLE g (id int PRIMARY KEY);"
        "INSERT INTO a VALUES (1); INSERT INTO c VALUES (1); INSERT INTO d VALUES (1), (2); INSERT INTO f VALUES (1)"
    ),
    "single_row": "CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a VALUES (1)",
    "empty_first_one_row_last": (
        "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE c (id int PRIMARY KEY);"
        "INSERT INTO b VALUES (1), (2), (3); INSERT INTO c VALUES (1)"
    ),
    "two_rows_then_one_row_no_pk": (
        "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (x int); CREATE TABLE c (id int PRIMARY KEY);"
        "INSERT INTO a VALUES (1), (2); INSERT INTO b VALUES (1)"
    ),
}


@pytest.mark.parametrize("layout", sorted(MARKER_LAYOUTS))
def test_snapshot_markers_of_one_row_and_empty_tables(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                       layout: str) -> None:
    ours, theirs = snapshot_only(pg, dbname, tmp_path, MARKER_LAYOUTS[layout], {"snapshot.mode": "initial_only"})
    assert_same(layout, ours, theirs, snapshot=True)


TRUNCATE_SETUP = "CREATE TABLE tr (id int PRIMARY KEY); CREATE TABLE other (id int PRIMARY KEY)"
TRUNCATE_WORKLOAD = [
    "INSERT INTO tr VALUES (1)",
    "TRUNCATE tr",
    "BEGIN; TRUNCATE tr; TRUNCATE other; COMMIT",
    "TRUNCATE tr, other",
    "BEGIN; INSERT INTO tr VALUES (2); TRUNCATE other; COMMIT",
    "BEGIN; TRUNCATE other; INSERT INTO tr VALUES (3); COMMIT",
    "INSERT INTO other VALUES (1)",
    "SELECT pg_logical_emit_message(true, 'm', 'after')",
]


# skipped.operations set explicitly puts `publish = ...` on Debezium's publication, so PostgreSQL never sends it
# a transaction of skipped changes only; the default `t` is dropped after decoding, and such a transaction
# still begins and ends (BEGIN and an END with event_count 0) and counts for source.sequence.
TRUNCATE_CASES = {
    "default_metadata": {"provide.transaction.metadata": "true"},
    "default_metadata_one_table": {"provide.transaction.metadata": "true", "table.include.list": "public.tr"},
    "explicit_t_metadata": {"provide.transaction.metadata": "true", "skipped.operations": "t"},
    "explicit_t": {"skipped.operations": "t"},
    "explicit_c_metadata": {"provide.transaction.metadata": "true", "skipped.operations": "c"},
}


@pytest.mark.parametrize("case", sorted(TRUNCATE_CASES))
def test_transactions_of_skipped_truncates(pg: PostgresCluster, dbname: str, tmp_path: Path, case: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, TRUNCATE_SETUP, TRUNCATE_CASES[case], TRUNCATE_WORKLOAD)
    assert_same(f"truncates, {case}", ours, theirs)


TOAST_SETUP = (
    "CREATE TABLE tc (id int PRIMARY KEY, n int, n2 int, masked text, cut text, hashed text, hashed2 varchar(20000),"
    " bymask bytea, plain text);"
    "ALTER TABLE tc ALTER COLUMN masked SET STORAGE EXTERNAL, ALTER COLUMN cut SET STORAGE EXTERNAL,"
    " ALTER COLUMN hashed SET STORAGE EXTERNAL, ALTER COLUMN hashed2 SET STORAGE EXTERNAL,"
    " ALTER COLUMN bymask SET STORAGE EXTERNAL, ALTER COLUMN plain SET STORAGE EXTERNAL"
)
TOAST_WORKLOAD = [
    f"INSERT INTO tc VALUES (1, 0, 7, '{BIG}', '{BIG}', '{BIG}', '{BIG}', convert_to('{BIG}', 'UTF8'), '{BIG}')",
    "UPDATE tc SET n = 1",
    "UPDATE tc SET n = 2, masked = 'short', cut = 'shortish'",
    "DELETE FROM tc",
]
TOAST_RULES = {
    "column.mask.with.6.chars": "public.tc.masked,public.tc.bymask,public.tc.n2",
    "column.truncate.to.4.chars": "public.tc.cut",
    "column.mask.hash.SHA-256.with.salt.salty": "public.tc.hashed",
    "column.mask.hash.v2.MD5.with.salt.pepper": "public.tc.hashed2",
}


@pytest.mark.parametrize("identity", ["DEFAULT", "FULL"])
def test_column_rules_on_unchanged_toasted_values(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                  identity: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, TOAST_SETUP + f"; ALTER TABLE tc REPLICA IDENTITY {identity}",
                            TOAST_RULES, TOAST_WORKLOAD)
    assert_same(f"column rules on TOAST, {identity}", ours, theirs)
