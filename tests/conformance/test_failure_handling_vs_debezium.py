"""`event.processing.failure.handling.mode` through the real Debezium 3.6 and pgcdc: a change whose values Debezium
cannot write (NaN in a NOT NULL numeric column, which a Connect decimal cannot carry and the required field refuses)
stops both connectors by default (`fail`, tests/conformance/test_not_null_vs_debezium.py); with `warn`, `skip` or
`ignore` both leave that change out and go on (EventDispatcher.handleEventProcessingFailure), in streaming and in
the initial snapshot. Compared record by record."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

SETUP = "CREATE TABLE nn (id int PRIMARY KEY, n numeric NOT NULL, m numeric(10,2), a numeric[] NOT NULL, note text)"
ROWS = [
    "INSERT INTO nn VALUES (1, 1.5, 1.25, '{1}', 'a')",
    "INSERT INTO nn VALUES (2, 'NaN', 'NaN', '{1}', 'b')",  # Debezium cannot write it
    "INSERT INTO nn VALUES (3, 2.5, 0, '{1,NaN}', 'c')",  # nor this one (an array element)
    "INSERT INTO nn VALUES (4, 'Infinity', 1, '{2}', 'd'), (5, 3.5, 2, '{3}', 'e')",
]
WORKLOAD = [
    *ROWS,
    "UPDATE nn SET note = 'x' WHERE id IN (1, 2)",
    "UPDATE nn SET n = 4.5 WHERE id = 2",  # writable again
    "DELETE FROM nn WHERE id = 4",  # the old key only: nothing to convert
]


@pytest.mark.parametrize("mode", ["warn", "skip", "ignore"])
def test_a_change_debezium_cannot_write_is_left_out_in_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                                  mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"event.processing.failure.handling.mode": mode},
                            WORKLOAD)
    assert_same(f"event.processing.failure.handling.mode={mode}, streaming", ours, theirs)
    ids = [(r["value"]["payload"]["op"], (r["value"]["payload"]["after"] or r["value"]["payload"]["before"])["id"])
           for r in theirs if r["value"] is not None]
    assert ("c", "2") not in ids and ("c", "5") in ids and ("u", "2") in ids


# The rows of the snapshot: some in the middle fail; or the table's last row does (which the markers show:
# `last_in_data_collection`, and `last` for the snapshot's last record), with a second table after it or not.
SNAPSHOTS = {
    "middle": ROWS,
    "first_row": ["INSERT INTO nn VALUES (0, 'NaN', 0, '{0}', 'y')", *ROWS],
    "first_row_of_a_second_table": ["CREATE TABLE aa (id int PRIMARY KEY); INSERT INTO aa VALUES (1)",
                                    "INSERT INTO nn VALUES (0, 'NaN', 0, '{0}', 'y')", *ROWS],
    "last_row": [*ROWS, "INSERT INTO nn VALUES (9, 'NaN', 9, '{9}', 'z')"],
    "last_row_then_table": [*ROWS, "INSERT INTO nn VALUES (9, 'NaN', 9, '{9}', 'z')",
                            "CREATE TABLE zz (id int PRIMARY KEY); INSERT INTO zz VALUES (1), (2)"],
}


@pytest.mark.parametrize("rows", sorted(SNAPSHOTS))
def test_a_row_debezium_cannot_write_is_left_out_of_the_snapshot(pg: PostgresCluster, dbname: str,
                                                                 tmp_path: Path, rows: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([SETUP, *SNAPSHOTS[rows]]),
                            {"event.processing.failure.handling.mode": "warn"},
                            ["INSERT INTO nn VALUES (6, 6.5, 6, '{6}', 'f')"], snapshot=True)
    assert_same(f"event.processing.failure.handling.mode=warn, snapshot, {rows}", ours, theirs, snapshot=True)
