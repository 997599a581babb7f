"""Debezium's records for the tables these recordings add to tests/data/debezium's: `floats.jsonl`, a table of
floats and empty values (-0.0, NaN, the infinities, the largest and smallest floats, empty strings, bytes and
arrays, nulls), and `shape.jsonl`, a table changing shape between its records (a column added, one dropped, then
back to its first shape, with ALTER TABLE between inserts and updates). Written by
tests/data/debezium/capture.py's `capture` (Debezium 3.6.3 through tests/conformance/oracle.py, streaming a slot
made before the workload) into this folder. Run from the repository root:

    .venv/bin/python tests/data/apicurio_cloudevents/inputs/capture.py [floats|shape]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root
sys.path.insert(0, str(HERE.parents[1] / "debezium"))

from capture import Scenario, Step, capture  # noqa: E402

from pgcdc.local import PostgresCluster  # noqa: E402

SETUP = ["CREATE TABLE floats (id int PRIMARY KEY, r real, d float8, t text, b bytea, n numeric, da float8[], "
         "ta text[])"]
STEPS = [
    Step("negative zeros and empty values", ["INSERT INTO floats VALUES (1, '-0', '-0', '', '', 0, "
                                             "'{-0,0}', '{\"\"}')"]),
    Step("NaN", ["INSERT INTO floats VALUES (2, 'NaN', 'NaN', NULL, NULL, 'NaN', '{NaN}', '{NULL}')"]),
    Step("infinities", ["INSERT INTO floats VALUES (3, 'Infinity', '-Infinity', ' ', '\\x00', '-0.0', "
                        "'{Infinity,-Infinity}', '{}')"]),
    Step("largest", ["INSERT INTO floats VALUES (4, '3.4028235e38', '1.7976931348623157e308', 'x', NULL, "
                     "'1e-20', '{-1.7976931348623157e308}', NULL)"]),
    Step("smallest", ["INSERT INTO floats VALUES (5, '1.4e-45', '4.9e-324', NULL, NULL, NULL, "
                      "'{2.2250738585072014e-308}', NULL)"]),
    Step("all null", ["INSERT INTO floats (id) VALUES (6)"]),
    Step("update to -0", ["UPDATE floats SET r = '-0', d = '-0' WHERE id = 2"]),
    Step("delete", ["DELETE FROM floats WHERE id = 3"]),
]
SHAPE_SETUP = ["CREATE TABLE shape (id int PRIMARY KEY, a text)"]
SHAPE_STEPS = [
    Step("first shape", ["INSERT INTO shape VALUES (1, 'x')"]),
    Step("column added", ["ALTER TABLE shape ADD COLUMN w int", "INSERT INTO shape VALUES (2, 'y', 7)"]),
    Step("update in the second shape", ["UPDATE shape SET w = 8 WHERE id = 1"]),
    Step("column dropped", ["ALTER TABLE shape DROP COLUMN a", "INSERT INTO shape VALUES (3, 9)"]),
    Step("back to the first shape", ["ALTER TABLE shape DROP COLUMN w", "ALTER TABLE shape ADD COLUMN a text",
                                     "INSERT INTO shape VALUES (4, 'z')"]),
    Step("delete", ["DELETE FROM shape WHERE id = 2"]),
]


def main() -> None:
    scenarios = [Scenario("floats", "floats", SETUP, STEPS, folder=HERE),
                 Scenario("shape", "shape", SHAPE_SETUP, SHAPE_STEPS, folder=HERE)]
    only = set(sys.argv[1:])  # scenario names to capture again; all when none are given
    with PostgresCluster() as pg, tempfile.TemporaryDirectory(prefix="dbz-inputs-") as tmp:
        for sc in scenarios:
            if only and sc.name not in only:
                continue
            capture(pg, sc, Path(tmp))
            for step in sc.steps:
                print(sc.name, step.label, step.outcome or "committed")


if __name__ == "__main__":
    main()
