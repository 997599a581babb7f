"""Kafka Connect's TimestampConverter on two corners, compared with Debezium 3.6 on the initial snapshot (op r) and on
streaming: SimpleDateFormat's week letters (w, W, Y, u, F, E, D, L) on timestamps around year ends (the JVM
default locale's weeks, the Julian calendar before 1582-10-15, BC years, years 1 and 9999), and timestamptz
columns, which Debezium writes as io.debezium.time.ZonedTimestamp strings, parsed with `format` into each target
type (years 1, 9999 and 4713 BC, microseconds); PostgreSQL's 'infinity' does not parse and fails the record."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.transforms.java_calendar import _gregorian_date, calendar_days
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import slot_active
from tests.conformance.test_transforms_specials_vs_debezium import _pgcdc_failure, chain
from tests.conformance.test_transforms_vs_debezium import DATA, RawSink, assert_same_records, run_recorded
from tests.harness import Running, make_config, wait_for


def _pg_timestamp(days: int, time: str) -> str:
    """PostgreSQL's (proleptic Gregorian) literal of a day Java's calendar counts the same."""
    y, m, d = _gregorian_date(days)
    return f"'{y if y > 0 else 1 - y:04d}-{m:02d}-{d:02d} {time}{' BC' if y <= 0 else ''}'"


# Days around the ends of years as Java's calendar has them (Julian before 1582-10-15; the proleptic year 0 is
# 1 BC): December 28 to January 4 before each year, and days of October 1582 on both sides of the cutover.
YEARS = (2021, 2027, 1582, 1583, 1, 2, -42, 10000)
WEEK_DAYS = [calendar_days(y, 0, 1) + d for y in YEARS for d in range(-4, 4)] + [
    calendar_days(1582, 9, d) for d in (1, 4, 15, 17, 21, 22, 24, 25, 28, 31)]
WEEK_VALUES = [_pg_timestamp(days, "12:34:56.789012") for days in WEEK_DAYS]
ZONED_VALUES = ["'2024-02-29 12:34:56.789012+00'", "'1970-01-01 00:00:00.000001+00'",
                "'1969-12-31 23:59:59.999999+00'", "'0001-01-01 00:00:00+00'", "'9999-12-31 23:59:59.999999+00'",
                "'4713-01-01 00:00:00+00 BC'", "'0044-03-15 12:00:00+00 BC'", "'1582-10-15 00:00:00+00'",
                "'1582-10-04 23:59:59.5+00'", "NULL"]
W_COLS, Z_COLS = ("w1", "w2", "w3", "w4", "w5"), ("z1", "z2", "z3", "z4", "z5", "z6")
SETUP = ("CREATE TABLE wk (id int PRIMARY KEY, " + ", ".join(f"{c} timestamp" for c in W_COLS) + ", "
         + ", ".join(f"{c} timestamptz" for c in Z_COLS) + ")")


def _rows(first: int, step: int = 1) -> str:
    return ", ".join(f"({first + n}, {', '.join([w] * len(W_COLS) + [ZONED_VALUES[n % len(ZONED_VALUES)]] * 6)})"
                     for n, w in enumerate(WEEK_VALUES) if n % step == 0)


SNAPSHOT = SETUP + "; INSERT INTO wk VALUES " + _rows(1)
WORKLOAD = ["INSERT INTO wk VALUES " + _rows(101, 3),
            f"UPDATE wk SET w1 = {WEEK_VALUES[0]}, z1 = '2024-12-29 23:59:59.999999+00' WHERE id = 2",
            "DELETE FROM wk WHERE id = 3"]
ZONED = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSX"
SCENARIO = "snapshot_timestamp_converter_weeks_and_zoned"
PROPS = chain({
    # timestamp is MicroTimestamp (time.precision.mode=adaptive): unix time in microseconds to Kafka Connect
    "c1": "w1:string:microseconds:YYYY-'W'ww-u", "c2": "w2:string:microseconds:yyyy-MM-dd G EEEE W F D w Y",
    "c3": "w3:string:microseconds:YY YYYYY w W F DDD EEE u LLL LLLL L", "c4": "w4:string:microseconds:Y ww yyyy",
    # microseconds read as seconds: years in the millions, or the long range's ends (saturated)
    "c11": "w5:string:seconds:G yyyy Y w W F u E D",
    # timestamptz is a ZonedTimestamp string: parsed with `format` (the only format, also used to write)
    "c5": f"z1:string::{ZONED}", "c6": "z2:unix::yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX", "c7": "z3:Date::yyyy-MM-dd",
    "c8": "z4:Time::yyyy-MM-dd'T'HH:mm:ss", "c9": f"z5:Timestamp::{ZONED}",
    "c10": "z6:unix:microseconds:yyyy-MM-dd'T'HH:mm:ss.SSS"}, **{"table.include.list": "public.wk"})


def test_timestamp_converter_weeks_and_zoned_match_debezium(pg: PostgresCluster, dbname: str,
                                                            tmp_path: Path) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, SNAPSHOT, PROPS, WORKLOAD, SCENARIO, snapshot=True)
    assert {r["value"]["payload"]["__op"] for r in theirs if r["topic"].endswith(".wk")} >= {"r", "c", "u", "d"}
    assert_same_records(SCENARIO, ours, theirs, snapshot=True)


class _Lines(RawSink):
    """RawSink's lines, kept in memory."""

    def __init__(self) -> None:
        self.out = io.StringIO()

    def close(self) -> None:
        pass


