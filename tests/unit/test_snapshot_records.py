"""Snapshot records made in bulk (capture/snapshot_records.py) are the bytes the per-row dict path writes."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from pgcdc.capture.snapshot_records import MARKERS, TableRecords, source_block
from pgcdc.envelope.columns import ColumnRules
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import ConversionError
from pgcdc.pgtypes import Modes

NUMERIC_12_2 = ((12 << 16) | 2) + 4
COLUMNS = [
    ColumnSpec("id", "int8", "int8", -1, True),
    ColumnSpec("a", "int4", "int4", -1, False),
    ColumnSpec("b", "text", "text", -1, False),
    ColumnSpec("c", "numeric", "numeric", NUMERIC_12_2, False),
    ColumnSpec("d", "float8", "float8", -1, False),
    ColumnSpec("e", "bool", "bool", -1, True),  # NOT NULL: a null (an override's row) becomes false
    ColumnSpec("f", "timestamptz", "timestamptz", -1, False),
    ColumnSpec("g", "jsonb", "jsonb", -1, False),
]
ROWS = [
    ("1", "7", "plain", "0.14", "1.5", "t", "2026-11-23 15:21:37.777686+00", '{"k": 1}'),
    ("2", None, None, None, None, None, None, None),
    ("3", "-2147483648", "emoji \U0001f389 and \x1f control", "-9999999999.99", "-0", "f",
     "infinity", '{"s": "\\u001f"}'),
    ("4", "0", "quote \" backslash \\ slash / % percent", "NaN", "1e-300", "t", "1970-01-01 00:00:00+00", "[]"),
    ("5", "1", "\U0001f600" * 3, "12.00", "NaN", "f", "2000-02-29 23:59:59.5+00", "null"),
]
SETTINGS = EnvelopeSettings("srv", Modes(snapshot=True))


# The same columns with DEFAULTs (replace.null.with.default puts them in place of the rows' nulls).
WITH_DEFAULTS = [dataclasses.replace(c, default=d) for c, d in zip(COLUMNS, (
    None, "5", "'x'::text", "1.5", "2.5", "true", "now()", "'{}'::jsonb"))]


def _events(settings: EnvelopeSettings = SETTINGS, pk: tuple[str, ...] = ("id",), table: str = "t",
            columns: list[ColumnSpec] = COLUMNS) -> TableEvents:
    return TableEvents("public", table, columns, pk, settings)


def _expected(events: TableEvents, row: tuple[str | None, ...], marker: str, ts_ns: int) -> tuple[bytes | None, bytes]:
    after = events.row(row, 0)
    source = source_block(prefix="srv", database="db", schema=events.schema, table=events.table, lsn=42, xid=7,
                          ts_us=1_700_000_000_000_000, marker=marker)
    return events.key(after), events.value({
        "before": None, "after": after, "source": source, "transaction": None, "op": "r",
        "ts_ms": ts_ns // 1_000_000, "ts_us": ts_ns // 1000, "ts_ns": ts_ns})


CASES = {
    "schemas on": _events(),
    "schemas off": _events(dataclasses.replace(SETTINGS, key_schemas=False, value_schemas=False)),
    "no primary key": _events(pk=()),
    "composite key": _events(pk=("a", "id")),
    "non-ASCII names": _events(dataclasses.replace(SETTINGS, topic_prefix="srv"), table="t\U0001f389é"),
    "masked column": _events(dataclasses.replace(SETTINGS, column_rules=ColumnRules.from_properties(
        [], [], {"column.mask.with.3.chars": "public.t.b"}))),
    "excluded column": _events(dataclasses.replace(SETTINGS, column_rules=ColumnRules.from_properties(
        [], ["public.t.g"], {}))),
    "null defaults replaced": _events(pk=("id", "a", "b"), columns=WITH_DEFAULTS),
    "null defaults kept": _events(dataclasses.replace(SETTINGS, value_null_defaults=False, key_null_defaults=False),
                                  pk=("id", "a", "b"), columns=WITH_DEFAULTS),
    "null defaults kept in values only": _events(dataclasses.replace(SETTINGS, value_null_defaults=False),
                                                 pk=("id", "a", "b"), columns=WITH_DEFAULTS),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("marker", MARKERS)
def test_bulk_records_are_the_dict_paths_bytes(name: str, marker: str) -> None:
    events = CASES[name]
    rows = [r[:len(events.names)] if events.keep is None else tuple(r[i] for i in events.keep) for r in ROWS]
    records = TableRecords(events, prefix="srv", database="db", lsn=42, xid=7, ts_us=1_700_000_000_000_000)
    afters, keys = records.render(rows)
    assert len(afters) == len(keys) == len(rows)
    for row, after, key in zip(rows, afters, keys, strict=True):
        value = records.value(after, marker)
        doc = orjson.loads(value)
        payload = doc["payload"] if events.value_wrap.with_schema else doc
        assert (key, value) == _expected(events, row, marker, payload["ts_ns"])


def test_templates_are_used_where_they_can_be() -> None:
    records = TableRecords(_events(), prefix="srv", database="db", lsn=42, xid=7, ts_us=1)
    assert records.templates is not None and set(records.templates) == set(MARKERS)
    assert records.key_template is not None


def test_a_value_that_does_not_convert_names_its_column() -> None:
    records = TableRecords(_events(), prefix="srv", database="db", lsn=42, xid=7, ts_us=1)
    with pytest.raises(ConversionError, match=r"public\.t\.a \(int4\) value 'x'"):
        records.render([ROWS[0], ("9", "x", None, None, None, "t", None, None)])


@pytest.mark.parametrize(("pk", "row"), [(("id",), "row (id)=(9)"), (("a", "id"), "row (a, id)=(7, 9)"), ((), "")])
def test_a_not_null_value_debezium_nulls_stops_naming_the_snapshot_row(pk: tuple[str, ...], row: str) -> None:
    # Measured on Debezium 3.6 (tests/conformance/test_not_null_vs_debezium.py): its initial snapshot stops on such
    # a value as streaming does. A snapshot row has no LSN of its own: the line names its key and the snapshot's LSN.
    columns = [ColumnSpec("id", "int8", "int8", -1, True), ColumnSpec("a", "int4", "int4", -1, False),
               ColumnSpec("o", "numeric", "numeric", -1, False), ColumnSpec("n", "numeric", "numeric", -1, True)]
    records = TableRecords(_events(pk=pk, columns=columns), prefix="srv", database="db", lsn=0x16_B374D848, xid=7,
                           ts_us=1)
    afters, _ = records.render([("1", "7", "NaN", "1.5")])  # the nullable twin is null
    assert orjson.loads(afters[0])["o"] is None
    for special in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ConversionError) as err:
            records.render([("1", "7", "1.5", "1.5"), ("9", "7", special, special)])
        where = f"in the initial snapshot for LSN 16/B374D848{', ' if row else ''}{row}"
        assert str(err.value).startswith(f"cannot convert public.t.n (numeric) value '{special}' {where}: a NOT NULL")
        assert "\n" not in str(err.value)
