"""Debezium's notifications (`notification.enabled.channels=sink,log`) through the real Debezium 3.6 and through
pgcdc: the same notification records, in the same place among the change records.

An initial snapshot of two tables, then an incremental snapshot of both, asked for with an `execute-snapshot`
row in the signal table; an initial snapshot of every table (empty, without a primary key, in other schemas,
the signal table among them); a start without a snapshot and an incremental snapshot paused and resumed; a
blocking snapshot. A notification's `id` (a random UUID, except an incremental snapshot's, which is the
signal's id) and `timestamp` differ by nature and are masked; so is everything the other comparisons mask
(incremental.py's watermark rows, LSNs, transaction ids, times). Everything else is compared record by record:
the topic, the key and value schemas, `aggregate_type`, `type`, every `additional_data` entry, and where each
notification sits among the snapshot's records, the signal rows and the window rows.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance import test_incremental_vs_debezium as inc
from tests.conformance.compare import differences
from tests.conformance.test_avro_vs_debezium import assert_same_avro, run_both_avro

pytestmark = pytest.mark.conformance

TOPIC = "dbz_notifications"
SETUP = (
    "CREATE TABLE a (id int PRIMARY KEY, v text); INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 3) g;"
    "CREATE TABLE b (k1 int, k2 text, PRIMARY KEY (k1, k2)); INSERT INTO b VALUES (1, 'x'), (2, 'y');"
    "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
)
PROPS = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", "signal.data.collection": "public.dbz_signal",
         "incremental.snapshot.chunk.size": "2", "table.include.list": "public.a,public.b",
         "notification.enabled.channels": "sink,log", "notification.sink.topic.name": TOPIC}
WORKLOAD = [
    "INSERT INTO dbz_signal VALUES ('sig-1', 'execute-snapshot', "
    "'{\"data-collections\": [\"public.a\", \"public.b\"], \"type\": \"incremental\"}')",
    "WAIT",
    "INSERT INTO a VALUES (100, 'after')",
]
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def mask(record: dict[str, Any]) -> dict[str, Any]:
    """The incremental comparison's masking, and a notification's random id and its timestamp."""
    rec = inc.mask(record)
    if rec["topic"] != TOPIC:
        return rec
    for side in ("key", "value"):
        payload = (rec.get(side) or {}).get("payload") or {}
        if UUID.match(str(payload.get("id"))):
            payload["id"] = "<uuid>"
        if "timestamp" in payload:
            payload["timestamp"] = "<masked>"
        if isinstance(payload.get("additional_data"), dict):
            # Debezium's HashMap puts keys sharing a bucket in the order of the Map.of it was copied from,
            # which changes from one JVM to the next (status and data_collections): compared as a set.
            payload["additional_data"] = dict(sorted(payload["additional_data"].items()))
    return rec


# Every table captured (no include list): an empty table, one without a primary key, another schema, the signal
# table among the captured ones; no incremental snapshot.
MANY_SETUP = (
    "CREATE TABLE a (id int PRIMARY KEY, v text); INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 3) g;"
    "CREATE TABLE e (id int PRIMARY KEY); CREATE TABLE nopk (x int); INSERT INTO nopk VALUES (1), (2);"
    "CREATE SCHEMA other; CREATE TABLE other.t (id bigint PRIMARY KEY); INSERT INTO other.t VALUES (7);"
    "CREATE TABLE \"Upper\" (id int PRIMARY KEY); INSERT INTO \"Upper\" VALUES (1);"
    "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
)
MANY_PROPS = {**{k: v for k, v in PROPS.items() if k != "table.include.list"}}
# No initial snapshot (SKIPPED), then an incremental snapshot paused in the transaction that started it and
# resumed later.
PAUSED_PROPS = {**PROPS, "snapshot.mode": "no_data"}
PAUSED_WORKLOAD = [
    "INSERT INTO dbz_signal VALUES ('sig-p', 'execute-snapshot', "
    "'{\"data-collections\": [\"public.a\", \"public.b\"], \"type\": \"incremental\"}');"
    "INSERT INTO dbz_signal VALUES ('pause-1', 'pause-snapshot', NULL)",
    # the first window closes before the resume comes (Debezium, reading the stream later than pgcdc, otherwise
    # handles the resume first and reads a second chunk into the first's window)
    "SELECT pg_sleep(3)",
    "INSERT INTO dbz_signal VALUES ('resume-1', 'resume-snapshot', NULL)",
    "WAIT",
    "INSERT INTO a VALUES (100, 'after')",
]
# A blocking snapshot of both tables (one with a filter), asked for while streaming.
BLOCKING_WORKLOAD = [
    "INSERT INTO dbz_signal VALUES ('blk', 'execute-snapshot', '{\"data-collections\": [\"public.b\", \"public.a\"],"
    " \"type\": \"blocking\", \"additional-conditions\": [{\"data-collection\": \"public.a\","
    " \"filter\": \"SELECT * FROM public.a WHERE id > 1\"}]}')",
    "WAIT_BLOCKING",
    "INSERT INTO a VALUES (100, 'after')",
]
# An incremental snapshot of tables keyed by other types than integers and text: IN_PROGRESS writes each key value
# as its JDBC value's Java toString (BigDecimal, Boolean, Double and Float differ from PostgreSQL's text). Not
# timestamp or time keys: Debezium 3.6 binds the last key of a chunk as a varchar there, its next chunk fails
# ("operator does not exist: timestamp without time zone > character varying") and the table is skipped with
# SQL_EXCEPTION, the next table too (its transaction aborted); pgcdc reads them.
KEY_TABLES = {
    "k_num": ("numeric", "0.0000001, 1.50, 100, -2.5e-10, 12345678901234567890.5"),
    "k_bool": ("boolean", "true, false"),
    "k_date": ("date", "'2020-02-29', '0001-01-01', '1970-01-01'"),
    "k_uuid": ("uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000'"),
    "k_f8": ("float8", "0.1, 1e20, 1.5, -0.000001"),
    "k_f4": ("real", "0.1, 1e20, 3.4e38"),
    "k_ch": ("char(4)", "'ab', 'abcd'"),
    # domains (one over another): the JDBC value is the base type's
    "k_dnum": ("d_num2", "0.0000001, 1.50, -2.5e-10"),
    "k_dbool": ("d_bool", "true, false"),
    "k_df8": ("d_f8", "1e20, 0.1"),
}
KEYS_SETUP = ("CREATE DOMAIN d_num AS numeric; CREATE DOMAIN d_num2 AS d_num CHECK (VALUE > -1);"
              "CREATE DOMAIN d_bool AS boolean; CREATE DOMAIN d_f8 AS float8;") + "".join(
    f"CREATE TABLE {t} (id {kind} PRIMARY KEY); INSERT INTO {t} SELECT unnest(ARRAY[{values}]::{kind}[]);"
    for t, (kind, values) in KEY_TABLES.items()) + (
    "CREATE TABLE k_mix (a int, b numeric(10,2), c boolean, d date, PRIMARY KEY (a, b, c, d));"
    "INSERT INTO k_mix VALUES (1, 1.00, true, '2020-01-01'), (2, 0.00, false, '2021-01-01'), (3, 2.50, true, "
    "'1999-12-31');"
    "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
KEYS_PROPS = {**PROPS, "snapshot.mode": "no_data",
              "table.include.list": ",".join(f"public.{t}" for t in [*KEY_TABLES, "k_mix"])}
KEYS_WORKLOAD = [
    "INSERT INTO dbz_signal VALUES ('sig-k', 'execute-snapshot', '{\"data-collections\": ["
    + ", ".join(f'"public.{t}"' for t in [*KEY_TABLES, "k_mix"]) + "], \"type\": \"incremental\"}')",
    "WAIT",
    "INSERT INTO k_num VALUES (7)",
]
# Debezium's chunked snapshot (one thread, snapshot.max.threads.multiplier=3): each table's rows in key order in
# up to three chunks (10 rows: 3, 3 and 4; 5 rows: 1, 1 and 3; 2 rows: 1 and 1), one chunk for an empty table and
# a table without a primary key, with TABLE_CHUNK_IN_PROGRESS and TABLE_CHUNK_COMPLETED among the records.
CHUNKED_SETUP = (
    "CREATE TABLE a (id int PRIMARY KEY, v text); INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 10) g;"
    "CREATE TABLE b (k1 int, k2 text, PRIMARY KEY (k1, k2));"
    "INSERT INTO b VALUES (2, 'y'), (1, 'x'), (1, 'z'), (3, ''), (0, 'w');"
    "CREATE TABLE s (id bigint PRIMARY KEY); INSERT INTO s VALUES (9), (-9);"
    "CREATE TABLE e (id int PRIMARY KEY); CREATE TABLE nopk (x int); INSERT INTO nopk VALUES (1), (2);"
    "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
)
CHUNKED_PROPS = {**MANY_PROPS, "snapshot.max.threads.multiplier": "3"}
CHUNKED_BLOCKING_WORKLOAD = [
    BLOCKING_WORKLOAD[0].replace('"public.b", "public.a"', '"public.b", "public.a", "public.s"'),
    *BLOCKING_WORKLOAD[1:]]
CHUNKED_BLOCKING_PROPS = {**PAUSED_PROPS, "table.include.list": "public.a,public.b,public.s",
                          "snapshot.max.threads.multiplier": "3"}
CASES = {
    "chunked": (CHUNKED_SETUP, ["INSERT INTO a VALUES (100, 'after')"], CHUNKED_PROPS, 0),
    "chunked_blocking": (CHUNKED_SETUP, CHUNKED_BLOCKING_WORKLOAD, CHUNKED_BLOCKING_PROPS, 0),
    "typed_keys": (KEYS_SETUP, KEYS_WORKLOAD, KEYS_PROPS, 4),
    "initial_and_incremental": (SETUP, WORKLOAD, PROPS, 4),
    "every_table": (MANY_SETUP, ["INSERT INTO a VALUES (100, 'after')"], MANY_PROPS, 0),
    "skipped_paused_resumed": (SETUP, PAUSED_WORKLOAD, PAUSED_PROPS, 4),
    "blocking": (SETUP, BLOCKING_WORKLOAD, PAUSED_PROPS, 0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_notifications_match_debezium(pg: PostgresCluster, tmp_path: Path, case: str) -> None:
    started = time.monotonic()
    ours, theirs = inc.run_both(pg, tmp_path, prefix="notif", case=CASES[case])
    notes = [(r["value"] or {}).get("payload", {}) for r in theirs if r["topic"] == TOPIC]
    print("Debezium:", [(p["aggregate_type"], p["type"]) for p in notes])
    assert notes, "Debezium wrote no notification"
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        problems += [f"record {i} ({b['topic']}): {d}" for d in differences(mask(a), mask(b))]
    print(f"notifications ({case}): {len(theirs)} Debezium records ({len(notes)} notifications), {len(ours)} "
          f"pgcdc records, {len(problems)} differences, {time.monotonic() - started:.1f} s")
    if problems:
        for who, records in (("pgcdc", ours), ("Debezium", theirs)):
            print(who, [shape(r) for r in records])
    assert not problems, "\n".join(problems[:40])


def shape(record: dict[str, Any]) -> str:
    """A record in a few words: a notification's type, a change's table and op, a watermark's kind."""
    payload = (record["value"] or {}).get("payload") or {}
    if record["topic"] == TOPIC:
        return f"{payload['type']} {payload['additional_data']}"
    after = payload.get("after") or {}
    return f"{record['topic'].split('.')[-1]}:{payload.get('op')}:{after.get('type') or after.get('id')}"


