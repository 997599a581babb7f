"""Infinite, extreme, BC and 24:00 temporal values and intervals beyond ±2^63 µs through the real Debezium 3.6
and pgcdc, in a snapshot and in streaming, in every time.precision.mode and interval.handling.mode: every
record must be equal (neither connector may stop on a value PostgreSQL accepts).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

EXT_SETUP = (
    "CREATE TABLE ext (id int PRIMARY KEY, d date, t time, t3 time(3), t0 time(0), ttz timetz, ttz0 timetz(0),"
    " ts timestamp, ts3 timestamp(3), ts0 timestamp(0), tz timestamptz, tz3 timestamptz(3), tz0 timestamptz(0),"
    " iv interval, ad date[], atm time[], atm3 time(3)[], attz timetz[], ats timestamp[], ats3 timestamp(3)[],"
    " atz timestamptz[])"
)
# One row per kind of value: (id, {column: literal}); columns left out are NULL.
_INF = {"d": "infinity", "ts": "infinity", "ts3": "infinity", "ts0": "infinity", "tz": "infinity",
        "tz3": "infinity", "tz0": "infinity", "ad": "{infinity}", "ats": "{infinity}", "ats3": "{infinity}",
        "atz": "{infinity}"}
EXT_ROWS: list[tuple[int, dict[str, str]]] = [
    (1, _INF),
    (2, {k: v.replace("infinity", "-infinity") for k, v in _INF.items()}),
    # The smallest values PostgreSQL accepts.
    (3, {"d": "4713-01-01 BC", "t": "00:00:00", "t3": "00:00:00", "t0": "00:00:00", "ttz": "00:00:00+15:59",
         "ttz0": "00:00:00-15:59", "ts": "4713-01-01 00:00:00 BC", "ts3": "4713-01-01 00:00:00 BC",
         "ts0": "4713-01-01 00:00:00 BC", "tz": "4713-01-01 00:00:00+00 BC", "tz3": "4713-01-01 00:00:00+00 BC",
         "tz0": "4713-01-01 00:00:00+00 BC", "iv": "-178000000 years", "ad": "{\"4713-01-01 BC\"}",
         "atm": "{00:00:00}", "atm3": "{00:00:00}", "attz": "{00:00:00+15:59}",
         "ats": "{\"4713-01-01 00:00:00 BC\"}", "ats3": "{\"4713-01-01 00:00:00 BC\"}",
         "atz": "{\"4713-01-01 00:00:00+00 BC\"}"}),
    # The largest.
    (4, {"d": "5874897-12-31", "t": "24:00:00", "t3": "24:00:00", "t0": "24:00:00", "ttz": "24:00:00-15:59",
         "ttz0": "24:00:00+15:59", "ts": "294276-12-31 23:59:59.999999", "ts3": "294276-12-31 23:59:59.999",
         "ts0": "294276-12-31 23:59:59", "tz": "294276-12-31 23:59:59.999999+00",
         "tz3": "294276-12-31 23:59:59.999+00", "tz0": "294276-12-31 23:59:59+00", "iv": "178000000 years",
         "ad": "{5874897-12-31}", "atm": "{24:00:00}", "atm3": "{24:00:00}", "attz": "{24:00:00+00}",
         "ats": "{\"294276-12-31 23:59:59.999999\"}", "ats3": "{\"294276-12-31 23:59:59.999\"}",
         "atz": "{\"294276-12-31 23:59:59.999999+00\"}"}),
    # Ordinary BC values and the last microsecond of a day.
    (5, {"d": "0044-03-15 BC", "t": "23:59:59.999999", "t3": "23:59:59.999", "t0": "23:59:59",
         "ttz": "23:59:59.999999+00", "ttz0": "00:00:00+00", "ts": "0044-03-15 12:34:56.789012 BC",
         "ts3": "0001-12-31 23:59:59.999 BC", "ts0": "0001-01-01 00:00:00 BC",
         "tz": "0044-03-15 12:34:56.789012+05:30 BC", "tz3": "0001-12-31 23:59:59.999+00 BC",
         "tz0": "0001-01-01 00:00:00+00 BC", "iv": "2147483647 days 2147483647:59:59.999999",
         "ad": "{\"0044-03-15 BC\"}", "atm": "{23:59:59.999999}", "atm3": "{23:59:59.999}",
         "attz": "{23:59:59.999999-01}", "ats": "{\"0044-03-15 12:34:56.789012 BC\"}",
         "ats3": "{\"0001-12-31 23:59:59.999 BC\"}", "atz": "{\"0044-03-15 12:34:56.789012+00 BC\"}"}),
    # Intervals at and beyond the int64 microseconds of io.debezium.time.MicroDuration. (Hours beyond 2^31-1,
    # which PostgreSQL allows up to 2562047788, stop Debezium's snapshot: pgjdbc reads them as an int.)
    (6, {"iv": "-178000000 years -2147483648 days -2147483647:59:59.999999"}),
    (7, {"iv": "2147483647:59:59.999999"}),
    (8, {"iv": "-2147483647:59:59.999999"}),
    (9, {"iv": "292277 years"}),
    (10, {"iv": "-292277 years -1 days"}),
    (11, {"iv": "2147483647 mons 2147483647 days"}),
    # Fractions of a second in time arrays (java.sql.Time keeps milliseconds), ordinary intervals.
    (12, {"t": "12:00:00.5", "ttz": "12:00:00.5+02", "iv": "1 year 2 mons 3 days 04:05:06.789",
          "atm": "{12:00:00.5,00:00:00.12,13:00:00,00:00:00.000999}", "atm3": "{12:00:00.5,13:00:00}",
          "attz": "{12:00:00.5+02,13:00:00.123456-01}", "ad": "{2024-02-29,10000-01-01}",
          "ats": "{\"2024-02-29 12:00:00.5\",\"10000-01-01 00:00:00\"}", "ats3": "{\"2024-02-29 12:00:00.5\"}",
          "atz": "{\"2024-02-29 12:00:00.5+00\",\"10000-01-01 00:00:00+00\"}"}),
    (13, {"iv": "-1 days -00:00:00.000001", "t": "00:00:00.000001"}),
    (14, {"iv": "0.1 seconds"}),
    (15, {"iv": "1 mon -00:00:00.3"}),
]


def insert(row: tuple[int, dict[str, str]], id_offset: int = 0, table: str = "ext") -> str:
    rid, values = row
    cols = ", ".join(["id", *values])
    literals = ", ".join([str(rid + id_offset), *(f"'{v}'" for v in values.values())])
    return f"INSERT INTO {table} ({cols}) VALUES ({literals})"


EXT_INSERTS = [insert(row) for row in EXT_ROWS]
# The modes: every time.precision.mode, and both interval.handling.modes (an interval's value does not depend on
# the time mode).
EXT_MODES: dict[str, dict[str, str]] = {
    "adaptive": {},
    "adaptive_time_microseconds": {"time.precision.mode": "adaptive_time_microseconds",
                                   "interval.handling.mode": "string"},
    "connect": {"time.precision.mode": "connect"},
    "isostring": {"time.precision.mode": "isostring", "interval.handling.mode": "string"},
}


@pytest.mark.parametrize("mode", sorted(EXT_MODES))
def test_extreme_values_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, EXT_SETUP, EXT_MODES[mode], EXT_INSERTS)
    assert_same(f"extreme values streaming, {mode}", ours, theirs)
    assert len(theirs) == len(EXT_ROWS)


@pytest.mark.parametrize("mode", sorted(EXT_MODES))
def test_extreme_values_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([EXT_SETUP, *EXT_INSERTS]), EXT_MODES[mode],
                            ["INSERT INTO ext (id) VALUES (99)"], snapshot=True)
    assert_same(f"extreme values snapshot, {mode}", ours, theirs, snapshot=True)
    assert len(theirs) == len(EXT_ROWS) + 1


# -- integers at the edges of their Connect types ---------------------------------------------------------------
INT_SETUP = (
    "CREATE TABLE ints (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, ai2 int2[], ai4 int4[], ai8 int8[], o oid,"
    " ao oid[], mo money, b64 bit(64), vb varbit, n numeric(38,0), n2 numeric(38,2), nn numeric, ann numeric(38,0)[])"
)
INT_ROWS: list[tuple[int, dict[str, str]]] = [
    (1, {"i2": "32767", "i4": "2147483647", "i8": "9223372036854775807", "ai2": "{32767,-32768}",
         "ai4": "{2147483647,-2147483648}", "ai8": "{9223372036854775807,-9223372036854775808}", "o": "4294967295",
         "ao": "{4294967295,0}", "mo": "92233720368547758.07", "b64": "1" * 64, "vb": "1" * 200,
         "n": "9" * 38, "n2": "9" * 36 + ".99", "nn": "9" * 100 + "." + "9" * 50, "ann": "{" + "9" * 38 + "}"}),
    (2, {"i2": "-32768", "i4": "-2147483648", "i8": "-9223372036854775808", "ai8": "{-9223372036854775808}",
         "o": "0", "mo": "-92233720368547758.08", "b64": "1" + "0" * 63, "vb": "0" * 200, "n": "-" + "9" * 38,
         "n2": "-" + "9" * 36 + ".99", "nn": "-1e-100", "ann": "{-" + "9" * 38 + "}"}),
]
INT_INSERTS = [insert(row, table="ints") for row in INT_ROWS]
INT_MODES: dict[str, dict[str, str]] = {
    "precise": {},
    "double": {"decimal.handling.mode": "double"},
    "string": {"decimal.handling.mode": "string"},
}


@pytest.mark.parametrize("mode", sorted(INT_MODES))
def test_integer_edges_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, INT_SETUP, INT_MODES[mode], INT_INSERTS)
    assert_same(f"integer edges streaming, {mode}", ours, theirs)
    assert len(theirs) == len(INT_ROWS)


@pytest.mark.parametrize("mode", sorted(INT_MODES))
def test_integer_edges_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([INT_SETUP, *INT_INSERTS]), INT_MODES[mode],
                            ["INSERT INTO ints (id) VALUES (99)"], snapshot=True)
    assert_same(f"integer edges snapshot, {mode}", ours, theirs, snapshot=True)
    assert len(theirs) == len(INT_ROWS) + 1


# -- floating point: JDK 17's Double/Float.toString, which is not always the shortest text ----------------------
# real is FLOAT32 (Float.toString), double precision FLOAT64, numeric and money in decimal.handling.mode=double
# go through BigDecimal.doubleValue() and Double.toString. The values: specials, the ends of each range, some
# whose JDK 17 text is longer than the shortest (1e23, 8.41e21, real 9e9 and 123456789), and the edges of Java's
# plain layout (10^-3 and 10^7).
_PLAIN_EDGES = ["0.1", "1e-5", "1e7", "9999999", "10000001", "0.001", "0.00099999", "-0.001", "1e-3", "1234567.5"]
FLT_VALUES = {
    "d": ["NaN", "Infinity", "-Infinity", "-0", "0", "4.9e-324", "2.2250738585072014e-308",
          "1.7976931348623157e308", "-1.7976931348623157e308", "1e23", "2e23", "8.41e21", "9e9", "123456789",
          "16777217", "9007199254740993", "9223372036854775807", "1.8446744073709552e19", "1e22", "5e-324",
          *_PLAIN_EDGES],
    "r": ["NaN", "Infinity", "-Infinity", "-0", "0", "1.4e-45", "1.17549435e-38", "3.4028235e38", "-3.4028235e38",
          "1e23", "2e23", "8.41e21", "9e9", "123456789", "16777217", "1e10", "9.223372e18", "33554431", "1e22",
          "3e-45", *_PLAIN_EDGES],
    "n": ["0", "-0", "4.9e-324", "1e23", "2e23", "8.41e21", "9e9", "123456789", "16777217", "9007199254740993",
          "1.7976931348623157e308", "1e22", "0.1000", "12345678901234567890.123456789", *_PLAIN_EDGES],
    "mo": ["0", "-0.01", "0.01", "9000000000", "123456789", "16777217", "10000000", "9999999.99", "0.10",
           "90071992547409.93", "84100000000000.00", "-92233720368547758.08", "92233720368547758.07"],
}
FLT_VALUES["fd"], FLT_VALUES["fr"] = FLT_VALUES["d"], FLT_VALUES["r"]  # the same through domains
# Domains over both types, and defaults whose JDK 17 text is not the shortest (the schema's `default`), NaN and
# -Infinity among them; every row without those columns carries the default as its value too.
FLT_SETUP = ("CREATE DOMAIN fdom AS float8; CREATE DOMAIN rdom AS real; "
             "CREATE TABLE flt (id int PRIMARY KEY, d float8, r real, n numeric, mo money, ad float8[], ar real[], "
             "fd fdom, fr rdom, dd float8 DEFAULT 1e23, rd real DEFAULT 9e9, nd float8 DEFAULT 'NaN', "
             "md float8 DEFAULT '-Infinity', zd real DEFAULT '-0')")
FLT_ROWS: list[tuple[int, dict[str, str]]] = [
    (i + 1, {c: vs[i] for c, vs in FLT_VALUES.items() if i < len(vs)})
    for i in range(max(map(len, FLT_VALUES.values())))
] + [(100, {"ad": "{" + ",".join(FLT_VALUES["d"]) + "}", "ar": "{" + ",".join(FLT_VALUES["r"]) + "}"}),
     (101, {"ad": "{}", "ar": "{}"}),  # empty arrays
     (102, {"ad": "{NULL,1e23,NULL}", "ar": "{NULL,9e9,NULL}"}),  # null elements
     (103, {"dd": "8.41e21", "rd": "123456789"})]
FLT_INSERTS = [insert(row, table="flt") for row in FLT_ROWS]
FLT_MODES: dict[str, dict[str, str]] = {"precise": {}, "double": {"decimal.handling.mode": "double"}}


@pytest.mark.parametrize("mode", sorted(FLT_MODES))
def test_floating_point_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, FLT_SETUP, FLT_MODES[mode], FLT_INSERTS)
    assert_same(f"floating point streaming, {mode}", ours, theirs)
    assert len(theirs) == len(FLT_ROWS)


@pytest.mark.parametrize("mode", sorted(FLT_MODES))
def test_floating_point_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([FLT_SETUP, *FLT_INSERTS]), FLT_MODES[mode],
                            ["INSERT INTO flt (id) VALUES (999)"], snapshot=True)
    assert_same(f"floating point snapshot, {mode}", ours, theirs, snapshot=True)
    assert len(theirs) == len(FLT_ROWS) + 1
