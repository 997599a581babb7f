"""The same database and workload through the real Debezium 3.x and through pgcdc: records must be equal.

Both connectors stream from their own slot of the same database at the same time, so LSNs, transaction ids
and commit times are the same; only processing timestamps and the run id are masked (compare.py).
"""

from __future__ import annotations

from collections.abc import Callable

import time
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.file import FileSink
from tests.conformance.compare import assert_same, compare, differences, load
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.harness import Running, make_config, wait_for

BIG = "".join(chr(0x41 + (i * 7919) % 26) for i in range(12000))

TYPES_SETUP, _, TYPES_WORKLOAD = (
    "CREATE TABLE t_types (id serial PRIMARY KEY, i2 smallint, i4 integer, i8 bigint, n numeric(10,2),"
    " nv numeric, r real, d double precision, b boolean, t text, vc varchar(20), c char(5), by bytea,"
    " dt date, tm time, tm3 time(3), ts timestamp, ts3 timestamp(3), tz timestamptz, tz3 timestamptz(3),"
    " u uuid, j json, jb jsonb, ai int4[], at text[], nn int NOT NULL DEFAULT 0)",
    None,
    [
        "INSERT INTO t_types (i2, i4, i8, n, nv, r, d, b, t, vc, c, by, dt, tm, tm3, ts, ts3, tz, tz3, u, j, jb,"
        " ai, at) VALUES (-32768, 2147483647, -9223372036854775808, 12345678.91, 3.14159265358979,"
        " 1.5, 1e-300, true, 'héllo ✓', 'vc', 'ab', '\\x00ff10', '1969-07-20', '23:59:59.999999',"
        " '12:00:00.5', '2024-02-29 12:34:56.789012', '1900-01-01 00:00:00.001', '2024-01-02 03:04:05+02',"
        " '2024-01-02 03:04:05.1+00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": [1, 2.5]}',"
        " '{\"b\": {\"c\": null}}', '{1,2,NULL}', '{\"x y\",\"\"}')",
        "INSERT INTO t_types (nn) VALUES (1)",
        "INSERT INTO t_types (n, nv, r, d, dt, ts, tz, ai, at) VALUES (-0.01, -100, 'NaN', 'Infinity',"
        " '2000-01-01', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '{}', '{}')",
        "INSERT INTO t_types (nv, d, r, ts, tm) VALUES (0.000001, 123456789.125, -0.0, '2038-01-19 03:14:08',"
        " '00:00:00')",
        "UPDATE t_types SET t = 'updated', d = 1e20 WHERE id = 1",
        "DELETE FROM t_types WHERE id = 2",
    ],
)

MORE_SETUP = (
    "CREATE EXTENSION citext; CREATE EXTENSION hstore; CREATE EXTENSION ltree;"
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); CREATE DOMAIN posint AS integer CHECK (VALUE > 0);"
    "CREATE TABLE more (id int PRIMARY KEY, iv interval, ip inet, cn cidr, mac macaddr, mac8 macaddr8, mo money,"
    " b1 bit(1), b8 bit(8), vb varbit, x xml, e mood, dom posint, o oid, pt point, r4 int4range, rn numrange,"
    " rts tsrange, rtz tstzrange, rd daterange, r8 int8range, ci citext, hs hstore, lt ltree, ch \"char\","
    " ttz timetz, ttz3 timetz(3), dinf date, tsinf timestamp, tzinf timestamptz, nnan numeric(6,2), nvnan numeric,"
    " ae mood[], ainet inet[], auuid uuid[], anum numeric(5,2)[], adate date[], ats timestamptz[], ajs jsonb[],"
    " abool bool[], af8 float8[], abytea bytea[], a2 int[][])"
)
MORE_WORKLOAD = [
    "INSERT INTO more VALUES (1, '1 year 2 mons 3 days 04:05:06.789', '192.168.0.1/24', '10.0.0.0/8',"
    " '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', 12.34, B'1', B'10100101', B'101', '<a>x</a>', 'happy', 5,"
    " 4000000000, '(1.5,-2)', '[1,10)', '(1.5,2.5]', '[2024-01-01 00:00,2024-01-02 00:00)',"
    " '[2024-01-01 00:00+00,)', '[2024-01-01,2024-02-01)', 'empty', 'MiXeD', 'b=>NULL, a=>1', 'top.sub', 'c',"
    " '12:34:56.789+02', '12:34:56.7-05:30', 'infinity', '-infinity', 'infinity', 'NaN', 'NaN', '{sad,happy}',"
    " '{10.0.0.1,::1}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', '{1.5,NULL}', '{2024-01-01}',"
    " '{\"2024-01-01 00:00:00+00\"}', '{\"{\\\"a\\\":1}\"}', '{t,f}', '{1.5,NaN}', '{\"\\\\x00ff\"}',"
    " '{{1,2},{3,4}}')",
    "INSERT INTO more (id, iv, mo, b8, vb, pt, ttz, tzinf, hs) VALUES (2, '-1 days -00:00:01', -1234.5,"
    " B'00000000', B'1000000000000001', '(0,0)', '00:00:00+00', '-infinity', '')",
    "INSERT INTO more (id) VALUES (3)",
    # Parts of mixed signs: PostgreSQL writes a '+' on the time part.
    "INSERT INTO more (id, iv) VALUES (4, '-1 days +00:00:01'), (5, '1 year 1 mon -1 days +01:01:01.25'),"
    " (6, '-1 years +2 mons -3 days +04:05:06')",
]