# Through Confluent's AvroConverter, as a Connect worker converts Debezium's records: the notification key and
# value schemas Confluent registers and the bytes, with the initial snapshot's notifications among its records
# (every table captured), and a start without a snapshot (SKIPPED) then a change. An incremental snapshot in
# chunks of 2 and a blocking snapshot (one table filtered), each after a start without a snapshot: each connector
# has a signal table of its own (both run on one database, and each would read the other's watermark rows), so
# only the notifications are compared.
OWN_SIGNALS = "; CREATE TABLE pgcdc_signal (LIKE dbz_signal INCLUDING ALL)"
AVRO_CASES = {
    "every_table": (MANY_SETUP, MANY_PROPS, ["INSERT INTO a VALUES (100, 'after')"], True),
    "skipped": (SETUP, PAUSED_PROPS, ["INSERT INTO a VALUES (100, 'after')"], False),
    "incremental": (SETUP + OWN_SIGNALS, PAUSED_PROPS,
                    [WORKLOAD[0], WORKLOAD[0].replace("dbz_signal", "pgcdc_signal")], False),
    "blocking": (SETUP + OWN_SIGNALS, PAUSED_PROPS,
                 [BLOCKING_WORKLOAD[0], BLOCKING_WORKLOAD[0].replace("dbz_signal", "pgcdc_signal")], False),
}


@pytest.mark.parametrize("case", list(AVRO_CASES))
def test_notifications_through_avro_match_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                    case: str) -> None:
    setup, props, workload, snapshot = AVRO_CASES[case]
    own = {"signal.data.collection": "public.pgcdc_signal"} if OWN_SIGNALS in setup else None
    ours, theirs = run_both_avro(pg, dbname, tmp_path, setup, props, workload, snapshot=snapshot, ours_props=own)
    if own:
        ours, theirs = ([r for r in records if r["topic"] == TOPIC] for records in (ours, theirs))
    assert any(r["topic"] == TOPIC for r in theirs), "Debezium wrote no notification"
    assert_same_avro(f"notifications through Avro ({case})", ours, theirs, snapshot=snapshot)
