"""What execute-snapshot and stop-snapshot signals name, and a signal table row read as a signal (no services)."""

from __future__ import annotations

from typing import Any

import pytest

from pgcdc.capture.signals import SnapshotRequest, snapshot_request, stopped, table_signal

CAPTURED = ["public.b", "public.a", "public.ab", "inv.c"]
ORDER = {"inv.c": 0, "public.a": 1}  # a table.include.list's order; the rest after it, by name


def order(name: str) -> Any:
    return ORDER.get(name, len(ORDER)), name


@pytest.mark.parametrize(("data", "running", "expected"), [
    # data-collections match schema.table in full, in the order they are given, each table once
    ({"data-collections": ["public.a", "public\\..*"]}, [],
     SnapshotRequest(False, [("public.a", None, None), ("public.b", None, None), ("public.ab", None, None)])),
    ({"data-collections": ["public.a"], "type": "INCREMENTAL"}, [], SnapshotRequest(False, [("public.a", None, None)])),
    # tables an incremental snapshot already reads are not added again
    ({"data-collections": ["public.a.*"]}, ["public.a"], SnapshotRequest(False, [("public.ab", None, None)])),
    ({"data-collections": ["public.a"]}, ["public.a"], SnapshotRequest(False, [])),
    # the first additional condition whose pattern matches; the older single condition applies to every table
    ({"data-collections": ["public.a", "inv.c"], "surrogate-key": "k",
      "additional-conditions": [{"data-collection": "inv\\..*", "filter": "x > 1"},
                                {"data-collection": "inv.c", "filter": "x > 2"}]}, [],
     SnapshotRequest(False, [("public.a", None, "k"), ("inv.c", "x > 1", "k")])),
    ({"data-collections": ["public.a", "inv.c"], "additional-condition": "y = 0",
      "additional-conditions": [{"data-collection": "inv.c", "filter": "x > 1"}]}, [],
     SnapshotRequest(False, [("public.a", "y = 0", None), ("inv.c", "x > 1", None)])),
    # blocking: every table named (running or not), in the include list's order
    ({"type": "blocking", "data-collections": ["public.*", "inv.c"],
      "additional-conditions": [{"data-collection": "public.b", "filter": "SELECT * FROM public.b"}]}, ["public.a"],
     SnapshotRequest(True, [("inv.c", None, None), ("public.a", None, None), ("public.ab", None, None),
                            ("public.b", "SELECT * FROM public.b", None)])),
    # nothing asked for
    ({"data-collections": ["public.nope"]}, [], SnapshotRequest(False, [])),
    ({"type": "initial", "data-collections": ["public.a"]}, [], None),
    ({"data-collections": []}, [], None),
    ({"data-collections": "public.a"}, [], None),
    ({}, [], None),
])
def test_execute_snapshot_names_captured_tables(data: dict[str, Any], running: list[str],
                                                expected: SnapshotRequest | None) -> None:
    assert snapshot_request("sig", data, CAPTURED, running, order) == expected


@pytest.mark.parametrize(("data", "expected"), [
    ({}, ["public.a", "public.ab", "inv.c"]),
    ({"data-collections": []}, ["public.a", "public.ab", "inv.c"]),
    ({"data-collections": ["public.a"]}, ["public.a"]),
    ({"data-collections": ["public.a.*", "inv.c"]}, ["public.a", "public.ab", "inv.c"]),
    ({"data-collections": ["public.x"]}, []),
])
def test_stop_snapshot_names_running_tables(data: dict[str, Any], expected: list[str]) -> None:
    assert stopped(data, ["public.a", "public.ab", "inv.c"]) == expected


def test_signal_table_row_is_read_at_its_columns() -> None:
    assert table_signal(("x", "log", "id-1", '{"message": "m"}'), (2, 1, 3)) == ("id-1", "log", '{"message": "m"}')
    assert table_signal((b"id-2", "log", None), (0, 1, 2)) == ("id-2", "log", None)  # sent in binary format: bytes
    assert table_signal(("id-3", "log"), (0, 1, 2)) == ("id-3", "log", None)  # fewer columns than three
