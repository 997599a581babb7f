"""The streaming hot path's shortcuts write exactly what their general paths write (hypothesis over names,
values and transaction state): value templates against the envelope dict, compiled rows against the
per-column rule."""

from __future__ import annotations

import itertools
from contextlib import ExitStack
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from pgcdc.capture.changes import ChangeCapture
from pgcdc.envelope.source import context_headers
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import UNCHANGED_TOAST
from pgcdc.protocol import messages as m

# Names and text as they may come from PostgreSQL: any character but NUL, including '%', quotes,
# backslashes, control characters, non-ASCII and astral ones (which Jackson writes as surrogate escapes).
names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12)
values = st.one_of(st.none(), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                                      max_size=20))
lsns = st.integers(1, 2**63)
COLUMNS = (("id", "int8", True), ("body", "text", False), ("at", "timestamptz", False), ("n", "numeric", False))


class Recording:
    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append((topic, key, value, list(headers or ()), partition))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _capture(prefix: str, db: str, schema: str, table: str, tx_metadata: bool, sink: Recording) -> ChangeCapture:
    specs = [ColumnSpec(name, type_name, type_name, -1 if type_name != "numeric" else ((12 << 16) | 2) + 4, nn)
             for name, type_name, nn in COLUMNS]

    def lookup(rel: m.Relation) -> TableEvents:
        return TableEvents(rel.namespace, rel.name, specs, ("id",), EnvelopeSettings(prefix, Modes()))

    return ChangeCapture(sink=sink, tables=lookup, topic_prefix=prefix, database=db,
                         skipped_operations=frozenset(), tombstones_on_delete=True,
                         transaction_metadata=tx_metadata, context_headers=context_headers(prefix, "run", True))


def _run(messages: list[tuple[Any, int]], with_templates: bool, *args: Any) -> list[tuple[Any, ...]]:
    sink = Recording()
    capture = _capture(*args, sink=sink)
    clock = itertools.count(1_700_000_000_000_000_000, 1_234_567)
    with ExitStack() as stack:
        stack.enter_context(mock.patch("pgcdc.capture.changes.time.time_ns", lambda: next(clock)))
        if not with_templates:  # an empty template: the envelope dict serialized per event
            stack.enter_context(mock.patch.object(ChangeCapture, "_template", lambda self, t: b""))
        for msg, lsn in messages:
            capture.handle(msg, lsn)
    if with_templates:  # the template path really ran
        assert capture._templates and all(capture._templates.values())
    return sink.records


@settings(max_examples=300, deadline=None)
@given(prefix=names, db=names, schema=names, table=names, tx_metadata=st.booleans(),
       rows=st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), values, st.sampled_from(("I", "U", "D"))),
                     min_size=1, max_size=6),
       lsns=st.lists(lsns, min_size=2, max_size=2), xid=st.integers(1, 2**32 - 1),
       commit_ts=st.integers(0, 2**52), message_first=st.booleans())
def test_template_writes_the_envelope_dict_bytes(prefix: str, db: str, schema: str, table: str,
                                                tx_metadata: bool, rows: list[tuple[int, str | None, str]],
                                                lsns: list[int], xid: int, commit_ts: int,
                                                message_first: bool) -> None:
    cols = tuple(m.Column(1 if key else 0, name, 0, -1) for name, _, key in COLUMNS)
    msgs: list[tuple[Any, int]] = []
    if message_first:  # a non-transactional message moves the last commit LSN (source.sequence)
        msgs.append((m.LogicalMessage(None, False, lsns[0], "p", b"x"), lsns[0]))
    for txn in range(2):  # a second transaction: the per-transaction fields change, the table template stays
        msgs.append((m.Begin(lsns[1] + txn, commit_ts + txn, xid + txn), lsns[1]))
        msgs.append((m.Relation(None, 16384, schema, table, "f", cols), lsns[1]))
        for i, (ident, body, op) in enumerate(rows):
            new = (str(ident), body, "2024-01-02 03:04:05.5+00", "12.50")
            old = (str(ident), "old" if body is None else body, None, "-0.01")
            msg: Any = (m.Insert(None, 16384, new) if op == "I" else m.Update(None, 16384, old, "O", new)
                        if op == "U" else m.Delete(None, 16384, old, "O"))
            msgs.append((msg, lsns[1] + i))
        msgs.append((m.Commit(0, lsns[1] + txn, lsns[1] + txn + 100, commit_ts + txn), lsns[1]))
    args = (prefix, db, schema, table, tx_metadata)
    assert _run(msgs, True, *args) == _run(msgs, False, *args)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(names, st.sampled_from(("text", "int4", "bool"))), min_size=1, max_size=8,
                unique_by=lambda c: c[0]),
       st.data())
def test_compiled_row_is_the_per_column_rule(columns: list[tuple[str, str]], data: st.DataObject) -> None:
    specs = [ColumnSpec(name, type_name, type_name, -1, i % 2 == 0) for i, (name, type_name) in enumerate(columns)]
    t = TableEvents("s", "t", specs, (), EnvelopeSettings("p", Modes()))
    text_of = {"text": st.text(max_size=5), "int4": st.integers().map(str), "bool": st.sampled_from(("t", "f"))}
    row = [data.draw(st.one_of(st.none(), st.just(UNCHANGED_TOAST), text_of[type_name])) for _, type_name in columns]
    for key_only in (False, True):
        nulls = t.absent if key_only else t.nulls
        expected = {name: (null if v is None else ph if v is UNCHANGED_TOAST else v if fn is None else fn(v))
                    for name, fn, ph, null, v in zip(t.names, t.fns, t.placeholders, nulls, row)}
        assert t.row(row, 0, key_only) == expected
