"""Infinite, extreme, BC and 24:00 temporal values and huge intervals against what Debezium 3.6 wrote for them,
in a snapshot (`op: r`, JDBC) and in streaming (`op: c`, pgoutput text), in every time.precision.mode and
interval.handling.mode. The captures (tests/data/debezium/types/extreme_*) come from capture.py; the rows and
modes are tests/conformance/test_extreme_values.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from tests.conformance.compare import Num
from tests.conformance.test_extreme_values import EXT_MODES

GOLDEN = Path(__file__).parent.parent / "data" / "debezium" / "types"


def parse(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Num, parse_int=Num)


def modes(mode: str, snapshot: bool) -> Modes:
    props = EXT_MODES[mode]
    return Modes(time=props.get("time.precision.mode", "adaptive"),
                 interval=props.get("interval.handling.mode", "numeric"), snapshot=snapshot)


def events(text: dict[str, Any], m: Modes) -> TableEvents:
    columns = [ColumnSpec(c["name"], c["type_name"], c["base_type_name"], c["type_modifier"], c["not_null"],
                          None, c["enum_labels"]) for c in text["columns"]]
    return TableEvents("public", text["table"], columns, ("id",), EnvelopeSettings("dbserver1", m))


def cells(mode: str) -> list[tuple[str, str, str, Any, Any]]:
    """(phase, column, PostgreSQL text, Debezium's value, pgcdc's value) of every non-null value."""
    text = json.loads((GOLDEN / f"extreme_{mode}.pgtext.json").read_text())
    rows = {row[0]: row for row in text["rows"]}
    by_phase = {"r": events(text, modes(mode, True)), "c": events(text, modes(mode, False))}
    out = []
    for line in (GOLDEN / f"extreme_{mode}.jsonl").read_text().splitlines():
        value = parse(line)["value"]
        op = value["payload"]["op"]
        theirs = value["payload"]["after"]
        ev = by_phase[op]
        assert parse(ev.value_wrap.prefix + b"null}")["schema"]["fields"][1] == value["schema"]["fields"][1]
        row_text = rows[str(theirs["id"])]
        for name, fn, text in zip(ev.names, ev.fns, row_text):
            if name != "id" and text is not None:
                try:  # each value alone: one that fails must not hide the others
                    ours = parse(orjson.dumps(text if fn is None else fn(text)))
                except Exception as exc:
                    ours = f"<{type(exc).__name__}: {exc}>"
                out.append(("snapshot" if op == "r" else "streaming", name, text, theirs[name], ours))
    return out


@pytest.mark.parametrize("mode", sorted(EXT_MODES))
def test_extreme_values_match_debezium(mode: str) -> None:
    found = cells(mode)
    wrong = [f"{phase} {col} {text!r}: Debezium {theirs!r}, pgcdc {ours!r}"
             for phase, col, text, theirs, ours in found if ours != theirs]
    print(f"{mode}: {len(found)} values compared, {len(wrong)} differ")
    assert len(found) > 150
    assert not wrong, "\n".join(wrong)
