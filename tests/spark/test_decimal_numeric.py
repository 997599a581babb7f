"""Connect decimals written with the JsonConverter's decimal.format=NUMERIC (JSON numbers, BigDecimal.toString)
read with DecodeOptions(decimal_format="numeric"): the same typed rows and tables as BASE64 records of the same
values. Records made here from the converters' rules (both formats, keys and values, values past 38 digits), and
one workload captured at once by pgcdc three times: BASE64, NUMERIC for keys and values, NUMERIC for values only."""

from __future__ import annotations

import base64
import decimal
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.spark import DecodeOptions, apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.changes import POS, Decoded
from pgcdc.spark.verify import verify
from tests.harness import Running, make_config, read_topic, wait_for
from tests.spark.conftest import Capture
from tests.spark.test_end_to_end import read_all
from tests.spark.zoo import ZOO

_CONTEXT = decimal.Context(prec=200)


def java_text(d: Decimal) -> str:
    """Java's BigDecimal.toString(): plain unless the adjusted exponent is below -6 (or the scale negative)."""
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    unscaled = "".join(map(str, digits)).lstrip("0") or "0"
    scale = -exponent
    adjusted = len(unscaled) - 1 - scale
    minus = "-" if sign else ""
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return minus + unscaled
        padded = unscaled.rjust(scale + 1, "0")
        return f"{minus}{padded[:-scale]}.{padded[-scale:]}"
    mantissa = unscaled[0] + (f".{unscaled[1:]}" if len(unscaled) > 1 else "")
    return f"{minus}{mantissa}E{'+' if adjusted > 0 else ''}{adjusted}"


def test_java_text_is_bigdecimal_to_string() -> None:
    assert [java_text(Decimal(s)) for s in ("1.50", "-0.01", "12", "0E-10", "0.0000000123", "1E+3", "-0.000001")] == [
        "1.50", "-0.01", "12", "0E-10", "1.23E-8", "1E+3", "-0.000001"]


def test_decimal_format_is_checked() -> None:
    assert DecodeOptions(decimal_format=" NUMERIC ").decimal_format == "numeric"
    assert DecodeOptions(decimal_format="Base64").decimal_format == "base64"
    both = DecodeOptions(decimal_format="numeric")
    assert both.for_key().decimal_format == "numeric"
    split = DecodeOptions(decimal_format="numeric", key_decimal_format="BASE64")
    assert (split.decimal_format, split.for_key().decimal_format) == ("numeric", "base64")
    for bad in ({"decimal_format": "number"}, {"key_decimal_format": "hex"}, {"decimal_format": ""}):
        with pytest.raises(ValueError) as err:
            DecodeOptions(**bad)  # type: ignore[arg-type]
        name, value = next(iter(bad.items()))
        assert str(err.value) == (f"DecodeOptions.{name}={value!r}: expected base64 or numeric (the converter's "
                                  "decimal.format, any case)")


# -- records made here ----------------------------------------------------------------------------------------

def _decimal(precision: int | None, scale: int, optional: bool = True) -> dict[str, Any]:
    params = {"scale": str(scale), **({"connect.decimal.precision": str(precision)} if precision else {})}
    return {"type": "bytes", "optional": optional, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
            "parameters": params}


VALUE = [("fixed", _decimal(12, 3)), ("wide", _decimal(60, 10)), ("money", _decimal(None, 2)),
         ("arr", {"type": "array", "optional": True, "items": _decimal(8, 2)}),
         ("wide_arr", {"type": "array", "optional": True, "items": _decimal(60, 10)})]
KEY = [("k", _decimal(50, 5, optional=False))]
D = Decimal
# (key, value) per record; a value's scale is its schema's, as Connect's Decimal requires.
ROWS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"k": D("1.00000")}, {"fixed": D("1.500"), "wide": D("0E-10"), "money": D("-0.01"), "arr": [D("1.25"), None],
                           "wide_arr": [D("0E-10")]}),
    ({"k": D("-0.00001")}, {"fixed": D("-0.001"), "wide": D("1.23E-8").quantize(D("1E-10")),
                            "money": D("92233720368547758.07"), "arr": [], "wide_arr": []}),
    ({"k": D("0.00000")}, {"fixed": None, "wide": D("1234567890123456789012345678.0123456789"), "money": None,
                           "arr": None, "wide_arr": None}),
    ({"k": D("123456789012345678901234567890123.45678")},  # 38 digits
     {"fixed": D("999999999.999"), "wide": D("-1E-10"), "money": D("0.00"), "arr": [D("-999999.99")],
      "wide_arr": [D("1.0000000000"), D("12345678901234567890123456789012345678901234567890.0000000000")]}),
    ({"k": D("4.00000")}, {"fixed": D("0.000"), "wide": D("12345678901234567890123456789012345678901234567890"
                                                            ".0000000000"), "money": D("0.00"), "arr": None,
                           "wide_arr": None}),
    ({"k": D("1234567890123456789012345678901234567890.12345")},  # 45 digits: the record is quarantined
     {"fixed": D("1.000"), "wide": D("1.0000000000"), "money": D("1.00"), "arr": None, "wide_arr": None}),
]


