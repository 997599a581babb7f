"""The Avro parts path (converters/avro_events.py, avro_rows.py) against the general path on user-defined and less
common column types, in every handling mode that changes a column's Connect schema or value form: domains (over
int, numeric with and without a type modifier, text, varchar(n), float, bytea, temporal types, an enum; a
domain over a domain; arrays of domains), enums and their arrays, a composite type and its array (bytes with
include.unknown.datatypes), citext, hstore, ltree and their arrays, and the source-type parameters of
column.propagate.source.type / datatype.propagate.source.type. Each column holds its extremes and special values
(NaN, the infinities, -0, empty, null, the type's limits, 0001-01-01 and 9999-12-31, BC dates). The same changes
are captured both ways and compared record by record and byte for byte, and no row of the parts path fell back
to the general way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pgcdc.converters import avro_events
from pgcdc.converters import sink as converting
from pgcdc.local import PostgresCluster
from tests.harness import Running, wait_for
from tests.integration.test_avro_events import avro_connector, decoded, keyed_taken

DOMAINS = {
    "d_int": "int", "d_i8": "bigint", "d_num": "numeric(7,2)", "d_numu": "numeric", "d_text": "text",
    "d_vc": "varchar(5)", "d_dnum": "d_num", "d_dint": "d_int", "d_ddnum": "d_dnum", "d_f8": "float8",
    "d_f4": "real", "d_by": "bytea", "d_ts": "timestamp(3)", "d_tz": "timestamptz", "d_tm": "time(3)",
    "d_date": "date", "d_iv": "interval", "d_mood": "mood", "d_ci": "citext",
}
ARRAYS = ["d_int", "d_num", "d_numu", "d_text", "d_vc", "d_dnum", "d_f8", "d_by", "d_ts", "d_mood"]
# column -> (type, values of rows 1-5): the lows, the highs, the special values, nulls, BC and odd ones.
# INF and -INF stand for numeric's infinities, PostgreSQL 14+ (older servers get NaN there).
COLUMNS: dict[str, tuple[str, list[str | None]]] = {
    "c_int": ("d_int", ["-2147483648", "2147483647", "0", None, "-1"]),
    "c_i8": ("d_i8", ["-9223372036854775808", "9223372036854775807", "0", None, "1"]),
    "c_num": ("d_num", ["-99999.99", "99999.99", "-0.00", None, "0.01"]),
    "c_numu": ("d_numu", ["-0.00100", "1e-40", "NaN", None, "123456789012345678901234567890.123456789"]),
    "c_text": ("d_text", ["", "é\u2028\"\\'🎉", " ", None, "\t\n"]),
    "c_vc": ("d_vc", ["", "abcde", "é", None, "🎉🎉🎉🎉🎉"]),
    "c_dnum": ("d_dnum", ["-99999.99", "99999.99", "0", None, "-0.01"]),
    "c_dint": ("d_dint", ["-2147483648", "2147483647", "0", None, "1"]),
    "c_ddnum": ("d_ddnum", ["-0.01", "12345.67", "0", None, "1"]),
    "c_f8": ("d_f8", ["-Infinity", "Infinity", "NaN", None, "-0"]),
    "c_f4": ("d_f4", ["-3.4028235e38", "3.4028235e38", "NaN", None, "-0"]),
    "c_by": ("d_by", ["\\x", "\\xff00", "\\x00", None, "\\x80"]),
    "c_ts": ("d_ts", ["0001-01-01 00:00:00", "9999-12-31 23:59:59.999", "infinity", None, "0044-03-15 12:00 BC"]),
    "c_tz": ("d_tz", ["0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00", "-infinity", None,
                      "4713-01-01 00:00:00+00 BC"]),
    "c_tm": ("d_tm", ["00:00:00", "23:59:59.999", "24:00:00", None, "12:00:00.5"]),
    "c_date": ("d_date", ["0001-01-01", "9999-12-31", "infinity", None, "4713-01-01 BC"]),
    "c_iv": ("d_iv", ["-178000000 years", "178000000 years", "0", None, "-1 microsecond"]),
    "c_mood": ("d_mood", ["sad", "it's \"q\"", "ok", None, "happy"]),
    "c_ci": ("d_ci", ["", "MiXeD", "é", None, " "]),
    # Arrays of domains are an unknown type (Debezium's choice): arrays of required bytes with
    # include.unknown.datatypes, written null as a whole when an element is null.
    **{f"a_{d[2:]}": (f"{d}[]", values) for d, values in {
        "d_int": ["{}", "{-2147483648,2147483647}", "{NULL,0}", None, "{1}"],
        "d_num": ["{}", "{-99999.99,99999.99}", "{0.00}", None, "{0}"],
        "d_numu": ["{}", "{1e-40,-0.00100}", "{NaN}", None, "{INF,-INF}"],
        "d_text": ["{}", "{\"\",\"a b\",\"\\\\\"}", "{\"\"}", None, "{x}"],
        "d_vc": ["{}", "{\"\",abcde}", "{é}", None, "{🎉}"],
        "d_dnum": ["{}", "{-0.01,99999.99}", "{0}", None, "{1}"],
        "d_f8": ["{}", "{NaN,Infinity,-Infinity,-0}", "{0}", None, "{1e308,4.9e-324}"],
        "d_by": ["{}", "{\"\\\\x\",\"\\\\xff\"}", "{\"\\\\x00\"}", None, "{\"\\\\x80\"}"],
        "d_ts": ["{}", "{infinity,-infinity,\"0001-01-01 00:00:00\"}", "{\"1970-01-01\"}", None,
                 "{\"9999-12-31 23:59:59.999\"}"],
        "d_mood": ["{}", "{sad,\"it's \\\"q\\\"\"}", "{ok}", None, "{happy}"],
    }.items()},
    "e": ("mood", ["sad", "it's \"q\"", "ok", None, "happy"]),
    # Enum and ltree array elements are required in Debezium's schema: no null elements.
    "ae": ("mood[]", ["{}", "{sad,ok,happy}", "{ok}", None, "{\"it's \\\"q\\\"\"}"]),
    "cmp": ("comp", ["(,)", "(2147483647,\"é \"\"q\"\"\")", "(0,)", None, "(-1,\"\")"]),
    "acmp": ("comp[]", ["{}", "{\"(1,x)\"}", "{NULL}", None, "{\"(-1,\\\"\\\")\"}"]),
    "ci": ("citext", ["", "MiXeD", "é🎉", None, " "]),
    "hs": ("hstore", ["", "a=>1, \"b c\"=>NULL, \"\"=>\"\"", "\"k\"=>\"é\"", None, "x=>\"\\\\\""]),
    "lt": ("ltree", ["", "top.sub.leaf", "a", None, "a.b"]),
    "aci": ("citext[]", ["{}", "{MiXeD,NULL}", "{\"\"}", None, "{x}"]),
    "ahs": ("hstore[]", ["{}", "{\"a=>1\",NULL}", "{\"\"}", None, "{\"x=>NULL\"}"]),
    "alt": ("ltree[]", ["{}", "{top.sub,\"\"}", "{a}", None, "{a.b.c}"]),
    "n": ("numeric", ["NaN", "INF", "-INF", None, "1e-40"]),
    "n52": ("numeric(5,2)", ["-999.99", "999.99", "NaN", None, "-0.00"]),
    "n380": ("numeric(38,0)", ["-99999999999999999999999999999999999999", "99999999999999999999999999999999999999",
                               "0", None, "1"]),
    "an": ("numeric[]", ["{}", "{NaN,NULL,1.50}", "{NULL}", None, "{-0}"]),
    "f8": ("float8", ["-1.7976931348623157e308", "1.7976931348623157e308", "-0", None, "4.9e-324"]),
    "f4": ("real", ["-3.4028235e38", "3.4028235e38", "-0", None, "1.4e-45"]),
    "by": ("bytea", ["\\x", "\\xffffffff", "\\x00", None, "\\x0a0d"]),
    "aby": ("bytea[]", ["{}", "{\"\\\\x\",NULL}", "{NULL}", None, "{\"\\\\xff\"}"]),
    "tm": ("time", ["00:00:00", "24:00:00", "12:34:56.789012", None, "23:59:59.999999"]),
    "tm0": ("time(0)", ["00:00:00", "23:59:59", "12:00:00", None, "00:00:01"]),
    "tm3": ("time(3)", ["00:00:00", "23:59:59.999", "24:00:00", None, "00:00:00.001"]),
    "ttz": ("timetz", ["00:00:00+1559", "24:00:00-1559", "12:00:00+00", None, "23:59:59.999999+02"]),
    "ts": ("timestamp", ["0001-01-01 00:00:00", "9999-12-31 23:59:59.999999", "infinity", None,
                         "4713-01-01 00:00:00 BC"]),
    "ts0": ("timestamp(0)", ["0001-01-01 00:00:00", "9999-12-31 23:59:59", "-infinity", None, "1970-01-01"]),
    "ts3": ("timestamp(3)", ["0001-01-01 00:00:00", "9999-12-31 23:59:59.999", "-infinity", None,
                             "1969-12-31 23:59:59.999"]),
    "tz": ("timestamptz", ["0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00", "infinity", None,
                           "0001-01-01 00:00:00+00 BC"]),
    "d": ("date", ["0001-01-01", "9999-12-31", "-infinity", None, "1970-01-01"]),
    "atm": ("time[]", ["{}", "{00:00:00,24:00:00,NULL}", "{NULL}", None, "{12:00:00.5}"]),
    "ats": ("timestamp[]", ["{}", "{\"0001-01-01 00:00:00\",\"9999-12-31 23:59:59.999999\"}", "{infinity}", None,
                            "{-infinity}"]),
    "ad": ("date[]", ["{}", "{0001-01-01,9999-12-31,NULL}", "{infinity,-infinity}", None, "{1970-01-01}"]),
    "iv": ("interval", ["-178000000 years", "178000000 years", "0", None, "1 mon -1 day 00:00:00.000001"]),
    "b1": ("bit(1)", ["0", "1", "1", None, "0"]),
    "b4": ("bit(4)", ["0000", "1111", "1010", None, "0001"]),
    "vb": ("varbit", ["", "1" * 64, "0", None, "101"]),
    "m": ("money", ["-92233720368547758.08", "92233720368547758.07", "0", None, "-0.01"]),
    "u": ("uuid", ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                   "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", None, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"]),
    "j": ("json", ["\"\"", "{\"k\": [1.5e300, null, \"é\"]}", "null", None, "[]"]),
    "x": ("xml", ["", "<a b=\"é\"/>", "<a/>", None, "x"]),
    "tsv": ("tsvector", ["", "a fat cat", "x", None, "'é'"]),
    "r": ("int4range", ["empty", "[-2147483648,2147483647)", "(,)", None, "[1,2)"]),
    "pt": ("point", ["(0,0)", "(1e308,-1e308)", "(NaN,Infinity)", None, "(-0,-0)"]),
}

NOT_NULL = {
    "f8": "float8 DEFAULT 'NaN'", "f4": "real", "by": "bytea", "dnum": "d_num", "dnumu": "d_numu", "dint": "d_dint",
    "e": "mood DEFAULT 'it''s \"q\"'", "hs": "hstore", "ci": "citext DEFAULT 'X'", "lt": "ltree", "m": "money",
    "iv": "interval", "tm": "time", "tz": "timestamptz", "pt": "point", "u": "uuid", "n": "numeric",
    "n52": "numeric(5,2) DEFAULT 1.5", "ai": "int[]", "ae": "mood[]", "b4": "bit(4)", "dmood": "d_mood",
}
TOASTED = {"t_text": "d_text", "t_by": "bytea", "t_ai": "int[]", "t_hs": "hstore", "t_jb": "jsonb", "t_lt": "ltree[]",
           "t_ci": "citext", "t_by2": "d_by"}
_RANDOM = "(SELECT string_agg(md5(i::text || random()::text), '') FROM generate_series(1, 300) i)"
_LABELS = _RANDOM.replace("''", "'.'")  # ltree labels are at most 255 characters
NN_ROWS = ("INSERT INTO nn SELECT g, 0, 'NaN', '-0', '\\x', '0', '0.000', 0, 'ok', '', '', '', 0, '0', '00:00',"
           " 'infinity', '(0,0)', '00000000-0000-0000-0000-000000000000', '-0', '0', '{}', '{}', '0000', 'sad', "
           + ", ".join([_RANDOM, f"decode({_RANDOM}, 'hex')",
                        "ARRAY(SELECT (random() * 2e9 - 1e9)::int FROM generate_series(1, 3000))",
                        f"hstore('k', {_RANDOM})", f"jsonb_build_object('k', {_RANDOM})",
                        f"ARRAY[text2ltree({_LABELS})]", _RANDOM, f"decode({_RANDOM}, 'hex')"])
           + " FROM generate_series(1, 2) g")

SETUP = (
    "CREATE EXTENSION citext; CREATE EXTENSION hstore; CREATE EXTENSION ltree;"
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'it''s \"q\"'); CREATE TYPE comp AS (a int, b text);"
    + "".join(f"CREATE DOMAIN {d} AS {t};" for d, t in DOMAINS.items())
    + "CREATE TABLE z (id int PRIMARY KEY, " + ", ".join(f"{c} {t}" for c, (t, _) in COLUMNS.items()) + ");"
    "ALTER TABLE z REPLICA IDENTITY FULL; CREATE TABLE done (id int PRIMARY KEY);"
    # NOT NULL columns (a key-only old tuple fills them with the schema default or the type's fallback) and
    # TOASTed values (unchanged in an update: unavailable.value.placeholder in the column's type).
    "CREATE TABLE nn (id int PRIMARY KEY, k int, "
    + ", ".join(f"{c} {t} NOT NULL" for c, t in NOT_NULL.items())
    + ", " + ", ".join(f"{c} {t}" for c, t in TOASTED.items()) + ")"
)


def _literal(value: str | None, major: int) -> str:
    if value is None:
        return "NULL"
    if major < 14:
        value = value.replace("-INF", "NaN").replace("INF", "NaN")
    value = value.replace("INF", "Infinity")
    return "'" + value.replace("'", "''") + "'"


def workload(major: int) -> list[str]:
    rows = [f"({i + 1}, " + ", ".join(_literal(v[i], major) for _, v in COLUMNS.values()) + ")" for i in range(5)]
    return [
        f"INSERT INTO z VALUES {', '.join(rows[:3])}",
        f"BEGIN; INSERT INTO z VALUES {rows[3]}; INSERT INTO z VALUES {rows[4]}; COMMIT",
        # Updates with the whole before row (REPLICA IDENTITY FULL): every value on both sides.
        "UPDATE z SET id = id + 10 WHERE id IN (1, 2)",  # a key change: the general path (Debezium's key headers)
        "UPDATE z SET c_text = 'u', n = '-0' WHERE id IN (3, 4, 5)",
        "DELETE FROM z WHERE id IN (3, 4)",
        NN_ROWS,
        "UPDATE nn SET k = 1",  # the TOASTed values unchanged
        "DELETE FROM nn WHERE id = 1",  # a key-only old tuple
        "INSERT INTO done VALUES (1)",
    ]


MODES: dict[str, dict[str, str]] = {
    "defaults_unknown": {"include.unknown.datatypes": "true"},
    "double_connect_base64_string": {
        "decimal.handling.mode": "double", "time.precision.mode": "connect", "binary.handling.mode": "base64",
        "interval.handling.mode": "string", "hstore.handling.mode": "map",
        "column.propagate.source.type": "public\\.z\\..*"},
    "string_micros_hex_numeric": {
        "decimal.handling.mode": "string", "time.precision.mode": "adaptive_time_microseconds",
        "binary.handling.mode": "hex", "interval.handling.mode": "numeric", "include.unknown.datatypes": "true",
        "datatype.propagate.source.type": ".+"},
    "precise_adaptive_bytes_propagate": {
        "decimal.handling.mode": "precise", "time.precision.mode": "adaptive", "binary.handling.mode": "bytes",
        "datatype.propagate.source.type": ".+\\.NUMERIC,.+\\.INT4,.+\\.FLOAT8,.+\\.BYTEA,.+\\.MOOD",
        "column.propagate.source.type": ".+\\.c_.*,.+\\.a_.*"},
}


def run(pg: PostgresCluster, dbname: str, name: str, props: dict[str, str], count: int
        ) -> tuple[list[tuple[str, bytes | None, bytes | None]], Any]:
    """The `count` records streamed from slot `name` (or the snapshot), the marker table's among them."""
    config, value_conv, sink, keep = avro_connector(pg, dbname, name, props)
    marker = f"{dbname}.public.done"
    with Running(config, sink=sink):
        wait_for(lambda: len(keep.records) >= count and any(t == marker for t, _, _ in keep.records), 120,
                 f"{count} records", lambda: len(keep.records))
    return keep.records, value_conv


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The errors of the parts path's compiled row datum, and the rows written the general way instead (a datum
    spavro did not take, where the row is the datum)."""
    seen: list[str] = []
    compile_row = avro_events.row_datum
    general = avro_events.AvroEvents._general

    def watched_general(self: Any, row: Any) -> Any:
        seen.append(f"general: {sorted(row)}")
        return general(self, row)

    def watched(struct: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
        row = compile_row(struct)
        if row is None:  # the row is the datum
            return None

        def datum(v: dict[str, Any]) -> dict[str, Any]:
            try:
                return row(v)
            except Exception as exc:
                seen.append(repr(exc))
                raise
        return datum

    monkeypatch.setattr(avro_events, "row_datum", watched)
    monkeypatch.setattr(avro_events.AvroEvents, "_general", watched_general)
    return seen


def both_ways(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch, props: dict[str, str],
              count: int, snapshot: bool) -> tuple[list[Any], list[Any], int]:
    taken: list[str] = []
    method = "read" if snapshot else "__call__"
    original = getattr(converting.EventSend, method)

    def counted(self: Any, *args: Any) -> None:
        taken.append(self.topic)
        original(self, *args)

    monkeypatch.setattr(converting.EventSend, method, counted)
    if not snapshot:
        keyed_taken(monkeypatch, taken)
    parts, parts_conv = run(pg, dbname, f"parts_{dbname}", props, count)
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = run(pg, dbname, f"general_{dbname}", props, count)
    return decoded(parts, parts_conv, snapshot), decoded(general, general_conv, snapshot), len(taken)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_streamed_types_both_ways(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch,
                                  fallbacks: list[str], mode: str) -> None:
    pg.execute(SETUP + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    for slot in (f"parts_{dbname}", f"general_{dbname}"):
        pg.execute(f"SELECT pg_create_logical_replication_slot('{slot}', 'pgoutput')", dbname)
    for statement in workload(pg.major):
        pg.execute(statement, dbname)
    # 5 inserts, 2 key changes (delete + tombstone + create each: the general path), 3 updates, 2 deletes (+2
    # tombstones); 2 inserts, 2 updates, a delete (+ its tombstone); the marker.
    count = 5 + 2 * 3 + 3 + 2 * 2 + 2 + 2 + 2 + 1
    parts, general, taken = both_ways(pg, dbname, monkeypatch, MODES[mode], count, snapshot=False)
    assert len(parts) == len(general) == count
    assert taken == 5 + 3 + 2 + 2 + 2 + 1 + 1
    assert fallbacks == []
    assert parts == general


@pytest.mark.parametrize("mode", ["defaults_unknown", "string_micros_hex_numeric"])
def test_snapshot_types_both_ways(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch,
                                  fallbacks: list[str], mode: str) -> None:
    pg.execute(SETUP + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    for statement in [*workload(pg.major)[:2], "INSERT INTO done VALUES (1)"]:
        pg.execute(statement, dbname)
    props = {**MODES[mode], "snapshot.mode": "initial"}
    parts, general, taken = both_ways(pg, dbname, monkeypatch, props, 6, snapshot=True)
    assert len(parts) == len(general) == taken == 6
    assert fallbacks == []
    assert parts == general
