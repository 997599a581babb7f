"""Connect Decimals Spark's DecimalType(38, s) cannot hold exactly are null and named in `_pgcdc_unrepresentable`,
never rounded: a schema scale above 38 (numeric(60,45)) whatever the value, and more than 38 digits at a scale up
to 38. Values of 38 digits or fewer at such a scale stay exact, negative ones too (35 to 38 digits were rounded
to 34 by Spark's abs(), and those within 2**32 of -10**38 overflowed to null). Records made here by the
converters' rules, decimal.format BASE64 and NUMERIC."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pgcdc.spark import DecodeOptions, decode_changes
from pgcdc.spark.changes import POS
from tests.spark.test_decimal_numeric import RAW, _decimal, _encode, _json, _struct

D = Decimal
EXACT = Context(prec=200)  # no rounding in the expectations themselves
SCALES = {"deep": (60, 45), "edge": (39, 38), "mid": (50, 10), "big": (60, 0)}
ARRAYS = {"deep_arr": "deep", "edge_arr": "edge"}  # array column -> the column whose type its elements have
TYPED = {"deep": T.DecimalType(38, 38), "edge": T.DecimalType(38, 38), "mid": T.DecimalType(38, 10),
         "big": T.DecimalType(38, 0)}


def nines(whole: int, frac: int, sign: str = "") -> Decimal:
    """The largest magnitude with these digits (written out: unary minus would round to 28 digits)."""
    return D(sign + "9" * whole + ("." + "9" * frac if frac else ""))


def at(value: str | Decimal, column: str) -> Decimal:
    """`value` at the column's scale, as PostgreSQL stores it and Connect's Decimal carries it."""
    return D(value).quantize(D(1).scaleb(-SCALES[column][1]), context=EXACT)


def unscaled_digits(column: str, v: Decimal) -> int:
    return len(str(abs(int(v.scaleb(SCALES[ARRAYS.get(column, column)][1], EXACT)))))


# Per row: deep numeric(60,45) (scale > 38: never representable), edge numeric(39,38), mid numeric(50,10),
# big numeric(60,0) (up to 38 digits exact, 39 and more never rounded). None: NULL.
ROWS: dict[int, dict[str, Decimal | None]] = {
    1: {"deep": nines(15, 45), "edge": nines(0, 38), "mid": nines(28, 10), "big": nines(38, 0)},  # largest that fit
    2: {"deep": nines(15, 45, "-"), "edge": nines(0, 38, "-"), "mid": nines(28, 10, "-"), "big": nines(38, 0, "-")},
    3: {"deep": at("1E-45", "deep"), "edge": at("1E-38", "edge"), "mid": at("1E-10", "mid"), "big": D(1)},
    4: {"deep": at("-1E-45", "deep"), "edge": at("-1E-38", "edge"), "mid": at("-1E-10", "mid"), "big": D(-1)},
    5: {"deep": at("0", "deep"), "edge": at("0", "edge"), "mid": at("0", "mid"), "big": D(0)},  # 0 at full scale
    6: {"deep": at("0.5", "deep"), "edge": at("1", "edge"), "mid": at("1E+28", "mid"), "big": at("1E+38", "big")},
    7: {"deep": None, "edge": nines(1, 38, "-"), "mid": nines(40, 10), "big": nines(60, 0, "-")},  # the largest allowed
    8: {"deep": None, "edge": None, "mid": None, "big": None},
    # exactly 38 significant digits (deep's: 38 digits at scale 45, which 38 places would round)
    9: {"deep": at("1.234567890123456789012345678901234567E-8", "deep"),
        "edge": D("0.12345678901234567890123456789012345678"), "mid": D("1234567890123456789012345678.0123456789"),
        "big": D("-12345678901234567890123456789012345678")},
}
ARRAY_ROWS: dict[int, dict[str, list[Decimal | None] | None]] = {
    1: {"deep_arr": [], "edge_arr": [at("1E-38", "edge"), None, nines(0, 38, "-")]},
    2: {"deep_arr": [None], "edge_arr": [at("0", "edge")]},
    3: {"deep_arr": [at("1E-45", "deep"), at("0", "deep"), None], "edge_arr": []},
    4: {"deep_arr": None, "edge_arr": [at("9.5", "edge")]},
}


def fits(column: str, v: Decimal | None) -> bool:
    """What the reader must give: a value at a scale up to 38 with 38 digits or fewer."""
    return v is None or (SCALES[ARRAYS.get(column, column)][1] <= 38 and unscaled_digits(column, v) <= 38)


def expected(column: str, v: Any) -> tuple[Any, bool]:
    """(the typed value, whether the column is named unrepresentable)."""
    if isinstance(v, list):
        ok = all(fits(column, x) for x in v)
        return (v if ok else None), not ok
    return (v if fits(column, v) else None), not fits(column, v)


def marked(row: dict[str, Any]) -> list[str] | None:
    return [c for c, v in row.items() if expected(c, v)[1]] or None


def test_the_rows_cover_the_edges() -> None:
    """The cases are what they say: per column exact and unrepresentable values, and 38 against 39 digits."""
    assert [i for i, r in ROWS.items() if marked(r) == ["deep"]] == [1, 2, 3, 4, 5, 9]
    assert marked(ROWS[6]) == ["deep", "edge", "mid", "big"] and marked(ROWS[7]) == ["edge", "mid", "big"]
    assert marked(ROWS[8]) is None
    # row 9's deep is 38 digits too, small enough for the base64 reader's 38-digit integer: only its scale fails
    assert {c: unscaled_digits(c, v) for c, v in ROWS[9].items() if v is not None} == {
        "deep": 38, "edge": 38, "mid": 38, "big": 38}
    assert {c: unscaled_digits(c, v) for c, v in ROWS[6].items() if v is not None} == {
        "deep": 45, "edge": 39, "mid": 39, "big": 39}
    assert {c: unscaled_digits(c, v) for c, v in ROWS[7].items() if v is not None} == {
        "edge": 39, "mid": 50, "big": 60}
    assert [marked(r) for r in ARRAY_ROWS.values()] == [None, None, ["deep_arr"], ["edge_arr"]]


# -- records made here ----------------------------------------------------------------------------------------

def _schema(column: str) -> dict[str, Any]:
    if column in ARRAYS:
        return {"type": "array", "optional": True, "items": _schema(ARRAYS[column])}
    return _decimal(*SCALES[column])


def made_records(fmt: str) -> list[tuple[str, int, int, bytes, bytes]]:
    """Envelopes of creates in topic `t` (the ROWS, and the ARRAY_ROWS at id 100 + i) and of `dk`, keyed by a
    numeric(60,45): keys 1E-45 and 2E-45 would be one 0E-38 if they were rounded."""
    fields = [(c, _schema(c)) for c in (*SCALES, *ARRAYS)]
    out = []
    for topic, key_fields, rows in (
            ("t", [("id", {"type": "int32", "optional": False})],
             [({"id": i}, r) for i, r in ROWS.items()] + [({"id": 100 + i}, r) for i, r in ARRAY_ROWS.items()]),
            ("dk", [("k", _decimal(60, 45, optional=False))],
             [({"k": at(k, "deep")}, {}) for k in ("1E-45", "2E-45", "0")])):
        row_fields = fields if topic == "t" else [("v", {"type": "string", "optional": True})]
        row = _struct(row_fields, f"{topic}.Value")
        envelope = {"type": "struct", "optional": False, "name": f"{topic}.Envelope", "fields": [
            dict(row, field="before", optional=True), dict(row, field="after", optional=True),
            {"type": "struct", "optional": False, "field": "source",
             "fields": [{"type": "int64", "optional": False, "field": "lsn"}]},
            {"type": "string", "optional": False, "field": "op"}]}
        for i, (k, v) in enumerate(rows):
            key = {"schema": _struct(key_fields, f"{topic}.Key"),
                   "payload": {n: _encode(k[n], s, fmt) if n != "id" else k[n] for n, s in key_fields}}
            after = {n: _encode(v.get(n), s, fmt) for n, s in row_fields}
            value = {"schema": envelope, "payload": {"before": None, "after": after, "source": {"lsn": 16 + i},
                                                     "op": "c"}}
            out.append((topic, 0, i, _json(key), _json(value)))
    return out


def assert_rows(rows: list[Any], by_id: dict[int, dict[str, Any]]) -> None:
    """Every row's typed values and `_pgcdc_unrepresentable` as `expected` says, value by value and as text."""
    got = {r["id"]: r for r in rows}
    assert set(got) == set(by_id)
    for i, want in by_id.items():
        for c, v in want.items():
            value, _ = expected(c, v)
            assert got[i][c] == value, (i, c, got[i][c], value)
        assert got[i]["_pgcdc_unrepresentable"] == marked(want), i


