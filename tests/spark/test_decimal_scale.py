"""Connect Decimals Spark's DecimalType(38, s) cannot hold exactly are null and named in `_pgcdc_unrepresentable`,
never rounded: a schema scale above 38 (numeric(60,45)) whatever the value, and more than 38 digits at a scale up
to 38. Values of 38 digits or fewer at such a scale stay exact, negative ones too (35 to 38 digits were rounded
to 34 by Spark's abs(), and those within 2**32 of -10**38 overflowed to null). Records made here by the
converters' rules, decimal.format BASE64 and NUMERIC, and one workload captured at once by pgcdc with
JsonConverter BASE64 and NUMERIC, Avro, Protobuf and JSON Schema: the same tables from every format, which
`verify` finds identical to PostgreSQL. The workload uses PostgreSQL 15's numeric(5,-2) and numeric(3,5), as
the spark tier's server (Debian's, for PostGIS) has them."""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.registry import ApicurioRegistry
from pgcdc.spark import AvroFormat, DecodeOptions, apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.changes import POS, Decoded
from pgcdc.spark.jsonschema import JsonSchemaFormat
from pgcdc.spark.protobuf import ProtobufFormat
from pgcdc.spark.verify import verify
from tests.harness import Running, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.spark.conftest import AVRO, Capture, capture_config
from tests.spark.test_decimal_numeric import RAW, _decimal, _encode, _json, _struct
from tests.spark.test_end_to_end import read_all
from tests.spark.test_jsonschema import JSONSCHEMA
from tests.spark.test_protobuf import PROTOBUF

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
    return len(str(abs(int(v.scaleb(scale_of(column), EXACT)))))


def scale_of(column: str) -> int:
    """The Connect schema's scale: PostgreSQL 15's numeric(5,-2) has 2046 (its typmod's 11-bit scale field read
    as a plain number, as pgcdc and the JDBC driver read it), numeric(3,5) has 5."""
    return {"neg": 2046, "tiny": 5}.get(column) or SCALES[ARRAYS.get(column, column)][1]


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
    return v is None or (scale_of(column) <= 38 and unscaled_digits(column, v) <= 38)


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


# -- records pgcdc wrote --------------------------------------------------------------------------------------

def literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, list):
        return "'{" + ",".join("NULL" if x is None else str(x) for x in v) + "}'"
    return f"'{v}'"


def _values(rows: dict[int, dict[str, Any]], offset: int) -> str:
    return ", ".join(f"({i + offset}, {', '.join(literal(v) for v in r.values())})" for i, r in rows.items())


# PostgreSQL 15's numeric(5,-2) (its typmod's scale field reads 2046) and numeric(3,5) (scale above precision)
PG15_ROWS: dict[int, dict[str, Decimal | None]] = {
    1: {"neg": D(12300), "tiny": D("0.00123")}, 2: {"neg": D(-9999900), "tiny": D("-0.00999")},
    3: {"neg": None, "tiny": None}}
CAPTURED = ("z_scale", "z_scale_arr", "z_deepkey", "z_pg15")
SETUP = ["CREATE TABLE z_scale (id int PRIMARY KEY, "
         + ", ".join(f"{c} numeric({p},{s})" for c, (p, s) in SCALES.items()) + ")",
         "CREATE TABLE z_scale_arr (id int PRIMARY KEY, deep_arr numeric(60,45)[], edge_arr numeric(39,38)[])",
         "CREATE TABLE z_deepkey (k numeric(60,45) PRIMARY KEY, v text NOT NULL)",
         "CREATE TABLE z_pg15 (id int PRIMARY KEY, neg numeric(5,-2), tiny numeric(3,5))",
         "CREATE TABLE sentinel (id int PRIMARY KEY)"]
SNAPSHOT = [f"INSERT INTO z_scale VALUES {_values(ROWS, 0)}",
            f"INSERT INTO z_scale_arr VALUES {_values(ARRAY_ROWS, 0)}",
            "INSERT INTO z_deepkey VALUES ('1E-45', 'a'), ('2E-45', 'b'), ('0', 'c')",
            f"INSERT INTO z_pg15 VALUES {_values(PG15_ROWS, 0)}"]
STREAM = [f"INSERT INTO z_scale VALUES {_values(ROWS, 100)}",
          f"INSERT INTO z_scale_arr VALUES {_values(ARRAY_ROWS, 100)}",
          "UPDATE z_scale SET deep = NULL WHERE id = 101", "DELETE FROM z_scale WHERE id = 102",
          "UPDATE z_scale_arr SET deep_arr = '{}' WHERE id = 103",
          "INSERT INTO z_deepkey VALUES ('-1E-45', 'd')", "UPDATE z_deepkey SET v = 'e' WHERE k = 0",
          "DELETE FROM z_deepkey WHERE v = 'b'", "UPDATE z_pg15 SET neg = neg + 100, tiny = 0 WHERE id = 1",
          "INSERT INTO sentinel VALUES (1)"]


def final(rows: dict[int, dict[str, Any]], changes: dict[int, dict[str, Any]], gone: set[int]) -> dict[int, Any]:
    """The table PostgreSQL ends with: the rows at i and 100 + i, changed and deleted as STREAM does."""
    out = {n: dict(r) for i, r in rows.items() for n in (i, 100 + i)}
    for n, change in changes.items():
        out[n].update(change)
    return {n: r for n, r in out.items() if n not in gone}


