"""Special values through Kafka Connect's MaskField and TimestampConverter, compared with Debezium 3.6 record by
record, on the initial snapshot (op r) and on streaming: float32/float64 replacements at and past the edges of
their ranges (infinities, subnormals, signed zeros), replacements that do not parse, and timestamps, dates and
times at the ends of PostgreSQL's ranges (years 1 and 9999, BC, infinity, microseconds, the Julian calendar)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pgcdc.errors import PgcdcError
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.conformance.oracle import run_oracle, start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import slot_active
from tests.conformance.test_transforms_vs_debezium import K, assert_same_records, run_recorded, unwrap
from tests.harness import make_config, wait_for

MASK = K + "MaskField$Value"
# Each column masked by its own MaskField with its own replacement (column -> replacement), read by
# Values.convertToFloat/convertToDouble as `new BigDecimal(text).doubleValue()` (ConfigDef trims the setting first:
# " +.5 " is 0.5).
REAL_REPLACEMENTS = {"r1": "3.4028235E38", "r2": "3.4028236E38", "r3": "-1e39", "r4": "-0.0", "r5": "1.4E-45",
                     "r6": "7.0E-46", "r7": "-1e-50", "r8": "16777217"}
DOUBLE_REPLACEMENTS = {"d1": "1e308", "d2": "1.7976931348623157E308", "d3": "1e309", "d4": "-1e400",
                       "d5": "4.9E-324", "d6": "2.4703282292062328E-324", "d7": "-0.0", "d8": "-1e-400",
                       "d9": " +.5 ", "d10": "1E+2"}
# Values.convertToShort/Integer/Long read the text as a BigDecimal and narrow it as Java casts do.
INT_REPLACEMENTS = {"s": "70000.9", "i": "-1.9", "big": "1e20"}
REPLACEMENTS = {**REAL_REPLACEMENTS, **DOUBLE_REPLACEMENTS, **INT_REPLACEMENTS}
F_COLUMNS = list(REPLACEMENTS)
F_SETUP = ("CREATE TABLE f (id int PRIMARY KEY, " + ", ".join(
    f"{c} {'real' if c in REAL_REPLACEMENTS else 'double precision' if c in DOUBLE_REPLACEMENTS else ''}"
    for c in F_COLUMNS if c not in INT_REPLACEMENTS) + ", s smallint, i int, big bigint)")


def _f_row(id_: int, real: str, double: str, integer: str) -> str:
    vals = [real if c in REAL_REPLACEMENTS else double if c in DOUBLE_REPLACEMENTS else integer for c in F_COLUMNS]
    return f"({id_}, {', '.join(vals)})"


F_ROWS = [_f_row(1, "1.5", "2.5", "7"), _f_row(2, "NULL", "NULL", "NULL"),
          _f_row(3, "'NaN'", "'-Infinity'", "-1"), _f_row(4, "-0.0", "1e-320", "0")]
F_SNAPSHOT = F_SETUP + "; INSERT INTO f VALUES " + ", ".join(F_ROWS)
F_WORKLOAD = [
    "INSERT INTO f VALUES " + ", ".join([_f_row(10, "'Infinity'", "'NaN'", "1"), _f_row(11, "NULL", "NULL", "NULL")]),
    "UPDATE f SET r1 = 2, d1 = NULL WHERE id = 1",
    "DELETE FROM f WHERE id = 3",
]


def masks(replacements: dict[str, str]) -> dict[str, str]:
    props: dict[str, str] = {}
    for c, text in replacements.items():
        props |= {f"transforms.m_{c}.type": MASK, f"transforms.m_{c}.fields": c,
                  f"transforms.m_{c}.replacement": text}
    return props


MASK_SCENARIOS: dict[str, dict[str, str]] = {
    # rewrite: a delete keeps a value with a schema (MaskField fails a tombstone: see below).
    "snapshot_mask_float_and_int_replacements": {
        "transforms": "unwrap," + ",".join(f"m_{c}" for c in F_COLUMNS), **unwrap(add_fields="op"),
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite", **masks(REPLACEMENTS)},
}


@pytest.mark.parametrize("scenario", sorted(MASK_SCENARIOS))
def test_mask_field_special_replacements_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                        scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, F_SNAPSHOT, MASK_SCENARIOS[scenario], F_WORKLOAD, scenario,
                                snapshot=True)
    assert {r["value"]["payload"]["__op"] for r in theirs if r["topic"].endswith(".f")} >= {"r", "c", "u", "d"}
    assert_same_records(scenario, ours, theirs, snapshot=True)


def _pgcdc_failure(pg: PostgresCluster, dbname: str, props: dict[str, str], workload: str = "") -> str:
    """The one line pgcdc stops with on `props`' connector (its snapshot, or `workload` once it streams)."""
    connector = Connector(make_config(pg, dbname, **props), sink=MemorySink())
    errors: list[BaseException] = []

    def run() -> None:
        try:
            connector.run()
        except BaseException as exc:
            errors.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if workload:
        assert connector.ready.wait(60)
        pg.execute(workload, dbname)
    thread.join(90)
    if thread.is_alive():
        connector.stop()
        thread.join(30)
    assert errors and isinstance(errors[0], PgcdcError), errors
    return str(errors[0])


