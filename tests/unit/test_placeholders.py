"""unavailable.value.placeholder in each column's type (envelope/placeholders.py): the forms measured on Debezium
3.6 (tests/conformance/test_toast_placeholders.py), the `hex:` form, and a NOT NULL column without a placeholder,
whose unchanged TOASTed value fails the row with a line naming the column and the fix."""

from __future__ import annotations

import re

import pytest

from pgcdc.config import build_config
from pgcdc.envelope.native import native_events
from pgcdc.envelope.placeholders import placeholder_bytes
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import ConfigError, ValueConversionError
from pgcdc.pgtypes import Modes
from pgcdc.protocol import UNCHANGED_TOAST

COLUMNS = [("t", "text"), ("ta", "_text"), ("va", "_varchar"), ("i4a", "_int4"), ("i8a", "_int8"), ("i2a", "_int2"),
           ("da", "_date"), ("ua", "_uuid"), ("bya", "_bytea"), ("f8a", "_float8"), ("nua", "_numeric"),
           ("nu", "numeric"), ("by", "bytea"), ("hs", "hstore"), ("vb", "varbit"), ("js", "jsonb")]


def table(setting: str, not_null: bool = False, **modes: str) -> TableEvents:
    specs = [ColumnSpec("id", "integer", "int4", -1, True)]
    specs += [ColumnSpec(name, base, base, -1, not_null) for name, base in COLUMNS]
    return TableEvents("public", "t", specs, ("id",), EnvelopeSettings("p", Modes(**modes), placeholder=setting))


def placeholders(setting: str, **modes: str) -> dict[str, object]:
    t = table(setting, **modes)
    return dict(zip(t.fields, t.placeholders))


def test_forms_of_the_default_placeholder() -> None:
    ph = "__debezium_unavailable_value"
    got = placeholders(ph)
    codes = list(ph.encode())
    assert got == {
        "id": None, "t": ph, "ta": [ph], "va": [ph], "i4a": codes, "i8a": codes, "i2a": None, "da": codes,
        "ua": ["b68a35a7-17ad-35b3-af2a-ae46edb4545a"],  # Java's UUID.nameUUIDFromBytes, measured
        "bya": ["X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="], "f8a": None, "nua": None, "nu": None,
        "by": "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==", "hs": '{"__debezium_unavailable_value":'
        '"__debezium_unavailable_value"}', "vb": None, "js": ph}


def test_modes_change_the_forms() -> None:
    ph = "__debezium_unavailable_value"
    double = placeholders(ph, decimal="double", binary="base64", hstore="map")
    assert (double["nu"], double["by"], double["bya"], double["hs"]) == (None, None, None, {ph: ph})
    text = placeholders(ph, decimal="string", binary="hex", time="connect")
    assert (text["nu"], text["by"], text["bya"], text["nua"], text["da"]) == (ph, ph, None, None, None)


def test_hex_placeholder() -> None:
    assert placeholder_bytes("hex:00ff7f") == b"\x00\xff\x7f"
    got = placeholders("hex:00ff7f")
    assert got["t"] == "\x00\ufffd\x7f" and got["ta"] == ["\x00\ufffd\x7f"]  # Java's new String(bytes), measured
    assert got["i4a"] == [0, -1, 127]  # Java's signed bytes
    assert got["by"] == "AP9/" and got["ua"] == ["ff4068e5-fb45-328e-825e-7c1004b3e65a"]
    with pytest.raises(ConfigError, match=r"unavailable\.value\.placeholder: 'hex:0g': after hex:"):
        build_config({"name": "x", "topic.prefix": "p", "database.hostname": "h", "database.user": "u",
                      "database.dbname": "d", "unavailable.value.placeholder": "hex:0g"})


def test_not_null_column_without_a_placeholder_fails_the_row() -> None:
    t = table("__debezium_unavailable_value", not_null=True)
    values = ["1"] + [UNCHANGED_TOAST] * len(COLUMNS)
    with pytest.raises(ValueConversionError) as failed:
        t.row(values, 0x16B3748)
    assert str(failed.value) == (
        "cannot write an event of public.t at LSN 0/16B3748: an update left the TOASTed value of NOT NULL column "
        "public.t.i2a (_int2) unchanged, so PostgreSQL did not send it, and its type has no placeholder (Debezium "
        "stops here too); ALTER TABLE public.t REPLICA IDENTITY FULL has PostgreSQL send the old value")
    # A NOT NULL column with a placeholder takes it; every column nullable: the row is written.
    values = ["1", UNCHANGED_TOAST] + ["{}"] * (len(COLUMNS) - 1)
    values[COLUMNS.index(("hs", "hstore")) + 1] = '"k"=>"v"'
    values[COLUMNS.index(("vb", "varbit")) + 1] = "101"
    values[COLUMNS.index(("nu", "numeric")) + 1] = "1.5"
    values[COLUMNS.index(("by", "bytea")) + 1] = "\\x00"
    assert t.row(values, 0)["t"] == "__debezium_unavailable_value"
    assert table("x").row(["1"] + [UNCHANGED_TOAST] * len(COLUMNS), 0)["f8a"] is None


# NOT NULL columns whose placeholder is null, where Debezium stops (measured case by case in
# tests/conformance/test_toast_placeholders.py): (type, base type, type modifier, modes).
NO_PLACEHOLDER = [
    ("double precision[]", "_float8", -1, {}),
    ("smallint[]", "_int2", -1, {}),
    ("bit varying", "varbit", -1, {}),
    ("numeric", "numeric", -1, {"decimal": "double"}),
    ("numeric", "numeric", -1, {}),  # a variable-scale struct
    ("numeric(1000,2)", "numeric", (1000 << 16 | 2) + 4, {}),  # a decimal
    ("bytea", "bytea", -1, {"binary": "base64"}),
]


@pytest.mark.parametrize(("type_name", "base", "modifier", "modes"), NO_PLACEHOLDER,
                         ids=[f"{t}-{'-'.join(m.values()) or 'defaults'}" for t, _, _, m in NO_PLACEHOLDER])
def test_not_null_column_without_a_placeholder_is_refused(type_name: str, base: str, modifier: int,
                                                          modes: dict[str, str]) -> None:
    def events(not_null: bool) -> TableEvents:
        specs = [ColumnSpec("id", "integer", "int4", -1, True), ColumnSpec("v", type_name, base, modifier, not_null)]
        return TableEvents("public", "t", specs, ("id",), EnvelopeSettings("p", Modes(**modes)))

    t = events(True)
    assert t.placeholders[1] is None and list(t.refused) == [1]
    # The Avro writer's copy of the table (here: numeric as a double) refuses it too.
    for rows in filter(None, (t, native_events(t))):
        with pytest.raises(ValueConversionError, match=r"an update left the TOASTed value of NOT NULL column "
                           rf"public\.t\.v \({re.escape(type_name)}\) unchanged"):
            rows.row(["1", UNCHANGED_TOAST], 0)
    nullable = events(False)
    assert not nullable.refused and nullable.row(["1", UNCHANGED_TOAST], 0)["v"] is None