# Names Avro does not allow: a topic prefix and table with '-', a prefix and a column starting with a digit, a
# column with a dot, one outside the BMP (two UTF-16 units), a non-ASCII letter.
ODD_NAMES_SETUP = ('CREATE TABLE "order-items" ("1id" int PRIMARY KEY, "c🎉" text, "a.b" text, "é" text,'
                   ' "_ok9" int)')
ODD_NAMES_WORKLOAD = ["""INSERT INTO "order-items" VALUES (1, 'x', 'y', 'z', 9)""",
                      """UPDATE "order-items" SET "a.b" = 'w'""", 'DELETE FROM "order-items"']

SCENARIOS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "ops": (
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2));"
        "CREATE TABLE nopk (a int, b text);"
        "CREATE TABLE full_t (id int PRIMARY KEY, v text); ALTER TABLE full_t REPLICA IDENTITY FULL;"
        "CREATE TABLE toast_t (id int PRIMARY KEY, counter int, doc text);"
        "ALTER TABLE toast_t ALTER COLUMN doc SET STORAGE EXTERNAL;"
        "CREATE TABLE two (k1 int, k2 text, v int, PRIMARY KEY (k1, k2));",
        {},
        [
            "INSERT INTO items VALUES (1, 'apple', 1.25), (2, 'pear', NULL)",
            "UPDATE items SET price = 2.50 WHERE id = 1",
            "UPDATE items SET id = 3 WHERE id = 2",
            "DELETE FROM items WHERE id = 1",
            "INSERT INTO nopk VALUES (1, 'x')",
            "INSERT INTO full_t VALUES (1, 'old'); UPDATE full_t SET v = 'new'; UPDATE full_t SET id = 2",
            "DELETE FROM full_t",
            f"INSERT INTO toast_t VALUES (1, 0, '{BIG}')",
            "UPDATE toast_t SET counter = 1",
            "BEGIN; INSERT INTO two VALUES (1, 'a', 1); UPDATE two SET k2 = 'b'; INSERT INTO items VALUES (9, 'x', 0);"
            " COMMIT",
            "TRUNCATE nopk",
            "SELECT pg_logical_emit_message(true, 'app', 'hello')",
            "SELECT pg_logical_emit_message(false, 'app', 'now')",
            "INSERT INTO items VALUES (10, 'last', -0.01)",
        ],
    ),
    "types": (TYPES_SETUP, {}, TYPES_WORKLOAD),
    # a logical-decoding message's content is converted as a bytea column of binary.handling.mode
    **{f"messages_{mode}": ("CREATE TABLE m (id int PRIMARY KEY)", {"binary.handling.mode": mode}, [
        "SELECT pg_logical_emit_message(true, 'app', 'hello ✓')", "SELECT pg_logical_emit_message(false, 'app', '')",
        "SELECT pg_logical_emit_message(false, 'bin', '\\xfbff00'::bytea)"])
       for mode in ("hex", "base64", "base64-url-safe")},
    **{f"name_adjustment_{mode}": (ODD_NAMES_SETUP, {"topic.prefix": "1-srv", "schema.name.adjustment.mode": mode,
                                                      "field.name.adjustment.mode": mode}, ODD_NAMES_WORKLOAD)
       for mode in ("none", "avro", "avro_unicode")},
    "types_string_connect_base64": (TYPES_SETUP, {"decimal.handling.mode": "string", "time.precision.mode": "connect",
                                                  "binary.handling.mode": "base64"}, TYPES_WORKLOAD),
    "types_double_micro_hex": (TYPES_SETUP, {"decimal.handling.mode": "double",
                                             "time.precision.mode": "adaptive_time_microseconds",
                                             "binary.handling.mode": "hex"}, TYPES_WORKLOAD),
    "types_isostring_urlsafe": (TYPES_SETUP, {"time.precision.mode": "isostring",
                                              "binary.handling.mode": "base64-url-safe"}, TYPES_WORKLOAD),
    "types_more": (MORE_SETUP, {}, MORE_WORKLOAD),
    "types_more_modes": (MORE_SETUP, {"interval.handling.mode": "string", "hstore.handling.mode": "map",
                                      "decimal.handling.mode": "string"}, MORE_WORKLOAD),
    "toast_defaults_ddl": (
        "CREATE TABLE tt (id int PRIMARY KEY, n int, t text, by bytea, ai int[], at text[], jb jsonb, x xml,"
        " d_int int NOT NULL DEFAULT 42, d_txt text DEFAULT 'dflt', d_num numeric(5,2) DEFAULT 1.5,"
        " d_bool boolean NOT NULL DEFAULT true, d_ts timestamptz DEFAULT now(), d_neg int DEFAULT -7,"
        " d_var varchar(10) NOT NULL DEFAULT 'v'::character varying);"
        "ALTER TABLE tt ALTER COLUMN t SET STORAGE EXTERNAL, ALTER COLUMN by SET STORAGE EXTERNAL,"
        " ALTER COLUMN ai SET STORAGE EXTERNAL, ALTER COLUMN at SET STORAGE EXTERNAL,"
        " ALTER COLUMN jb SET STORAGE EXTERNAL, ALTER COLUMN x SET STORAGE EXTERNAL;"
        f"INSERT INTO tt (id, n, t, by, ai, at, jb, x) VALUES (1, 0, '{BIG}', convert_to('{BIG}', 'UTF8'),"
        " (SELECT array_agg(g) FROM generate_series(1, 3000) g),"
        f" ARRAY['{BIG}'], jsonb_build_object('k', '{BIG}'), xmlelement(name a, '{BIG}'))",
        {},
        [
            "UPDATE tt SET n = 1",
            "ALTER TABLE tt ADD COLUMN added int DEFAULT 5",
            "UPDATE tt SET n = 2",
            "ALTER TABLE tt DROP COLUMN x",
            "INSERT INTO tt (id) VALUES (2)",
            "ALTER TABLE tt ALTER COLUMN added TYPE bigint",
            "UPDATE tt SET added = 9 WHERE id = 2",
            "DELETE FROM tt WHERE id = 2",
        ],
    ),
    "propagate_source_types": (
        TYPES_SETUP + "; ALTER TABLE t_types ADD COLUMN tv tsvector, ADD COLUMN bt bit(3), ADD COLUMN nm2 numeric",
        {"column.propagate.source.type": ".*", "include.unknown.datatypes": "true"},
        [*TYPES_WORKLOAD[:2], "UPDATE t_types SET tv = 'a fat cat', bt = B'101', nm2 = 1.25"],
    ),
    "datatype_propagate": (
        "CREATE TABLE dp (id int PRIMARY KEY, t text, v varchar(7), n numeric(4,1))",
        {"datatype.propagate.source.type": ".+\\.TEXT,.+\\.NUMERIC"},
        ["INSERT INTO dp VALUES (1, 'x', 'y', 1.5)"],
    ),
    "txmeta": (
        "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY, v text);"
        "CREATE TABLE zeta (id int PRIMARY KEY); CREATE TABLE alpha (id int PRIMARY KEY);"
        "CREATE TABLE middle_table (id int PRIMARY KEY); CREATE TABLE x9 (id int PRIMARY KEY)",
        {"provide.transaction.metadata": "true"},
        [
            "BEGIN; INSERT INTO zeta VALUES (1); INSERT INTO alpha VALUES (1); INSERT INTO middle_table VALUES (1);"
            " INSERT INTO x9 VALUES (1); INSERT INTO a VALUES (9); INSERT INTO zeta VALUES (2); COMMIT",
            "BEGIN; INSERT INTO a VALUES (1); INSERT INTO b VALUES (1, 'x'); INSERT INTO a VALUES (2); COMMIT",
            "UPDATE b SET v = 'y'",
            "BEGIN; DELETE FROM a; UPDATE b SET id = 5; COMMIT",
            "SELECT pg_logical_emit_message(true, 'tx', 'in a transaction')",
        ],
    ),
    "truncate_and_options": (
        "CREATE TABLE tr (id int PRIMARY KEY, v text); INSERT INTO tr VALUES (1, 'a')",
        {"skipped.operations": "u", "tombstones.on.delete": "false"},
        ["INSERT INTO tr VALUES (2, 'b')", "UPDATE tr SET v = 'c'", "DELETE FROM tr WHERE id = 1",
         "TRUNCATE tr", "INSERT INTO tr VALUES (3, 'd')"],
    ),
    "noschemas": (
        "CREATE TABLE s (id int PRIMARY KEY, v numeric(6,3), w text)",
        {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"},
        ["INSERT INTO s VALUES (1, 1.5, 'x')", "UPDATE s SET id = 2", "DELETE FROM s"],
    ),
    "replica_identity_index": (
        "CREATE TABLE ui (id int PRIMARY KEY, code text NOT NULL, v int);"
        "CREATE UNIQUE INDEX ui_code ON ui (code); ALTER TABLE ui REPLICA IDENTITY USING INDEX ui_code;"
        "INSERT INTO ui VALUES (1, 'a', 0), (2, 'c', 0)",
        {},
        ["UPDATE ui SET code = 'b' WHERE id = 1", "UPDATE ui SET v = 5 WHERE id = 1",
         "UPDATE ui SET id = 3 WHERE id = 2", "DELETE FROM ui"],
    ),
    "message_key_columns": (
        "CREATE TABLE mk (a int, b text, c int); ALTER TABLE mk REPLICA IDENTITY FULL",
        {"message.key.columns": "public\\.mk:b,a"},
        ["INSERT INTO mk VALUES (1, 'x', 3)", "UPDATE mk SET c = 4", "DELETE FROM mk"],
    ),
}


