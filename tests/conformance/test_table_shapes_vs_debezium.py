"""Table shapes compared with the real Debezium 3.6, snapshotted and streamed: a stored generated column (which
pgoutput does not send before PostgreSQL 18), a dropped column beside one added after it, and names that need
quoting (capitals, spaces, a quote, non-ASCII letters); arrays with other lower bounds and more dimensions; the
catalog's types (regclass, xid, tid, oidvector, ...) and a user-defined range, with their limits. (A
table without columns stops Debezium's snapshot with a NullPointerException, measured; pgcdc writes its rows as
empty structs: docs/compatibility.md.)"""

from __future__ import annotations

from pathlib import Path

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

SETUP = (
    "CREATE TABLE gen (id int PRIMARY KEY, a int, b int GENERATED ALWAYS AS (a * 2) STORED, c text);"
    "INSERT INTO gen (id, a, c) VALUES (1, 1, 'x');"
    "CREATE TABLE dropped (id int PRIMARY KEY, gone text, kept int); INSERT INTO dropped VALUES (1, 'g', 1);"
    "ALTER TABLE dropped DROP COLUMN gone; ALTER TABLE dropped ADD COLUMN added text DEFAULT 'd';"
    'CREATE SCHEMA "Sch"; CREATE TABLE "Sch"."Ta ble" ("Id" int PRIMARY KEY, "Col 1" text, "qu""ote" int, "ü" text);'
    "INSERT INTO \"Sch\".\"Ta ble\" VALUES (1, 'x', 2, 'é')"
)
WORKLOAD = [
    "INSERT INTO gen (id, a, c) VALUES (2, 5, 'y')",
    "UPDATE gen SET a = 6 WHERE id = 2",
    "DELETE FROM gen WHERE id = 1",
    "INSERT INTO dropped (id, kept) VALUES (2, 2)",
    "UPDATE dropped SET added = 'u' WHERE id = 1",
    "INSERT INTO \"Sch\".\"Ta ble\" VALUES (2, 'y', NULL, NULL)",
    "UPDATE \"Sch\".\"Ta ble\" SET \"Id\" = 3 WHERE \"Id\" = 2",
]


def test_table_shapes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {}, WORKLOAD, snapshot=True)
    assert_same("table shapes", ours, theirs, snapshot=True)


# Arrays with lower bounds other than 1 ('[0:1]={1,2}': their elements) and multi-dimensional ones (an element per
# inner array, null). A multi-dimensional text[] Debezium writes as a Java object's identity text
# ('[Ljava.lang.String;@2f2b313d', different every run; pgcdc writes null there: docs/compatibility.md), so it is
# left out.
ARRAYS = (
    "CREATE TABLE a (id int PRIMARY KEY, i int[], t text[], n numeric[], d date[], f float8[], b bool[], "
    "ts timestamptz[]);"
    "INSERT INTO a VALUES (1, '[0:1]={1,2}', '[-1:0]={x,y}', '[2:2]={1.5}', '[5:5]={2020-01-01}', '[3:4]={1.5,NaN}',"
    " '[0:0]={t}', '[1:1]={\"2020-01-01 00:00:00+00\"}'),"
    " (2, '{{1,2},{3,4}}', '{a}', '{{1}}', '{{2020-01-01}}', '{{1}}', '{{t}}', '{{\"2020-01-01 00:00:00+00\"}}')"
)


def test_array_bounds_and_dimensions_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ARRAYS, {}, ["INSERT INTO a SELECT id + 10, i, t, n, d, f, b, ts "
                                                                "FROM a"], snapshot=True)
    assert_same("array shapes", ours, theirs, snapshot=True)


# Types of the catalog and a user-defined range, with include.unknown.datatypes: regclass, regtype, regproc, xid,
# xid8, cid, tid and a range over float8 as their text's bytes; a domain over int[] and an array of a domain;
# oidvector and int2vector as Debezium writes them (empty arrays, null for an empty vector).
CATALOG_TYPES = (
    "CREATE TYPE floatrange AS RANGE (subtype = float8); CREATE DOMAIN dai AS int[];"
    "CREATE DOMAIN dpos AS int CHECK (VALUE > 0);"
    "CREATE TABLE z (id int PRIMARY KEY, rc regclass, rt regtype, x xid, x8 xid8, c cid, t tid, fr floatrange, da dai,"
    " adp dpos[], rp regproc, oidv oidvector, i2v int2vector);"
    "INSERT INTO z VALUES (1, 'pg_class', 'int4', '123', '456', '7', '(1,2)', '[1.5,2.5)', '{1,2}', '{1,2}', 'now',"
    " '1 2', '1 2'), (2, NULL, NULL, NULL, NULL, NULL, NULL, 'empty', '{}', '{}', NULL, '', ''),"
    " (3, 'pg_catalog.pg_type', '\"char\"', '4294967295', '18446744073709551615', '4294967295', '(4294967295,65535)',"
    " '(-Infinity,NaN]', NULL, NULL, '-', '4294967295', '-32768 32767')"
)


def test_catalog_and_user_types_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, CATALOG_TYPES, {"include.unknown.datatypes": "true"},
                            ["INSERT INTO z SELECT id + 10, rc, rt, x, x8, c, t, fr, da, adp, rp, oidv, i2v FROM z"],
                            snapshot=True)
    assert_same("catalog types", ours, theirs, snapshot=True)
