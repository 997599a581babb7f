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
from tests.conformance.test_extreme_values import EXT_MODES, INT_MODES

GOLDEN = Path(__file__).parent.parent / "data" / "debezium" / "types"


def parse(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Num, parse_int=Num)


def modes(props: dict[str, str], snapshot: bool) -> Modes:
    return Modes(time=props.get("time.precision.mode", "adaptive"),
                 interval=props.get("interval.handling.mode", "numeric"),
                 decimal=props.get("decimal.handling.mode", "precise"), snapshot=snapshot)


def events(text: dict[str, Any], m: Modes) -> TableEvents:
    columns = [ColumnSpec(c["name"], c["type_name"], c["base_type_name"], c["type_modifier"], c["not_null"],
                          None, c["enum_labels"]) for c in text["columns"]]
    return TableEvents("public", text["table"], columns, ("id",), EnvelopeSettings("dbserver1", m))


def cells(name: str, props: dict[str, str]) -> list[tuple[str, str, str, Any, Any]]:
    """(phase, column, PostgreSQL text, Debezium's value, pgcdc's value) of every non-null value."""
    text = json.loads((GOLDEN / f"{name}.pgtext.json").read_text())
    rows = {row[0]: row for row in text["rows"]}
    by_phase = {"r": events(text, modes(props, True)), "c": events(text, modes(props, False))}
    out = []
    for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines():
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


def check(name: str, props: dict[str, str], at_least: int) -> None:
    found = cells(name, props)
    wrong = [f"{phase} {col} {text!r}: Debezium {theirs!r}, pgcdc {ours!r}"
             for phase, col, text, theirs, ours in found if ours != theirs]
    print(f"{name}: {len(found)} values compared, {len(wrong)} differ")
    assert len(found) >= at_least
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("mode", sorted(EXT_MODES))
def test_extreme_values_match_debezium(mode: str) -> None:
    check(f"extreme_{mode}", EXT_MODES[mode], 200)


@pytest.mark.parametrize("mode", sorted(INT_MODES))
def test_integer_edges_match_debezium(mode: str) -> None:
    check(f"integers_{mode}", INT_MODES[mode], 50)