@pytest.mark.parametrize("fmt", ["base64", "numeric"])
def test_made_records_are_never_rounded(spark: SparkSession, fmt: str) -> None:
    raw = spark.createDataFrame(made_records(fmt), RAW)
    decoded = decode_changes(raw, DecodeOptions(decimal_format=fmt))
    table = decoded.tables["t"]
    assert {f.name: f.dataType for f in table.schema.fields if f.name in TYPED} == TYPED
    assert table.schema["deep_arr"].dataType == T.ArrayType(T.DecimalType(38, 38))
    assert_rows(table.rows.drop(POS).collect(), {**ROWS, **{100 + i: r for i, r in ARRAY_ROWS.items()}})
    # keyed by numeric(60,45): every record quarantined, none merged into another's row
    assert decoded.quarantine is not None
    assert sorted((r["topic"], r["offset"], r["reason"]) for r in decoded.quarantine.collect()) == [
        ("dk", i, "cannot represent value of k") for i in range(3)]
    assert "dk" not in decoded.tables or decoded.tables["dk"].rows.count() == 0
    strict = decode_changes(raw, DecodeOptions(decimal_format=fmt, unrepresentable="quarantine"))
    assert strict.quarantine is not None
    reasons = {r["offset"]: r["reason"] for r in strict.quarantine.filter("topic = 't'").collect()}
    ordered = [(i, r) for i, r in ROWS.items()] + [(100 + i, r) for i, r in ARRAY_ROWS.items()]
    assert reasons == {n: f"cannot represent value of {','.join(marked(r) or [])}"
                       for n, (_, r) in enumerate(ordered) if marked(r)}


