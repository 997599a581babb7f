"""replace.null.with.default in the row builders: a null in a nullable column whose schema has a default is
written as that default (JsonConverter, KIP-581), or kept null when the converter option is false.

Which columns carry a default, and that the replaced value is the schema's `default`, was measured with the
Debezium oracle (tests/conformance/test_null_defaults_vs_debezium.py); here the builders are checked against
the schema they write themselves.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from pgcdc.converters.settings import converter_specs
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import ConfigError, ConversionError
from pgcdc.pgtypes import Modes
from pgcdc.protocol import UNCHANGED_TOAST

NUMERIC_12_2 = ((12 << 16) | 2) + 4
COLUMNS = [
    ColumnSpec("id", "int4", "int4", -1, True),
    ColumnSpec("i", "int4", "int4", -1, False, "5"),
    ColumnSpec("t", "text", "text", -1, False, "'dflt'::text"),
    ColumnSpec("n", "numeric", "numeric", NUMERIC_12_2, False, "1.5"),
    ColumnSpec("b", "bool", "bool", -1, False, "true"),
    ColumnSpec("ts", "timestamptz", "timestamptz", -1, False, "now()"),
    ColumnSpec("expr", "int4", "int4", -1, False, "(1 + 1)"),  # an expression: no schema default
    ColumnSpec("by", "bytea", "bytea", -1, False, "'\\x00ff'::bytea"),  # Debezium puts none for bytea
    ColumnSpec("plain", "int4", "int4", -1, False),
    ColumnSpec("nn", "int4", "int4", -1, True, "4"),
]
REPLACE = EnvelopeSettings("srv", Modes(), message_key_columns="public\\.t:id,i,t")
KEEP = dataclasses.replace(REPLACE, value_null_defaults=False, key_null_defaults=False)


def _events(settings: EnvelopeSettings) -> TableEvents:
    return TableEvents("public", "t", COLUMNS, ("id",), settings)


def _schema_defaults(events: TableEvents, row: dict[str, Any]) -> dict[str, Any]:
    """Field -> its schema default (None: no default), read from the value schema the table writes."""
    doc = orjson.loads(events.value({"before": None, "after": row, "source": {}, "transaction": None, "op": "c"}))
    after = next(f for f in doc["schema"]["fields"] if f["field"] == "after")
    return {f["field"]: f.get("default") for f in after["fields"]}


def test_nulls_become_the_schema_defaults() -> None:
    events = _events(REPLACE)
    nulls: list[Any] = [None] * len(COLUMNS)
    nulls[0], nulls[-1] = "1", "4"
    row = events.row(nulls, 0)
    defaults = _schema_defaults(events, row)
    assert {f for f, d in defaults.items() if d is not None} == {"i", "t", "n", "b", "ts", "nn"}
    assert orjson.loads(orjson.dumps(row)) == {**defaults, "id": 1, "nn": 4}
    assert events.key_payload(row) == {"id": 1, "i": defaults["i"], "t": defaults["t"]}
    # The same through the per-column path (a tuple of another length) and for a key-only old tuple.
    assert events.row(nulls[:-1], 0) == {k: v for k, v in row.items() if k != "nn"}
    assert orjson.loads(orjson.dumps(events.row(nulls, 0, key_only=True))) == {**defaults, "id": 1, "nn": 4}


def test_values_and_toast_placeholders_are_untouched() -> None:
    events = _events(REPLACE)
    row = events.row(["1", "7", "v", "2.00", "f", UNCHANGED_TOAST, "3", None, None, "4"], 0)
    assert (row["i"], row["t"], row["b"], row["ts"], row["expr"], row["by"], row["plain"]) == (
        7, "v", False, "__debezium_unavailable_value", 3, None, None)


def test_replace_null_with_default_false_keeps_the_nulls() -> None:
    events = _events(KEEP)
    nulls: list[Any] = ["1", *[None] * (len(COLUMNS) - 2), "4"]
    expected = {c.name: None for c in COLUMNS} | {"id": 1, "nn": 4}
    assert events.row(nulls, 0) == expected
    assert events.row(nulls, 0, key_only=True) == expected  # absent columns: unset by Debezium, so null
    assert events.key_payload(events.row(nulls, 0)) == {"id": 1, "i": None, "t": None}
    assert _schema_defaults(events, expected) == _schema_defaults(_events(REPLACE), expected)  # schema unchanged


def test_a_key_converter_that_replaces_fills_the_key_only() -> None:
    events = _events(dataclasses.replace(REPLACE, value_null_defaults=False))
    row = events.row(["1", *[None] * (len(COLUMNS) - 2), "4"], 0)
    assert row["i"] is None and row["t"] is None
    replaced = _events(REPLACE).row(["1", *[None] * (len(COLUMNS) - 2), "4"], 0)
    assert events.key_payload(row) == {"id": 1, "i": replaced["i"], "t": replaced["t"]}


def test_a_key_that_keeps_nulls_under_values_that_replace_them_is_refused() -> None:
    with pytest.raises(ConversionError, match=r"^table public\.t: key column i .*key\.converter\.replace\.null"):
        _events(dataclasses.replace(REPLACE, key_null_defaults=False))
    # Without a nullable key column with a default, nothing to refuse.
    settings = dataclasses.replace(REPLACE, key_null_defaults=False, message_key_columns="")
    assert _events(settings).key_payload({"id": 1}) == {"id": 1}


@pytest.mark.parametrize(("value", "expected"), [("false", False), ("FALSE", False), ("true", True)])
def test_the_json_converter_option_is_read(value: str, expected: bool) -> None:
    specs = converter_specs({}, {"value.converter.replace.null.with.default": value})
    assert specs["value"].replace_null_with_default is expected
    assert specs["key"].replace_null_with_default is True


def test_a_bad_option_value_names_the_property() -> None:
    with pytest.raises(ConfigError, match=r"^key\.converter\.replace\.null\.with\.default: must be true or false"):
        converter_specs({}, {"key.converter.replace.null.with.default": "no"})


@pytest.mark.parametrize(("value", "expected"), [("false", False), (None, True)])
def test_apicurio_ext_json_passes_the_option_to_its_json_converter(value: str | None, expected: bool) -> None:
    """ExtJsonConverter writes its payload with a JsonConverter configured with the converter's own options."""
    props = {"value.converter.apicurio.registry.url": "http://127.0.0.1:1/apis/registry/v3"}
    if value is not None:
        props["value.converter.replace.null.with.default"] = value
    specs = converter_specs({"value": "io.apicurio.registry.utils.converter.ExtJsonConverter"}, props)
    assert specs["value"].replace_null_with_default is expected
