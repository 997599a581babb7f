"""More types through the real Debezium 3.6 and pgcdc: geometric types, PostGIS, BC dates and times, arrays of
every type, unknown types, and the JSON bytes of tricky strings (compared raw, not parsed).

Same method as test_debezium_streaming.py: both connectors read the same database (streaming from their own
slots at the same time, or each snapshotting it) and every record must be equal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both


GEO_SETUP = (
    "CREATE TABLE geo (id int PRIMARY KEY, ln line, ls lseg, bx box, pa path, pc path, pg polygon, ci circle,"
    " aln line[], als lseg[], abx box[], apa path[], apg polygon[], aci circle[], apt point[], pt point)"
)
GEO_WORKLOAD = [
    "INSERT INTO geo VALUES (1, '{1,2,3}', '[(1,2),(3.5,4)]', '((3,4),(1,2))', '[(0,0),(1,1),(2,0)]',"
    " '((0,0),(1,1),(2,0))', '((0,0),(0,1),(1,1),(1,0))', '<(1,2),3.5>', '{\"{1,2,3}\",\"{4,-5,0.5}\"}',"
    " '{\"[(1,2),(3,4)]\"}', '{(3,4),(1,2);(5,6),(0,0)}', '{\"[(0,0),(1,1)]\",\"((1,1),(2,2),(3,0))\"}',"
    " '{\"((0,0),(0,1),(1,0))\"}', '{\"<(1,2),3>\"}', '{\"(1,2)\",\"(3.5,-4)\"}', '(7,8)')",
    "INSERT INTO geo VALUES (2, '{1e-5,1e20,-0.001}', '[(1e-300,-1e300),(0.1,12345678)]',"
    " '((1e20,0.5),(-1e-5,-0))', '[(1.5,2.25)]', '((123456789.5,0.001))', '((0.1,0.2))', '<(0.1,0.2),1e-5>',"
    " '{}', NULL, '{}', NULL, NULL, NULL, NULL, NULL)",
    "INSERT INTO geo VALUES (3, '{1,-1,NaN}', NULL, '((Infinity,1),(-Infinity,0))')",
    "INSERT INTO geo (id) VALUES (4)",
    "UPDATE geo SET ci = '<(0,0),1>' WHERE id = 1",
    "DELETE FROM geo WHERE id = 2",
]

GIS_SETUP = (
    "CREATE EXTENSION postgis;"
    "CREATE TABLE gis (id int PRIMARY KEY, g geometry, gp geometry(Point,4326), gg geography,"
    " gl geometry(LineString,3857), gz geometry(PointZ), ga geometry[], gga geography[])"
)
GIS_WORKLOAD = [
    "INSERT INTO gis VALUES (1, 'SRID=4326;POINT(1 2)', 'SRID=4326;POINT(1.5 -2.25)', 'POINT(-71.06 42.36)',"
    " 'SRID=3857;LINESTRING(0 0,1 1,2 0)', 'POINT Z (1 2 3)',"
    " ARRAY['POINT(1 2)'::geometry, 'SRID=4326;POINT(3 4)'::geometry, NULL], ARRAY['POINT(1 2)'::geography])",
    "INSERT INTO gis (id, g, gg) VALUES (2, 'POLYGON((0 0,1 0,1 1,0 0))', 'SRID=4267;LINESTRING(1 2,3 4)')",
    "INSERT INTO gis (id, g, gg) VALUES (3, 'GEOMETRYCOLLECTION EMPTY', 'POINT EMPTY')",
    "INSERT INTO gis (id, g) VALUES (4, 'SRID=4326;MULTIPOINT M ((1 2 3),(4 5 6))')",
    "INSERT INTO gis (id, g) VALUES (5, ST_AsEWKB('SRID=32631;POINT(500000 0)'::geometry, 'XDR')::geometry)",
    "INSERT INTO gis (id) VALUES (6)",
    "UPDATE gis SET g = 'POINT(9 9)' WHERE id = 1",
]

BC_SETUP = (
    "CREATE TABLE bc (id int PRIMARY KEY, d date, ts timestamp, ts3 timestamp(3), ts0 timestamp(0),"
    " tz timestamptz, tz3 timestamptz(3), tz0 timestamptz(0), ad date[], ats timestamp[], atz timestamptz[])"
)
BC_WORKLOAD = [
    "INSERT INTO bc VALUES (1, '0044-03-15 BC', '0044-03-15 12:34:56.789012 BC', '0044-03-15 12:34:56.789 BC',"
    " '0044-03-15 12:34:56 BC', '0044-03-15 12:34:56.789012+00 BC', '0044-03-15 12:34:56.789+00 BC',"
    " '0044-03-15 12:34:56+00 BC', '{0044-03-15 BC,2024-01-01}', '{\"0044-03-15 12:34:56.5 BC\"}',"
    " '{\"0044-03-15 12:34:56.5+00 BC\"}')",
    "INSERT INTO bc VALUES (2, '4713-01-01 BC', '4713-01-01 00:00:00 BC', '4713-01-01 00:00:00 BC',"
    " '4713-01-01 00:00:00 BC', '4713-01-01 00:00:00+00 BC', '4713-01-01 00:00:00.001+00 BC',"
    " '4713-01-01 00:00:00+00 BC', NULL, NULL, NULL)",
    "INSERT INTO bc VALUES (3, '0001-12-31 BC', '0001-12-31 23:59:59.999999 BC', '0001-01-01 00:00:00 BC',"
    " '0001-12-31 23:59:59 BC', '0001-12-31 23:59:59.999999+00 BC', '0001-01-01 00:00:00+00 BC',"
    " '0001-12-31 23:59:59+00 BC', NULL, NULL, NULL)",
    "INSERT INTO bc VALUES (4, '1582-10-04', '1582-10-15 00:00:00', '1582-10-04 23:59:59.999', '1000-06-15 12:00:00',"
    " '1582-10-04 12:00:00+00', '1000-06-15 12:00:00.5+00', '0001-01-01 00:00:00+00', '{1582-10-10,1000-01-01}',"
    " NULL, NULL)",
    "INSERT INTO bc VALUES (5, '0001-01-01', '0001-01-01 00:00:00', '0100-02-28 00:00:00', '0100-03-01 00:00:00',"
    " '0044-03-15 12:34:56.789012+05:30 BC', '0300-02-28 23:00:00-01', '1900-01-01 00:00:00+00', NULL, NULL, NULL)",
    "INSERT INTO bc VALUES (6, '1582-10-10', '1582-10-10 10:00:00', '1582-10-14 23:59:59.999', '1582-10-04 00:00:00',"
    " '1582-10-10 10:00:00+00', NULL, NULL, '{1582-10-04,1582-10-05,1582-10-14,1582-10-15,0001-01-01 BC}',"
    " '{\"1000-06-15 12:00:00\",\"1582-10-10 00:00:00\",\"1582-10-15 00:00:00.25\",\"0001-01-01 00:00:00 BC\"}',"
    " '{\"1000-06-15 12:00:00+00\",\"1582-10-10 00:00:00+00\",\"4713-01-01 00:00:00+00 BC\"}')",
]
TIME_MODES = {
    "adaptive": {},
    "adaptive_time_microseconds": {"time.precision.mode": "adaptive_time_microseconds"},
    "connect": {"time.precision.mode": "connect"},
    "isostring": {"time.precision.mode": "isostring"},
}

ARR_SETUP = (
    "CREATE EXTENSION hstore; CREATE EXTENSION ltree; CREATE EXTENSION citext; CREATE TYPE comp AS (a int, b text);"
    "CREATE TABLE arr (id int PRIMARY KEY, a_int2 int2[], a_int8 int8[], a_f4 float4[], a_f8 float8[], a_text text[],"
    " a_vc varchar(5)[], a_char char(2)[], a_name name[], a_time time[], a_time3 time(3)[], a_ts timestamp[],"
    " a_ts3 timestamp(3)[], a_timetz timetz[], a_iv interval[], a_bit bit(3)[], a_bit1 bit(1)[], a_vb varbit[],"
    " a_money money[], a_xml xml[], a_json json[], a_cidr cidr[], a_mac macaddr[], a_mac8 macaddr8[], a_oid oid[],"
    " a_r4 int4range[], a_rn numrange[], a_rtz tstzrange[], a_rd daterange[], a_hs hstore[], a_lt ltree[],"
    " a_ci citext[], a_tsv tsvector[], a_qc \"char\"[], a_num numeric[], a_3d int[][][], tsq tsquery, lsn pg_lsn,"
    " txs txid_snapshot, cmp comp, acmp comp[], mr int4multirange, a_tsq tsquery[], i2v int2vector, a_lsn pg_lsn[])"
)
ARR_WORKLOAD = [
    "INSERT INTO arr VALUES (1, '{1,-2}', '{9007199254740993}', '{1.5,NaN,-0}', '{-0,1e300,Infinity}',"
    " '{\"a b\",NULL}', '{abc}', '{x}', '{nm}', '{12:34:56.789012}', '{12:34:56.789}',"
    " '{\"2024-01-02 03:04:05.123456\"}', '{\"2024-01-02 03:04:05.123\"}', '{12:34:56+02}', '{\"1 day 02:00:00\"}',"
    " '{101}', '{1}', '{10101}', '{1.25}', '{<a/>}', '{\"{\\\"a\\\": 1}\"}', '{10.0.0.0/8}', '{08:00:2b:01:02:03}',"
    " '{08:00:2b:01:02:03:04:05}', '{42}', '{\"[1,5)\"}', '{\"(1.5,2]\"}', '{\"[2024-01-01 00:00+00,)\"}',"
    " '{\"[2024-01-01,2024-02-01)\"}', '{\"a=>1\"}', '{top.sub}', '{MiXeD}', '{\"a fat cat\"}', '{c}', '{1.50,NaN}',"
    " '{{{1,2},{3,4}},{{5,6},{7,8}}}', 'fat & rat', '16/B374D848', '10:20:10,14,15', '(1,x)', '{\"(1,x)\"}',"
    " '{[1,3),[5,7)}', '{\"fat & rat\"}', '1 2', '{0/1}')",
    "INSERT INTO arr (id) VALUES (2)",
    "UPDATE arr SET tsq = 'a | b', a_f4 = '{}' WHERE id = 1",
]

# Strings whose JSON text differs between JSON writers: characters outside the BMP (also in a key and a column
# name, and in a logical-decoding message prefix), control characters, U+2028/2029, '/', escapes, non-ASCII BMP.
UNI_SETUP = 'CREATE TABLE uni (k text PRIMARY KEY, t text, j jsonb, js json, at text[], "c🎉" text)'
UNI_WORKLOAD = [
    "INSERT INTO uni VALUES ('🎉1', '🎉 𝄞 x', '{\"k🎉\": \"v😀\"}', '{\"a\": \"🎉\"}', '{\"🎉\",\"a\"}', '😀')",
    "INSERT INTO uni (k, t, js) VALUES ('2', E'a\\x01b\\x1fc\\x7fd\\x0be\\x0e\\x1a', '\"\\u0001\\u001f\\u2028\"')",
    "INSERT INTO uni (k, t) VALUES ('3', E'\\u2028 \\u2029 \\u0085 \\u00a0 \\u200b \\ufeff \\uffff \\u00ad')",
    "INSERT INTO uni (k, t) VALUES ('4', E'</script> & < > '' \" \\\\ / = \\\\u001f \\\\\\x1f')",
    "INSERT INTO uni (k, t) VALUES ('5', E'\\t\\n\\r\\b\\f é 日本 \\U0010FFFF \\U0001F600')",
    "UPDATE uni SET t = '🎉' WHERE k = '🎉1'",
    "DELETE FROM uni WHERE k = '🎉1'",
    "SELECT pg_logical_emit_message(true, 'p🎉', '🎉')",
]


def inserts(workload: list[str]) -> list[str]:
    """The inserts only: snapshots then read rows in insertion order with either connector."""
    return [stmt for stmt in workload if stmt.startswith("INSERT")]


def check(ours: list, theirs: list, label: str, snapshot: bool = False) -> None:
    assert_same(label, ours, theirs, snapshot=snapshot)


@pytest.mark.parametrize("unknown", ["false", "true"])
def test_geometric_types_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, unknown: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, GEO_SETUP, {"include.unknown.datatypes": unknown}, GEO_WORKLOAD)
    check(ours, theirs, f"geometric, include.unknown.datatypes={unknown}")


@pytest.mark.parametrize("unknown", ["false", "true"])
def test_geometric_types_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, unknown: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([GEO_SETUP, *inserts(GEO_WORKLOAD)]),
                            {"include.unknown.datatypes": unknown}, ["INSERT INTO geo (id) VALUES (99)"],
                            snapshot=True)
    check(ours, theirs, f"geometric snapshot, include.unknown.datatypes={unknown}", snapshot=True)


def require_postgis(pg: PostgresCluster) -> None:
    if not pg.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'"):
        pytest.fail("the PostGIS extension is not installed on this PostgreSQL server (`./dev test` installs "
                    "Debian's postgresql-15-postgis-3; other majors have none)")


@pytest.mark.parametrize("props", [{}, {"binary.handling.mode": "hex"},
                                   {"binary.handling.mode": "base64-url-safe", "include.unknown.datatypes": "true"}],
                         ids=["bytes", "hex", "urlsafe_unknown"])
def test_postgis_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, props: dict[str, str]) -> None:
    require_postgis(pg)
    ours, theirs = run_both(pg, dbname, tmp_path, GIS_SETUP, props, GIS_WORKLOAD)
    check(ours, theirs, f"postgis {props}")


def test_postgis_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    require_postgis(pg)
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([GIS_SETUP, *inserts(GIS_WORKLOAD)]),
                            # Debezium never captures a table named spatial_ref_sys (PostGIS's own); pgcdc's
                            # table filter does not know that yet, so both are given the table list.
                            {"binary.handling.mode": "base64", "table.include.list": "public.gis"},
                            ["INSERT INTO gis (id) VALUES (99)"], snapshot=True)
    check(ours, theirs, "postgis snapshot", snapshot=True)


@pytest.mark.parametrize("mode", sorted(TIME_MODES))
def test_bc_dates_and_times_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, BC_SETUP, TIME_MODES[mode], BC_WORKLOAD)
    check(ours, theirs, f"BC streaming, {mode}")


@pytest.mark.parametrize("mode", sorted(TIME_MODES))
def test_bc_dates_and_times_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([BC_SETUP, *inserts(BC_WORKLOAD)]), TIME_MODES[mode],
                            ["INSERT INTO bc (id) VALUES (99)"], snapshot=True)
    check(ours, theirs, f"BC snapshot, {mode}", snapshot=True)


@pytest.mark.parametrize("unknown", ["false", "true"])
def test_arrays_and_unknown_types_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, unknown: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ARR_SETUP, {"include.unknown.datatypes": unknown}, ARR_WORKLOAD)
    check(ours, theirs, f"arrays, include.unknown.datatypes={unknown}")


def test_arrays_and_unknown_types_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([ARR_SETUP, *inserts(ARR_WORKLOAD)]),
                            {"include.unknown.datatypes": "true"}, ["INSERT INTO arr (id) VALUES (99)"], snapshot=True)
    check(ours, theirs, "arrays snapshot", snapshot=True)


# Arrays of types Debezium has no mapping for (arrays of a domain, of a composite, of a geometric type) are
# arrays of required bytes with include.unknown.datatypes: a null element among them.
UNKNOWN_NULLS_SETUP = ("CREATE DOMAIN d_int AS int; CREATE TYPE comp AS (a int, b text);"
                       "CREATE TABLE un (id int PRIMARY KEY, ad d_int[], ac comp[], ab box[], md d_int[])")
UNKNOWN_NULLS_WORKLOAD = [
    "INSERT INTO un VALUES (1, '{1,NULL}', '{\"(1,x)\",NULL}', ARRAY[NULL, '(1,1),(0,0)']::box[], '{{1,2},{3,NULL}}')",
    "INSERT INTO un VALUES (2, '{NULL}', '{NULL}', ARRAY[NULL]::box[], '{{NULL}}')",
    "INSERT INTO un VALUES (3, '{1,2}', '{\"(,)\"}', ARRAY['(1,1),(0,0)']::box[], '{{1,2},{3,4}}')",
    "UPDATE un SET ad = '{NULL,3}' WHERE id = 3",
]


@pytest.mark.parametrize("snapshot", [False, True], ids=["streaming", "snapshot"])
def test_unknown_type_arrays_with_null_elements(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                snapshot: bool) -> None:
    setup, workload = UNKNOWN_NULLS_SETUP, UNKNOWN_NULLS_WORKLOAD
    if snapshot:
        setup, workload = ";".join([setup, *inserts(workload)]), ["INSERT INTO un (id) VALUES (99)"]
    ours, theirs = run_both(pg, dbname, tmp_path, setup, {"include.unknown.datatypes": "true"}, workload,
                            snapshot=snapshot)
    check(ours, theirs, "unknown type arrays with null elements", snapshot=snapshot)


# -- raw JSON bytes --------------------------------------------------------------------------------------------
_VOLATILE = re.compile(rb'"(?:ts_ms|ts_us|ts_ns)":\d+')


def raw_records(path: Path) -> list[tuple[bytes, bytes]]:
    """(key, value) JSON bytes of each record as written, processing timestamps masked. Lines are split on
    '\\n' only: U+2028 and other line separators are part of the values."""
    out = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip() or b'"topic":"__debezium-heartbeat' in line:
            continue
        key_at = line.index(b',"key":') + 7
        value_at = line.index(b',"value":', key_at)
        headers_at = line.rindex(b',"headers":')
        out.append((line[key_at:value_at], _VOLATILE.sub(b'"ts":0', line[value_at + 9:headers_at])))
    return out


@pytest.mark.parametrize("schemas", ["true", "false"])
def test_json_bytes_of_tricky_strings_match_jackson(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                     schemas: str) -> None:
    props = {"key.converter.schemas.enable": schemas, "value.converter.schemas.enable": schemas}
    ours, theirs = run_both(pg, dbname, tmp_path, UNI_SETUP, props, UNI_WORKLOAD)
    check(ours, theirs, f"tricky strings, schemas {schemas}")
    raw_ours, raw_theirs = raw_records(tmp_path / "pgcdc.jsonl"), raw_records(tmp_path / "debezium.jsonl")
    assert len(raw_ours) == len(raw_theirs)
    assert any(b"\\uD83C\\uDF89" in v for _, v in raw_theirs), "Debezium no longer escapes non-BMP characters"
    for i, (a, b) in enumerate(zip(raw_ours, raw_theirs)):
        assert a[0] == b[0], f"record {i} key bytes differ:\n{a[0]!r}\n{b[0]!r}"
        assert a[1] == b[1], f"record {i} value bytes differ:\n{a[1][-600:]!r}\n{b[1][-600:]!r}"


# -- 1 MB TOASTed values ---------------------------------------------------------------------------------------
TOAST_SETUP = (
    "CREATE EXTENSION hstore; CREATE EXTENSION postgis;"
    "CREATE TABLE big (id int PRIMARY KEY, n int, t text, vc varchar, by bytea, jb jsonb, js json, x xml,"
    " at text[], ai int[], tv tsvector, hs hstore, vb varbit, g geometry, pa path, nu numeric);"
    "ALTER TABLE big ALTER COLUMN t SET STORAGE EXTERNAL, ALTER COLUMN by SET STORAGE EXTERNAL"
)
MB = 1 << 20
TOAST_INSERT = (
    "INSERT INTO big SELECT 1, 0, s, s, convert_to(s, 'UTF8'), jsonb_build_object('k', s), json_build_object('k', s),"
    f" xmlelement(name a, s), ARRAY[s, 'x'], (SELECT array_agg(g) FROM generate_series(1, {MB // 8}) g),"
    " to_tsvector('simple', (SELECT string_agg('w' || g, ' ') FROM generate_series(1, 60000) g)),"
    " hstore('k', s), (SELECT string_agg((g % 2)::text, '')::varbit FROM generate_series(1, 8 * 1024 * 256) g),"
    " (SELECT ST_MakeLine(ARRAY(SELECT ST_MakePoint(g, g) FROM generate_series(1, 40000) g))),"
    " (SELECT ('[' || string_agg('(' || g || ',' || g || ')', ',') || ']')::path FROM generate_series(1, 40000) g),"
    " (SELECT (string_agg((g % 10)::text, '') || '.5')::numeric FROM generate_series(1, 100000) g)"
    f" FROM (SELECT string_agg(md5(g::text), '') AS s FROM generate_series(1, {MB // 32}) g) src"
)
TOAST_WORKLOAD = [
    TOAST_INSERT,
    "UPDATE big SET n = 1",
    "UPDATE big SET n = 2, t = 'short'",
    "DELETE FROM big",
]


@pytest.mark.parametrize("identity", ["DEFAULT", "FULL"])
def test_one_megabyte_toasted_values_of_every_type(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                    identity: str) -> None:
    require_postgis(pg)
    ours, theirs = run_both(pg, dbname, tmp_path, TOAST_SETUP + f"; ALTER TABLE big REPLICA IDENTITY {identity}",
                            {"include.unknown.datatypes": "true", "hstore.handling.mode": "map"}, TOAST_WORKLOAD)
    check(ours, theirs, f"1 MB TOAST, REPLICA IDENTITY {identity}")