def _record_failure(pg: PostgresCluster, dbname: str, label: str, props: dict[str, str], java: str) -> None:
    """With PGCDC_RECORD_TRANSFORMS=1: the table's untransformed records (read by a snapshot), the chain's
    properties and the line Debezium failed with, for tests/unit/test_timestamp_weeks.py to replay."""
    if not os.environ.get("PGCDC_RECORD_TRANSFORMS"):
        return
    raw = {k: v for k, v in props.items() if not k.startswith("transforms")}
    sink = _Lines()
    with Running(make_config(pg, dbname, **{**raw, "name": "raw", "snapshot.mode": "initial",
                                            "slot.name": f"raw_{dbname}", "publication.name": f"rawpub_{dbname}"}),
                 sink=sink):
        wait_for(lambda: sink.out.getvalue().count(".wk") >= 2, 60, "pgcdc's snapshot")
    (DATA / f"{label}.input.jsonl").write_text(sink.out.getvalue())
    (DATA / f"{label}.fails.json").write_text(json.dumps({"props": props, "debezium": java}, indent=1) + "\n")


FAILURES = {
    # snapshot: the first row's 'infinity' (Debezium passes PostgreSQL's word through) does not parse
    "snapshot_timestamp_converter_zoned_infinity": (
        "initial", "'infinity'", {"c1": f"z1:string::{ZONED}"}, "infinity"),
    # streaming: '-infinity' into a Timestamp, with a format that would ignore text after it
    "timestamp_converter_zoned_minus_infinity": (
        "no_data", "'-infinity'", {"c1": "z1:Timestamp::yyyy-MM-dd"}, "-infinity"),
}


@pytest.mark.parametrize("label", sorted(FAILURES))
def test_timestamp_converter_zoned_infinity_fails_like_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                                label: str) -> None:
    mode, value, convs, text = FAILURES[label]
    pg.execute("CREATE TABLE wk (id int PRIMARY KEY, z1 timestamptz)", dbname)
    rows = f"INSERT INTO wk VALUES (1, {value}), (2, '2024-02-29 12:00:00+00')"
    if mode == "initial":
        pg.execute(rows, dbname)
    props = {"topic.prefix": "dbserver1", "snapshot.mode": mode, **chain(convs)}
    out = tmp_path / "dbz.jsonl"
    oracle = start_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                        "slot.name": f"dbz_{dbname}",
                                                        "publication.name": f"dbzpub_{dbname}"}}, out)
    try:
        if mode != "initial":
            wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120,
                     "Debezium to stream")
            pg.execute(rows, dbname)
        wait_for(lambda: oracle.poll() is not None, 120, "Debezium to fail the record")
    finally:
        if oracle.poll() is None:
            stop_oracle(oracle, out)
    log = out.with_suffix(".jvm.log").read_text()
    found = re.search(r"DataException: (Could not parse timestamp: [^\n]*)", log)
    assert oracle.returncode != 0 and found, log[-3000:]
    java = found.group(1)
    assert text in java and props["transforms.c1.format"] in java
    workload = "" if mode == "initial" else rows.replace("(1,", "(3,").replace("(2,", "(4,")
    ours = _pgcdc_failure(pg, dbname, {**props, "name": "pgcdc"}, workload)
    print(f"Debezium: {java}\npgcdc: {ours}")
    assert ours == (f"transforms.c1 (org.apache.kafka.connect.transforms.TimestampConverter$Value) failed on a "
                    f"record for topic 'dbserver1.public.wk': {java} (errors.tolerance=none)")
    _record_failure(pg, dbname, label, props, java)