# Replacements Values.convertToFloat/convertToDouble cannot read (new BigDecimal(text) refuses them, and so does
# asLong): the record fails once it reaches a non-null value of the field (row 1 is null there, row 2 is not).
@pytest.mark.parametrize(("column", "replacement"), [
    ("r", "NaN"), ("d", "-Infinity"), ("r", "1.5f"), ("d", "1_000"), ("d", "1e2147483648"), ("i", "NaN")])
def test_mask_field_unparsable_replacement_fails_like_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                               column: str, replacement: str) -> None:
    pg.execute("CREATE TABLE g (id int PRIMARY KEY, r real, d double precision, i int);"
               "INSERT INTO g VALUES (1, NULL, NULL, NULL), (2, 1.5, 2.5, 3)", dbname)
    props = {"snapshot.mode": "initial", "topic.prefix": "dbserver1", "transforms": "unwrap,m", **unwrap(),
             "transforms.m.type": MASK, "transforms.m.fields": column, "transforms.m.replacement": replacement}
    with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
        run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                 "slot.name": f"dbz_{dbname}",
                                                 "publication.name": f"dbzpub_{dbname}"}}, tmp_path / "dbz.jsonl")
    java = f"Unable to convert {replacement} (class java.lang.String) to a number"
    assert java in str(exc.value)
    ours = _pgcdc_failure(pg, dbname, {**props, "name": "pgcdc"})
    print(f"Debezium: {java}\npgcdc: {ours}")
    assert ours == (f"transforms.m ({MASK}) failed on a record for topic 'dbserver1.public.g': replacement "
                    f"{replacement!r} for field {column!r}: {java} (errors.tolerance=none)")


TSC = K + "TimestampConverter$Value"
TS_VALUES = ["'2024-02-29 12:34:56.789012'", "'1969-12-31 23:59:59.999999'", "'1970-01-01 00:00:00.000001'",
             "'0001-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'1582-10-04 23:59:59.999'",
             "'1582-10-15 00:00:00'", "'1500-03-01 12:00:00'", "'0044-03-15 12:00:00 BC'",
             "'4713-01-01 00:00:00 BC'", "'infinity'", "'-infinity'", "NULL"]
DATE_VALUES = ["'2024-02-29'", "'1969-12-31'", "'1970-01-01'", "'0001-01-01'", "'9999-12-31'", "'1582-10-04'",
               "'1582-10-15'", "'1500-03-01'", "'0044-03-15 BC'", "'4713-01-01 BC'", "'infinity'", "'-infinity'",
               "NULL"]
TIME_VALUES = ["'12:34:56.789012'", "'23:59:59.999999'", "'00:00:00.000001'", "'00:00:00'", "'24:00:00'", "NULL"]
T_TS, T_DATES, T_TIMES = ["ts1", "ts2", "ts3", "ts4", "ts5", "ts6", "ts7", "ts8"], ["dt1", "dt2", "dt3"], ["tm1", "tm2"]
T_SETUP = ("CREATE TABLE tt (id int PRIMARY KEY, " + ", ".join(f"{c} timestamp" for c in T_TS) + ", t3 timestamp(3), "
           + ", ".join(f"{c} date" for c in T_DATES) + ", " + ", ".join(f"{c} time" for c in T_TIMES) + ")")


def _t_rows(first: int, only: tuple[int, ...] = ()) -> str:
    rows = []
    for n, ts in enumerate(TS_VALUES):
        if only and n not in only:
            continue
        vals = [ts] * (len(T_TS) + 1) + [DATE_VALUES[n]] * len(T_DATES) + [TIME_VALUES[n % len(TIME_VALUES)]] * 2
        rows.append(f"({first + n}, {', '.join(vals)})")
    return ", ".join(rows)


T_SNAPSHOT = T_SETUP + "; INSERT INTO tt VALUES " + _t_rows(1)
T_WORKLOAD = ["INSERT INTO tt VALUES " + _t_rows(101), "UPDATE tt SET ts1 = '0001-01-01 00:00:00.000001' WHERE id = 1",
              "DELETE FROM tt WHERE id = 4"]


def converters(**specs: str) -> dict[str, str]:
    """alias=field:target[:precision[:format]]"""
    props: dict[str, str] = {}
    for alias, spec in specs.items():
        field, target, precision, fmt = [*spec.split(":", 3), "", ""][:4]
        props |= {f"transforms.{alias}.type": TSC, f"transforms.{alias}.field": field,
                  f"transforms.{alias}.target.type": target}
        if precision:
            props[f"transforms.{alias}.unix.precision"] = precision
        if fmt:
            props[f"transforms.{alias}.format"] = fmt
    return props


def chain(convs: dict[str, str], **extra: str) -> dict[str, str]:
    return {"transforms": "unwrap," + ",".join(convs), **unwrap(add_fields="op"),
            "transforms.unwrap.delete.tombstone.handling.mode": "rewrite", **converters(**convs), **extra}


