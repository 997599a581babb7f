"""xmin.fetch.interval.ms: when the slot's xmin is read (Debezium's fixed grid of instants), and that a value
changing in the middle of a transaction reaches `source.xmin` of the next events on the template path exactly
as on the dict path, and the stored position."""

from __future__ import annotations

import itertools
import json
from contextlib import ExitStack
from typing import Any
from unittest import mock

from pgcdc.capture.changes import ChangeCapture
from pgcdc.capture.slot_xmin import SlotXmin
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import messages as m
from tests.unit.test_value_template import Recording


class FakeConn:
    def __init__(self, values: list[Any]) -> None:
        self.values = iter(values)
        self.queries = 0

    def execute(self, query: str, params: Any = None) -> Any:
        self.queries += 1
        value = next(self.values)
        return mock.Mock(fetchone=lambda: None if value is ... else (value,))


def test_read_on_the_first_message_then_on_the_interval_grid() -> None:
    now = [10.0]
    conn = FakeConn(["700", "701", None, ..., "703"])
    xmin = SlotXmin(conn, "s", "db", 1000, clock=lambda: now[0])  # type: ignore[arg-type]
    assert xmin.get() == 700 and conn.queries == 1  # no value yet: read at once
    now[0] = 10.9
    assert xmin.get() == 700 and conn.queries == 1
    now[0] = 11.0  # the first instant of the grid (start + 1 s)
    assert xmin.get() == 701 and conn.queries == 2
    now[0] = 11.5
    assert xmin.get() == 701 and conn.queries == 2
    now[0] = 14.2  # several instants later: one read, and the next instant is 15.0, not 15.2
    assert xmin.get() == 0 and conn.queries == 3  # a NULL catalog_xmin reads as 0, as JDBC's getLong
    now[0] = 14.99
    assert xmin.get() == 0 and conn.queries == 3
    now[0] = 15.0
    assert xmin.get() is None and conn.queries == 4  # no slot row: no value, read again at the next message
    assert xmin.get() == 703 and conn.queries == 5


class Values:
    """A SlotXmin whose reads give these values, one per message."""

    def __init__(self, values: list[int]) -> None:
        self.values = iter(values)

    def get(self) -> int | None:
        return next(self.values)


def run(with_templates: bool) -> tuple[list[Any], Any]:
    specs = [ColumnSpec("id", "int8", "int8", -1, True), ColumnSpec("v", "text", "text", -1, False)]
    sink = Recording()
    capture = ChangeCapture(
        sink=sink, tables=lambda rel: TableEvents(rel.namespace, rel.name, specs, ("id",),
                                                  EnvelopeSettings("p", Modes())),
        topic_prefix="p", database="db", skipped_operations=frozenset(), tombstones_on_delete=True,
        transaction_metadata=False, slot_xmin=Values([5, 5, 5, 6, 6, 6, 7, 7, 7]))  # type: ignore[arg-type]
    cols = (m.Column(1, "id", 20, -1), m.Column(0, "v", 25, -1))
    msgs: list[Any] = [
        (m.Begin(200, 1, 42), 100), (m.Relation(None, 1, "public", "t", "d", cols), 100),
        (m.Insert(None, 1, ("1", "a")), 110), (m.Insert(None, 1, ("2", "b")), 120),  # 5, 5
        (m.Insert(None, 1, ("3", "c")), 130), (m.Insert(None, 1, ("4", "d")), 140),  # 6, 6
        (m.Commit(0, 200, 210, 1), 200),  # 6
        (m.Begin(300, 2, 43), 300), (m.Insert(None, 1, ("5", "e")), 310), (m.Commit(0, 300, 310, 2), 300),  # 7
    ]
    clock = itertools.count(1_700_000_000_000_000_000, 1_000)
    with ExitStack() as stack:
        stack.enter_context(mock.patch("pgcdc.capture.changes.time.time_ns", lambda: next(clock)))
        if not with_templates:
            stack.enter_context(mock.patch.object(ChangeCapture, "_template", lambda self, t: b""))
        positions = []
        for msg, lsn in msgs:
            capture.handle(msg, lsn)
            if isinstance(msg, m.Commit):
                positions.append(capture.position)
    return sink.records, positions


def test_a_new_value_reaches_the_next_events_on_both_paths() -> None:
    templated, positions = run(True)
    assert templated == run(False)[0]
    xmins = [json.loads(r[2])["payload"]["source"]["xmin"] for r in templated]
    assert xmins == [5, 5, 6, 6, 7]
    assert [p.xmin for p in positions] == [6, 7]
    assert list(positions[0].to_offset())[:2] == ["lsn_proc", "xmin"]