def slot_active(pg: PostgresCluster, slot: str) -> bool:
    return pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = '{slot}'") == [(True,)]


def lines(path: Path) -> int:
    """Records written so far, heartbeats aside (they keep coming while the connector runs)."""
    if not path.exists():
        return 0
    return sum(1 for line in path.read_bytes().splitlines() if b'"topic":"__debezium-heartbeat' not in line)



def run_workload(pg: PostgresCluster, dbname: str, workload: list[str], theirs: Callable[[], int],
                 ours: Callable[[], int], done: Callable[[], bool] = lambda: False) -> None:
    """Runs the statements, then waits (90 s at most) until Debezium's record count (`theirs`) has stood still for
    4 s and pgcdc's (`ours`) has caught up with it, or `done` says pgcdc has stopped."""
    ddl = any(stmt.startswith("ALTER") for stmt in workload)
    for stmt in workload:
        pg.execute(stmt, dbname)
        if ddl:
            # Both connectors read column metadata from the catalog when a Relation message arrives;
            # give each time to do so before the next DDL changes it (Debezium has the same race).
            time.sleep(0.7)
    last, stable_since = -1, time.monotonic()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        n = theirs()
        if n != last:
            last, stable_since = n, time.monotonic()
        elif n and time.monotonic() - stable_since > 4 and (ours() >= n or done()):
            break
        time.sleep(0.2)