VARIABLE = {"type": "struct", "optional": True, "name": "io.debezium.data.VariableScaleDecimal", "version": 1,
            "fields": [{"type": "int32", "optional": False, "field": "scale"},
                       {"type": "bytes", "optional": False, "field": "value"}]}
# numeric without precision (DecimalType(38, 2) here): negative values of 35 to 38 digits stay exact
VARIABLE_VALUES = [D("-123456789012345678901234567890123456"), D("-123456789012345678901234567890123.45"),
                   D("-999999999999999999999999999999999999.99"), D("-1234567890123456789012345678901234567"),
                   D("-0.001"), D("0"), None]


def test_variable_scale_negatives_are_exact(spark: SparkSession) -> None:
    def encoded(v: Decimal | None) -> Any:
        if v is None:
            return None
        scale = max(0, -v.as_tuple().exponent)  # type: ignore[operator]
        return {"scale": scale, "value": _encode(v, _decimal(None, scale), "base64")}

    row = _struct([("var", VARIABLE)], "v.Value")
    envelope = {"type": "struct", "optional": False, "name": "v.Envelope", "fields": [
        dict(row, field="before", optional=True), dict(row, field="after", optional=True),
        {"type": "struct", "optional": False, "field": "source",
         "fields": [{"type": "int64", "optional": False, "field": "lsn"}]},
        {"type": "string", "optional": False, "field": "op"}]}
    key_schema = _struct([("id", {"type": "int32", "optional": False})], "v.Key")
    records = [("v", 0, i, _json({"schema": key_schema, "payload": {"id": i}}),
                _json({"schema": envelope, "payload": {"before": None, "after": {"var": encoded(v)},
                                                       "source": {"lsn": 16 + i}, "op": "c"}}))
               for i, v in enumerate(VARIABLE_VALUES)]
    table = decode_changes(spark.createDataFrame(records, RAW), DecodeOptions(variable_scale=2)).tables["v"]
    got = {r["id"]: (r["var"], r["_pgcdc_unrepresentable"]) for r in table.rows.collect()}
    # 37 integer digits and 2 places are 39: unrepresentable, as is the third place of -0.001
    assert got == {i: ((None, ["var"]) if i in (3, 4) else (v, None)) for i, v in enumerate(VARIABLE_VALUES)}