TS_SCENARIOS: dict[str, dict[str, str]] = {
    # time.precision.mode=adaptive: timestamp is MicroTimestamp and time MicroTime (int64: unix time to Kafka
    # Connect, in unix.precision), timestamp(3) io.debezium.time.Timestamp (int64 milliseconds).
    "snapshot_timestamp_converter_micro_extremes": chain({
        "c1": "ts1:string:microseconds:yyyy-MM-dd HH:mm:ss.SSS", "c2": "ts2:string:microseconds:"
        "G yyyy-MM-dd'T'HH:mm:ss.SSS EEE D", "c3": "ts3:unix:microseconds", "c4": "ts4:Date:microseconds",
        "c5": "ts5:Time:microseconds", "c6": "ts6:Timestamp:microseconds", "c7": "ts7:unix:seconds",
        "c8": "t3:string::yyyy-MM-dd HH:mm:ss.SSS", "c9": "tm1:Time:microseconds",
        "c10": "tm2:string:microseconds:HH:mm:ss.SSS",
        # microseconds read as seconds: millions of years away, or past the long range (saturated)
        "c11": "ts8:string:seconds:G yyyy-MM-dd HH:mm:ss.SSS"}, **{"table.include.list": "public.tt",
                                                         "column.exclude.list": "public.tt.dt.*"}),
    # time.precision.mode=connect: Kafka Connect's own Timestamp, Date and Time (milliseconds).
    "snapshot_timestamp_converter_connect_extremes": chain({
        "c1": "ts1:string::yyyy-MM-dd HH:mm:ss.SSS G", "c2": "ts2:unix", "c3": "ts3:Date", "c4": "ts4:Time",
        "c5": "ts5:unix:microseconds", "c6": "dt1:string::yyyy-MM-dd G", "c7": "dt2:unix",
        "c8": "dt3:Timestamp", "c9": "tm1:string::HH:mm:ss.SSS", "c10": "tm2:unix:microseconds"},
        **{"time.precision.mode": "connect", "table.include.list": "public.tt"}),
}


# Microseconds read as seconds to a Date: before 1677 the milliseconds saturate at Long.MIN_VALUE, whose
# Calendar midnight is before it and fails the record (Date.fromLogical: "time fields set to non-zero values"):
# those rows left out; after 1970, day counts beyond an int wrap.
LATE = (0, 1, 2, 4, 10, 12)  # 2024, 1969-12-31, 1970-01-01, 9999, infinity, NULL
TS_SCENARIOS["snapshot_timestamp_converter_seconds_to_date"] = chain(
    {"c1": "ts1:Date:seconds", "c2": "ts2:Timestamp:seconds"}, **{"table.include.list": "public.tt"})
TS_SETUPS = {"snapshot_timestamp_converter_seconds_to_date": (
    T_SETUP + "; INSERT INTO tt VALUES " + _t_rows(1, LATE),
    ["INSERT INTO tt VALUES " + _t_rows(101, LATE), "UPDATE tt SET ts1 = '5000-01-01 00:00:00.5' WHERE id = 1",
     "DELETE FROM tt WHERE id = 5"])}


@pytest.mark.parametrize("scenario", sorted(TS_SCENARIOS))
def test_timestamp_converter_extremes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                     scenario: str) -> None:
    setup, workload = TS_SETUPS.get(scenario, (T_SNAPSHOT, T_WORKLOAD))
    ours, theirs = run_recorded(pg, dbname, tmp_path, setup, TS_SCENARIOS[scenario], workload, scenario,
                                snapshot=True)
    assert {r["value"]["payload"]["__op"] for r in theirs if r["topic"].endswith(".tt")} >= {"r", "c", "u", "d"}
    assert_same_records(scenario, ours, theirs, snapshot=True)


def test_mask_field_fails_a_tombstone_like_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    # MaskField reads a record without a schema as a Map (Requirements.requireMap): a tombstone's null is none.
    pg.execute("CREATE TABLE g (id int PRIMARY KEY, r real)", dbname)
    props = {"topic.prefix": "dbserver1", "transforms": "m", "transforms.m.type": MASK, "transforms.m.fields": "r"}
    out = tmp_path / "dbz.jsonl"
    oracle = start_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                        "snapshot.mode": "no_data", "slot.name": f"dbz_{dbname}",
                                                        "publication.name": f"dbzpub_{dbname}"}}, out)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        pg.execute("INSERT INTO g VALUES (1, 1.5); DELETE FROM g", dbname)
        wait_for(lambda: oracle.poll() is not None, 120, "Debezium to stop on the tombstone")
    finally:
        if oracle.poll() is None:
            stop_oracle(oracle, out)
    java = "Only Map objects supported in absence of schema for [mask fields], found: null"
    assert oracle.returncode != 0 and java in out.with_suffix(".jvm.log").read_text()
    ours = _pgcdc_failure(pg, dbname, {**props, "name": "pgcdc", "snapshot.mode": "no_data"},
                          "INSERT INTO g VALUES (2, 2.5); DELETE FROM g WHERE id = 2")
    assert ours == (f"transforms.m ({MASK}) failed on a record for topic 'dbserver1.public.g': {java} "
                    "(errors.tolerance=none)")
