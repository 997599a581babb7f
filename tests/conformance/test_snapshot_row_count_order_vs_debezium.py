"""snapshot.tables.order.by.row.count through the real Debezium 3.6 and pgcdc.

Debezium's PostgreSQL connector sorts the snapshot's tables by row count only on its chunked path
(snapshot.max.threads above 1): there each table's count is an exact COUNT(1). On the one-thread path no
count is known and the order stays the tables' own. With one thread the two outputs are compared record by
record; with two, Debezium's reader threads interleave tables that overlap in time, so the order of the tables'
first records is compared, and each table's records (markers included) in key order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import SNAPSHOT_FIELDS, assert_same, compare
from tests.conformance.test_debezium_streaming import run_both

SETUP = ("CREATE TABLE a_small (id int PRIMARY KEY); INSERT INTO a_small SELECT generate_series(1, 2);"
         "CREATE TABLE b_big (id int PRIMARY KEY); INSERT INTO b_big SELECT generate_series(1, 50);"
         "CREATE TABLE c_mid (id int PRIMARY KEY, v text);"
         "INSERT INTO c_mid SELECT g, 'x' FROM generate_series(1, 10) g;"
         "CREATE TABLE d_mid (id int PRIMARY KEY); INSERT INTO d_mid SELECT generate_series(1, 10)")
AFTER = ["INSERT INTO a_small VALUES (3)"]


def snapshot_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["value"] and r["value"]["payload"]["op"] == "r"]


def table_order(records: list[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for r in snapshot_records(records):
        if r["topic"] not in seen:
            seen.append(r["topic"])
    return seen


def by_table(records: list[dict[str, Any]], topic: str) -> list[dict[str, Any]]:
    rows = [r for r in snapshot_records(records) if r["topic"] == topic]
    return sorted(rows, key=lambda r: json.dumps(r["key"]["payload"], sort_keys=True))


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_one_thread_keeps_the_tables_order_as_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                       order: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"snapshot.tables.order.by.row.count": order}, AFTER,
                            snapshot=True)
    assert_same(f"row count order {order}, one thread", ours, theirs, snapshot=True)
    assert table_order(theirs) == [f"dbserver1.public.{t}" for t in ("a_small", "b_big", "c_mid", "d_mid")]


@pytest.mark.parametrize("order", ["ascending", "descending", "disabled"])
def test_chunked_snapshot_sorts_by_count_as_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                     order: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"snapshot.tables.order.by.row.count": order,
                                                          "snapshot.max.threads": "2"}, AFTER, snapshot=True)
    # c_mid and d_mid are the same size: they keep their order either way (a stable sort).
    expected = {"ascending": ["a_small", "c_mid", "d_mid", "b_big"],
                "descending": ["b_big", "c_mid", "d_mid", "a_small"],
                "disabled": ["a_small", "b_big", "c_mid", "d_mid"]}[order]
    assert table_order(theirs) == table_order(ours) == [f"dbserver1.public.{t}" for t in expected]
    problems = []
    for topic in table_order(theirs):
        problems += compare(by_table(ours, topic), by_table(theirs, topic), snapshot_fields=SNAPSHOT_FIELDS)
    streamed = [r for r in theirs if r["value"] is None or r["value"]["payload"]["op"] != "r"]
    problems += compare([r for r in ours if r["value"] is None or r["value"]["payload"]["op"] != "r"], streamed)
    print(f"row count order {order}, two threads: {len(theirs)} Debezium records, {len(ours)} pgcdc records, "
          f"{len(problems)} differences")
    assert len(theirs) == 2 + 50 + 10 + 10 + 1 and not problems, "\n".join(problems[:40])