def run_both(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
             workload: list[str], snapshot: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    mode = "initial" if snapshot else "no_data"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": mode, **props}
    oracle = start_oracle({"name": "oracle", "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        sink = FileSink(str(ours_path))
        config = make_config(pg, dbname, **{**common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                            "publication.name": f"pgcdcpub_{dbname}"})
        with Running(config, sink=sink):
            run_workload(pg, dbname, workload, lambda: lines(theirs_path), lambda: lines(ours_path))
    finally:
        stop_oracle(oracle, theirs_path)
    return load(ours_path), load(theirs_path)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_streaming_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, scenario: str) -> None:
    setup, props, workload = SCENARIOS[scenario]
    ours, theirs = run_both(pg, dbname, tmp_path, setup, props, workload)
    assert_same(scenario, ours, theirs)


def test_snapshot_of_every_type_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    setup = ";".join([TYPES_SETUP, MORE_SETUP, *TYPES_WORKLOAD[:4], *MORE_WORKLOAD])
    ours, theirs = run_both(pg, dbname, tmp_path, setup, {}, ["INSERT INTO more (id) VALUES (99)"], snapshot=True)
    assert_same("snapshot types", ours, theirs, snapshot=True)
    assert len(theirs) == 11


def test_snapshot_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    setup = ("CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id bigint PRIMARY KEY, n numeric(5,1));"
             "INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, NULL); INSERT INTO b VALUES (10, 1.5)")
    ours, theirs = run_both(pg, dbname, tmp_path, setup, {}, ["INSERT INTO b VALUES (11, 2.5)"], snapshot=True)
    assert_same("snapshot", ours, theirs, snapshot=True)


# The heartbeat topic: topic.heartbeat.prefix and topic.prefix joined by topic.delimiter, or topic.heartbeat.name.
HEARTBEAT_TOPICS = {
    "default": ({}, "__debezium-heartbeat.dbserver1", "dbserver1.public.h"),
    "delimiter": ({"topic.delimiter": "_"}, "__debezium-heartbeat_dbserver1", "dbserver1_public_h"),
    "name": ({"topic.heartbeat.name": "__debezium-heartbeat-shared"}, "__debezium-heartbeat-shared",
             "dbserver1.public.h"),
}


@pytest.mark.parametrize("case", list(HEARTBEAT_TOPICS))
def test_heartbeat_records_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, case: str) -> None:
    props, hb_topic, topic = HEARTBEAT_TOPICS[case]
    ours, theirs = run_both(pg, dbname, tmp_path, "CREATE TABLE h (id int PRIMARY KEY)",
                            {"heartbeat.interval.ms": "500", **props}, ["INSERT INTO h VALUES (1)"])
    assert compare([r for r in ours if r["topic"] == topic], [r for r in theirs if r["topic"] == topic]) == []
    assert any(r["topic"] == topic for r in theirs)

    def first_heartbeat(records: list[dict[str, Any]]) -> dict[str, Any]:
        hb = next(r for r in records if r["topic"].startswith("__debezium-heartbeat"))
        hb["value"]["payload"]["ts_ms"] = "<masked>"
        return hb

    assert first_heartbeat(theirs)["topic"] == hb_topic
    assert differences(first_heartbeat(ours), first_heartbeat(theirs)) == []


def test_streamed_large_transactions_match_debezium(tmp_path: Path) -> None:
    """pgcdc receives big transactions streamed before commit; Debezium receives them whole: same records."""
    import uuid

    with PostgresCluster(settings={"logical_decoding_work_mem": "64kB"}) as pg:
        dbname = pg.create_database(f"s_{uuid.uuid4().hex[:8]}")
        workload = [
            "BEGIN; INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 1500) g;"
            " SAVEPOINT a; UPDATE big SET pad = 'gone' WHERE id <= 500; ROLLBACK TO SAVEPOINT a;"
            " DELETE FROM big WHERE id > 1400; UPDATE big SET id = id + 10000 WHERE id = 7;"
            " SELECT pg_logical_emit_message(true, 'big', 'inside'); COMMIT",
            "BEGIN; INSERT INTO big SELECT g, 'aborted' FROM generate_series(20001, 22000) g; ROLLBACK",
            "INSERT INTO big VALUES (0, 'last')",
        ]
        ours, theirs = run_both(pg, dbname, tmp_path, "CREATE TABLE big (id int PRIMARY KEY, pad text)",
                                {"provide.transaction.metadata": "true"}, workload)
        slot_stats = pg.execute(f"SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = "
                                f"'pgcdc_{dbname}'")
    assert_same("streamed", ours, theirs)
    assert slot_stats and slot_stats[0][0] >= 1, "the server did not stream to pgcdc"
    assert len(theirs) > 1500