def _encode(v: Any, schema: dict[str, Any], fmt: str) -> Any:
    if v is None:
        return None
    if schema.get("type") == "array":
        return [_encode(x, schema["items"], fmt) for x in v]
    if fmt == "numeric":
        return f"\x00{java_text(v)}\x00"  # unquoted below
    unscaled = int(v.scaleb(int(schema["parameters"]["scale"]), _CONTEXT))
    return base64.b64encode(unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)).decode()


def _json(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).replace('"\\u0000', "").replace('\\u0000"', "").encode()


def _struct(fields: list[tuple[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    return {"type": "struct", "optional": False, "name": name, "fields": [dict(s, field=n) for n, s in fields]}


def made_records(fmt: str, key_fmt: str | None = None) -> list[tuple[str, int, int, bytes, bytes]]:
    row = _struct(VALUE, "t.Value")
    envelope = {"type": "struct", "optional": False, "name": "t.Envelope", "fields": [
        dict(row, field="before", optional=True), dict(row, field="after", optional=True),
        {"type": "struct", "optional": False, "field": "source",
         "fields": [{"type": "int64", "optional": False, "field": "lsn"}]},
        {"type": "string", "optional": False, "field": "op"}]}
    out = []
    for i, (k, v) in enumerate(ROWS):
        key = {"schema": _struct(KEY, "t.Key"), "payload": {n: _encode(k[n], s, key_fmt or fmt) for n, s in KEY}}
        after = {n: _encode(v[n], s, fmt) for n, s in VALUE}
        value = {"schema": envelope, "payload": {"before": None, "after": after, "source": {"lsn": 16 + i}, "op": "c"}}
        out.append(("t", 0, i, _json(key), _json(value)))
    return out


RAW = "topic string, partition int, offset long, key binary, value binary"


def rows(decoded: Decoded) -> list[Any]:
    return sorted(decoded.tables["t"].rows.drop(POS).collect(), key=lambda r: r["k"])


def test_made_numeric_records_read_as_base64_ones(spark: SparkSession) -> None:
    numeric_raw = spark.createDataFrame(made_records("numeric"), RAW)
    sample = bytes(numeric_raw.first()["value"])
    assert b'"wide": 0E-10' in sample and b'"fixed": 1.500' in sample
    assert b'"wide": 1.23E-8' in bytes(numeric_raw.collect()[1]["value"])
    base = decode_changes(spark.createDataFrame(made_records("base64"), RAW))
    numeric = decode_changes(numeric_raw, DecodeOptions(decimal_format="numeric"))
    split = decode_changes(spark.createDataFrame(made_records("numeric", "base64"), RAW),
                           DecodeOptions(decimal_format="NUMERIC", key_decimal_format="base64"))
    expected = rows(base)
    assert numeric.tables["t"].schema == base.tables["t"].schema == split.tables["t"].schema
    assert rows(numeric) == rows(split) == expected
    got = {r["k"]: r for r in expected}
    assert set(got) == {v[0]["k"] for v in ROWS[:5]}
    one, tiny, zero, long_key, wide = (got[ROWS[i][0]["k"]] for i in range(5))
    assert (one["fixed"], one["wide"], one["money"], one["arr"], one["wide_arr"]) == (
        D("1.500"), D("0E-10"), D("-0.01"), [D("1.25"), None], [D("0E-10")])
    assert str(one["wide"]) == "0E-10" and str(tiny["wide"]) == "1.23E-8"
    assert (tiny["fixed"], tiny["money"]) == (D("-0.001"), D("92233720368547758.07"))
    assert (zero["fixed"], zero["wide"], zero["_pgcdc_unrepresentable"]) == (
        None, D("1234567890123456789012345678.0123456789"), None)
    assert long_key["k"] == D("123456789012345678901234567890123.45678")
    # 50 integer digits: null and named, as with BASE64; an array holding one is named too
    assert (long_key["wide"], long_key["wide_arr"], long_key["_pgcdc_unrepresentable"]) == (D("-1E-10"), None,
                                                                                           ["wide_arr"])
    assert (wide["wide"], wide["_pgcdc_unrepresentable"]) == (None, ["wide"])
    for decoded in (base, numeric, split):
        assert decoded.quarantine is not None
        assert [(r["offset"], r["reason"]) for r in decoded.quarantine.collect()] == [
            (5, "cannot represent value of k")]
    quarantined = decode_changes(numeric_raw, DecodeOptions(decimal_format="numeric", unrepresentable="quarantine"))
    assert quarantined.quarantine is not None
    assert sorted((r["offset"], r["reason"]) for r in quarantined.quarantine.collect()) == [
        (3, "cannot represent value of wide_arr"), (4, "cannot represent value of wide"),
        (5, "cannot represent value of k")]


def test_numeric_records_are_not_base64(spark: SparkSession) -> None:
    """Read with the default options, NUMERIC records give other values or none (quarantined keys): the
    option is needed, and a number that is not base64 does not fail the job."""
    decoded = decode_changes(spark.createDataFrame(made_records("numeric"), RAW))
    assert decoded.quarantine is not None and decoded.quarantine.count() == len(ROWS)
    keys_base64 = decode_changes(spark.createDataFrame(made_records("numeric", "base64"), RAW))
    expected = rows(decode_changes(spark.createDataFrame(made_records("base64"), RAW)))
    assert rows(keys_base64) != expected


# -- records pgcdc wrote ------------------------------------------------------------------------------------

NUMERIC_COLUMNS, NUMERIC_ROWS = ZOO["z_numeric"]
WORKLOAD = {
    # the zoo's numerics (NaN, 50 digits, -1e-10, NULL) and: zero at scale 10 (0E-10), 1E-8 (1.00E-8), 38 digits
    "z_numeric": (NUMERIC_COLUMNS, [*NUMERIC_ROWS, "-12.5, 1, 0, -1", "0.001, -1, 0.00000001, 1",
                                    "999999999.999, 1, 1234567890123456789012345678.0123456789, 0"]),
    "z_money": ZOO["z_money"],
    "z_num_arr": ("na numeric(8,2)[], wa numeric(60,10)[]",
                  ["'{1.25,NULL,-0.01}', '{0,0.00000001}'",
                   "'{}', '{12345678901234567890123456789012345678901234567890}'", "NULL, NULL"]),
}
KEYS = ["1.5", "-0.00001", "0", "123456789012345678901234567890123.45678", "-99.99999"]
TABLES = (*WORKLOAD, "z_nkey")
SETUP = [*(f"CREATE TABLE {t} (id int PRIMARY KEY, {cols})" for t, (cols, _) in WORKLOAD.items()),
         "CREATE TABLE z_nkey (k numeric(50,5) PRIMARY KEY, v text)", "CREATE TABLE sentinel (id int PRIMARY KEY)"]


def _inserts(offset: int) -> list[str]:
    rows = [f"INSERT INTO {t} VALUES " + ", ".join(f"({offset + i}, {r})" for i, r in enumerate(values, 1))
            for t, (_, values) in WORKLOAD.items()]
    keys = ", ".join(f"({k} + {offset}, 'v{i}')" for i, k in enumerate(KEYS))
    return [*rows, f"INSERT INTO z_nkey VALUES {keys}"]


SNAPSHOT = _inserts(0)
STREAM = [*_inserts(100), *(f"UPDATE {t} SET id = id + 1000 WHERE id = 1" for t in WORKLOAD),
          *(f"DELETE FROM {t} WHERE id = 102" for t in WORKLOAD),
          "UPDATE z_nkey SET k = k + 0.00001 WHERE k = 1.5", "DELETE FROM z_nkey WHERE k = 100",
          "UPDATE z_nkey SET v = 'changed' WHERE k < 0", "INSERT INTO sentinel VALUES (1)"]
FORMATS = {"base64": {}, "numeric": {"key.converter.decimal.format": "NUMERIC",
                                     "value.converter.decimal.format": "numeric"},
           "values": {"value.converter.decimal.format": "NUMERIC"}}
OPTIONS = {"base64": DecodeOptions(), "numeric": DecodeOptions(decimal_format="numeric"),
           "values": DecodeOptions(decimal_format="numeric", key_decimal_format="base64")}


@pytest.fixture(scope="module")
def triplet(pg: PostgresCluster, broker: KafkaBroker) -> dict[str, Capture]:
    """One database captured at once by three pgcdc runs, one per FORMATS entry."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in SETUP + SNAPSHOT:
        pg.execute(stmt, dbname)
    captures, configs = {}, []
    for name, props in FORMATS.items():
        prefix = f"{name}{uuid.uuid4().hex[:6]}"
        configs.append(make_config(pg, dbname, broker.bootstrap_servers, **{
            "topic.prefix": prefix, "snapshot.mode": "initial", "skipped.operations": "none",
            "slot.name": f"{name}_{dbname}", "publication.name": f"{name}p_{dbname}",
            "table.include.list": ",".join(rf"public\.{t}" for t in (*TABLES, "sentinel")), **props}))
        captures[name] = Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in TABLES})
    with Running(configs[0]), Running(configs[1]), Running(configs[2]):
        for stmt in STREAM:
            pg.execute(stmt, dbname)
        for c in captures.values():
            sentinel = c.topics["z_nkey"].replace(".z_nkey", ".sentinel")
            wait_for(lambda s=sentinel: bool(read_topic(broker.bootstrap_servers, s, timeout=10)), 120,
                     "the workload's last event in Kafka")
    return captures


def _rows(df: DataFrame) -> DataFrame:
    return df.drop(POS)  # the position holds each slot's own snapshot point


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_pgcdc_numeric_records_give_the_base64_tables(spark: SparkSession, triplet: dict[str, Capture],
                                                      tmp_path: Path, fmt: str) -> None:
    raw = {name: read_all(spark, c) for name, c in triplet.items()}

    def written(name: str, table: str, column: str) -> bytes:
        r = raw[name].filter(raw[name].topic == triplet[name].topics[table]).select(column).dropna().collect()
        return b"\n".join(bytes(x[0]) for x in r)

    assert b'"fixed":1.500,' in written("numeric", "z_numeric", "value")
    assert b'"wide":0E-10,' in written("values", "z_numeric", "value")
    assert b'"fixed":"' in written("base64", "z_numeric", "value")
    assert b'"k":1.50000}' in written("numeric", "z_nkey", "key")
    assert b'"k":"' in written("values", "z_nkey", "key") and b'"k":1.5' not in written("values", "z_nkey", "key")
    decoded = {name: decode_changes(raw[name], OPTIONS[name]) for name in FORMATS}
    base = decoded["base64"]
    for name, d in decoded.items():
        assert d.quarantine is not None and d.quarantine.count() == 0, name
        for table in TABLES:
            a, b = d.tables[triplet[name].topics[table]], base.tables[triplet["base64"].topics[table]]
            assert (a.keys, a.schema) == (b.keys, b.schema), (name, table)
            left, right = _rows(a.rows), _rows(b.rows)
            assert left.count() == right.count() > 0, (name, table)
            assert left.exceptAll(right).count() == 0 and right.exceptAll(left).count() == 0, (name, table)
        root = tmp_path / name
        assert apply_changes(spark, d, root, fmt) == {}
        reports = [verify(triplet[name].dsn, f"public.{t}", table_path(root, triplet[name].topics[t]), fmt)
                   for t in TABLES]
        assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)
        assert [k for k, _ in reports[0].unrepresentable] == [(2,), (3,), (103,)]  # NaN, 50 digits
    numeric = read_table(spark, table_path(tmp_path / "numeric", triplet["numeric"].topics["z_numeric"]), fmt)
    got = {r["id"]: r for r in numeric.collect()}
    assert (got[6]["wide"], got[7]["wide"], got[4]["wide"]) == (D(0), D("1E-8"), D("-1E-10"))
    assert got[8]["wide"] == D("1234567890123456789012345678.0123456789")
    assert (got[3]["wide"], got[3]["fixed"], got[3]["_pgcdc_unrepresentable"]) == (None, D("-0.001"), ["var", "wide"])
    assert got[5]["fixed"] is None and got[5]["_pgcdc_unrepresentable"] is None
    money = read_table(spark, table_path(tmp_path / "numeric", triplet["numeric"].topics["z_money"]), fmt)
    assert {r["m"] for r in money.collect()} == {D("12.34"), D("-1234567.89"), D("0.00"),
                                                 D("92233720368547758.07"), None}
    arrays = read_table(spark, table_path(tmp_path / "numeric", triplet["numeric"].topics["z_num_arr"]), fmt)
    row = arrays.filter("id = 1001").first()
    assert (row["na"], row["wa"]) == ([D("1.25"), None, D("-0.01")], [D("0E-10"), D("1.00E-8")])
    assert arrays.filter("id = 2").first()["_pgcdc_unrepresentable"] == ["wa"]
    nkey = read_table(spark, table_path(tmp_path / "numeric", triplet["numeric"].topics["z_nkey"]), fmt)
    assert D("123456789012345678901234567890123.45678") in {r["k"] for r in nkey.collect()}
    assert D("1.50001") in {r["k"] for r in nkey.collect()}


def test_pgcdc_numeric_records_read_as_base64_are_not_the_table(spark: SparkSession,
                                                                triplet: dict[str, Capture]) -> None:
    """The case the option exists for: without it, NUMERIC records do not give PostgreSQL's values."""
    decoded = decode_changes(read_all(spark, triplet["numeric"]))
    assert decoded.quarantine is not None and decoded.quarantine.count() > 0  # every numeric key
    table = decoded.tables[triplet["numeric"].topics["z_numeric"]]
    fixed = {r["id"]: r["fixed"] for r in table.rows.collect()}
    assert fixed.get(1) != D("1.500")
