"""pgcdc's conversions against Debezium's own records, without services: the golden captures in
tests/data/debezium/types hold what Debezium 3.6 wrote and, in `<scenario>.pgtext.json`, the same rows as
PostgreSQL's output text (what pgoutput sends) with the columns as pgcdc's catalog reads them (capture.py writes
both).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pgcdc.envelope.jsontext import jackson, needs_jackson
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from tests.conformance.compare import Num

GOLDEN = Path(__file__).parent.parent / "data" / "debezium" / "types"
MODES = {
    "types_geometric": Modes(include_unknown=True),
    "types_postgis": Modes(),
    "types_bc": Modes(),
    "types_bc_isostring": Modes(time="isostring"),
}


def parse(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Num, parse_int=Num)


def records(name: str) -> list[str]:
    """The golden file's lines (split on newlines only: U+2028 and friends are part of the values)."""
    return [line for line in (GOLDEN / f"{name}.jsonl").read_text().split("\n") if line.strip()]


def table_events(name: str) -> tuple[TableEvents, dict[str, list[str | None]]]:
    text = json.loads((GOLDEN / f"{name}.pgtext.json").read_text())
    columns = [ColumnSpec(c["name"], c["type_name"], c["base_type_name"], c["type_modifier"], c["not_null"],
                          None, c["enum_labels"]) for c in text["columns"]]
    events = TableEvents("public", text["table"], columns, ("id",), EnvelopeSettings("dbserver1", MODES[name]))
    return events, {row[0]: row for row in text["rows"]}


@pytest.mark.parametrize("name", sorted(MODES))
def test_values_and_schemas_match_debezium(name: str) -> None:
    events, rows = table_events(name)
    ours_schema = parse(events.value_wrap.prefix + b"null}")["schema"]["fields"][1]
    checked = 0
    for line in records(name):
        value = parse(line)["value"]
        if value is None or value["payload"]["op"] != "c":
            continue
        theirs = value["payload"]["after"]
        ours = parse(orjson.dumps(events.row(rows[str(theirs["id"])], 0)))
        assert ours == theirs, f"{name} id {theirs['id']}"
        assert ours_schema == value["schema"]["fields"][1]
        checked += 1
    assert checked >= 3


def raw_key_value(line: bytes) -> tuple[bytes, bytes]:
    key_at = line.index(b',"key":') + 7
    value_at = line.index(b',"value":', key_at)
    return line[key_at:value_at], line[value_at + 9:line.rindex(b',"headers":')]


def test_json_text_is_jacksons_byte_for_byte() -> None:
    """Every key and value of the json_text capture, parsed and written again by orjson + jackson(), gives
    Debezium's bytes back (surrogate escapes, upper-case control escapes, raw U+2028...)."""
    lines = [line for line in (GOLDEN / "json_text.jsonl").read_bytes().split(b"\n") if line.strip()]
    rewritten = 0
    for line in lines:
        for raw in raw_key_value(line):
            ours = orjson.dumps(json.loads(raw))
            if needs_jackson(ours):
                ours = jackson(ours)
                rewritten += 1
            assert ours == raw
    assert rewritten >= 5


@pytest.mark.parametrize(("text", "jackson_json"), [
    ("🎉", b'"\\uD83C\\uDF89"'), ("\U0010ffff", b'"\\uDBFF\\uDFFF"'), ("\x01\x0b\x1f", b'"\\u0001\\u000B\\u001F"'),
    ("\\u001f", b'"\\\\u001f"'), ("\x7f\u2028/é", '"\x7f\u2028/é"'.encode()), ("\t\n", b'"\\t\\n"'),
])
def test_jackson_rewrites(text: str, jackson_json: bytes) -> None:
    data = orjson.dumps(text)
    assert (jackson(data) if needs_jackson(data) else data) == jackson_json