FINAL = {"z_scale": final(ROWS, {101: {"deep": None}}, {102}),
         "z_scale_arr": final(ARRAY_ROWS, {103: {"deep_arr": []}}, set()),
         "z_pg15": {1: {"neg": D(12400), "tiny": D("0.00000")}, **{i: PG15_ROWS[i] for i in (2, 3)}}}

REGISTRY_FORMATS = {"avro": (AVRO, AvroFormat), "protobuf": (PROTOBUF, ProtobufFormat),
                    "jsonschema": (JSONSCHEMA, JsonSchemaFormat)}
FORMATS = ("base64", "numeric", *REGISTRY_FORMATS)


@pytest.fixture(scope="module")
def captures(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> dict[str, Capture]:
    """One database captured at once by one pgcdc run per format (Protobuf without the array table: a repeated
    field cannot hold a null element)."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in SETUP + SNAPSHOT:
        pg.execute(stmt, dbname)
    out, configs = {}, []
    for name in FORMATS:
        props = {"key.converter.decimal.format": "NUMERIC", "value.converter.decimal.format": "NUMERIC"} \
            if name == "numeric" else {}
        if name in REGISTRY_FORMATS:
            converter = REGISTRY_FORMATS[name][0]
            props = {"key.converter": converter, "value.converter": converter,
                     "converter.schema.registry.url": registry.url}
        tables = [t for t in CAPTURED if not (name == "protobuf" and t == "z_scale_arr")]
        prefix = f"{name}{uuid.uuid4().hex[:6]}"
        configs.append(capture_config(pg, dbname, broker, prefix, name, tables, props))
        out[name] = Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in tables},
                            registry.url if name in REGISTRY_FORMATS else "")
    with ExitStack() as stack:
        for config in configs:
            stack.enter_context(Running(config))
        for stmt in STREAM:
            pg.execute(stmt, dbname)
        for c in out.values():
            sentinel = c.topics["z_scale"].replace(".z_scale", ".sentinel")

            def arrived(topic: str = sentinel) -> bool:
                return bool(read_raw(broker.bootstrap_servers, topic, timeout=10, to_end=False))

            wait_for(arrived, 120, "the workload's last event in Kafka")
    return out


def _decode(spark: SparkSession, name: str, capture: Capture) -> tuple[DataFrame, Decoded]:
    raw = read_all(spark, capture)
    if name in REGISTRY_FORMATS:
        return raw, decode_changes(raw, fmt=REGISTRY_FORMATS[name][1](capture.registry))  # type: ignore[operator]
    return raw, decode_changes(raw, DecodeOptions(decimal_format=name))


def test_pgcdc_records_are_never_rounded(spark: SparkSession, captures: dict[str, Capture], tmp_path: Path) -> None:
    base_raw, _ = _decode(spark, "base64", captures["base64"])
    schema_text = b"\n".join(bytes(r[0]) for r in base_raw.filter(
        F.col("topic") == captures["base64"].topics["z_pg15"]).select("value").dropna().collect())
    assert b'"scale":"2046","connect.decimal.precision":"5"' in schema_text
    decoded = {name: _decode(spark, name, c) for name, c in captures.items()}
    base = decoded["base64"][1]
    for name, (raw, d) in decoded.items():
        capture = captures[name]
        # every record keyed by numeric(60,45) is quarantined, every other one is decoded; but with NUMERIC,
        # numeric(5,-2) is a number of 2046 places, and from_json (Jackson: numbers of at most 1000 characters)
        # then reads nothing of its record
        keyed = raw.filter((F.col("topic") == capture.topics["z_deepkey"]) & F.col("key").isNotNull()).count()
        skipped = {"z_deepkey", *(["z_pg15"] if name == "numeric" else [])}
        too_long = raw.filter((F.col("topic") == capture.topics["z_pg15"])
                              & F.col("value").cast("string").rlike("[0-9.]{1001}")).count()
        reasons = [(capture.topics["z_deepkey"], "cannot represent value of k")]
        if name == "numeric":
            reasons.append((capture.topics["z_pg15"], "malformed envelope: no payload.op"))
        assert d.quarantine is not None
        assert sorted({(r["topic"], r["reason"]) for r in d.quarantine.collect()}) == sorted(reasons), name
        assert d.quarantine.count() == keyed + (too_long if name == "numeric" else 0), name
        assert keyed > 0 and too_long == (3 if name == "numeric" else 0), name
        for table in capture.topics:
            if table in skipped:
                continue
            a, b = d.tables[capture.topics[table]], base.tables[captures["base64"].topics[table]]
            assert a.schema == b.schema, (name, table)
            left, right = a.rows.drop(POS), b.rows.drop(POS)
            assert left.exceptAll(right).count() == 0 and right.exceptAll(left).count() == 0, (name, table)
        root = tmp_path / name
        apply_changes(spark, d, root)
        for table, rows in FINAL.items():
            if table not in capture.topics or table in skipped:
                continue
            path = table_path(root, capture.topics[table])
            report = verify(capture.dsn, f"public.{table}", path)
            assert report.ok, report.text()
            assert [k for k, _ in report.unrepresentable] == sorted((i,) for i, r in rows.items() if marked(r))
            assert_rows(read_table(spark, path).collect(), rows)
