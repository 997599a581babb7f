"""Incremental snapshots through the signal table, against a real PostgreSQL.

The consistency tests run a writer (inserts, updates, deletes, key changes) while the snapshot reads the
tables chunk by chunk, then fold every record into a table state and compare it with the database, row for
row: a stale snapshot row (a DBLog window that failed to drop a row a change touched) or a lost one shows.
The connector starts with snapshot.mode=no_data, so every row that was never changed reaches the fold only
through the incremental snapshot.
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgcdc.capture.position import IncrementalProgress
from pgcdc.capture.snapshot_plan import TablePlan, describe, value_types
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_for

SIGNAL = "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
SETUP = (
    "CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL, t text);"
    "CREATE TABLE b (k1 int, k2 text, v int NOT NULL, PRIMARY KEY (k1, k2));"
    "INSERT INTO a SELECT g, 0, 'row ' || g FROM generate_series(1, %(rows)s) g;"
    "INSERT INTO b SELECT g %% 37, 'k' || g, 0 FROM generate_series(1, %(rows)s) g;" + SIGNAL
)


def signal(pg: PostgresCluster, db: str, kind: str, data: dict[str, Any] | None = None, sig_id: str = "") -> None:
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        conn.execute("INSERT INTO dbz_signal VALUES (%s, %s, %s)",
                     (sig_id or f"{kind}-{time.time_ns()}", kind, json.dumps(data) if data is not None else None))


def fold(records: list[dict[str, Any]], topic: str) -> dict[str, dict[str, Any]]:
    state: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["topic"] != topic or r["value"] is None:
            continue
        p = r["value"]["payload"]
        key = json.dumps(r["key"]["payload"], sort_keys=True)
        if p["op"] == "d":
            state.pop(key, None)
        else:
            state[key] = p["after"]
    return state


def db_state(pg: PostgresCluster, db: str, table: str, key: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    with psycopg.connect(pg.dsn(db)) as conn:
        cur = conn.execute(f"SELECT * FROM {table}")
        names = [d.name for d in cur.description or ()]
        rows = [dict(zip(names, row)) for row in cur.fetchall()]
    return {json.dumps({k: r[k] for k in key}, sort_keys=True): r for r in rows}


def writer(pg: PostgresCluster, db: str, stop: threading.Event, seed: int, rows: int) -> None:
    rnd = random.Random(seed)
    next_id = rows + 1
    with psycopg.connect(pg.dsn(db)) as conn:
        while not stop.is_set():
            with conn.transaction():
                for _ in range(rnd.randint(1, 5)):
                    action, target = rnd.random(), rnd.randint(1, next_id)
                    if action < 0.3:
                        conn.execute("INSERT INTO a VALUES (%s, 0, 'new')", (next_id,))
                        next_id += 1
                    elif action < 0.55:
                        conn.execute("UPDATE a SET v = v + 1, t = t || '+' WHERE id = %s", (target,))
                    elif action < 0.7:
                        conn.execute("DELETE FROM a WHERE id = %s", (target,))
                    elif action < 0.75:
                        conn.execute("UPDATE a SET id = %s WHERE id = %s", (next_id, target))
                        next_id += 1
                    elif action < 0.85:
                        conn.execute("UPDATE b SET v = v + 1 WHERE k1 = %s AND k2 = %s", (target % 37, f"k{target}"))
                    elif action < 0.93:
                        conn.execute("DELETE FROM b WHERE k1 = %s AND k2 = %s", (target % 37, f"k{target}"))
                    else:
                        conn.execute("INSERT INTO b VALUES (%s, %s, 0) ON CONFLICT DO NOTHING",
                                     (target % 37, f"n{next_id}"))
                        next_id += 1
            time.sleep(rnd.random() * 0.004)


def props(**more: str) -> dict[str, str]:
    return {"signal.data.collection": "public.dbz_signal", "incremental.snapshot.chunk.size": "64", **more}


def snapshot_ops(records: list[dict[str, Any]], topic: str) -> list[dict[str, Any]]:
    return [r["value"]["payload"] for r in records
            if r["topic"] == topic and r["value"] and r["value"]["payload"]["op"] == "r"]


def test_execute_snapshot_reads_every_row_in_windows(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(SETUP % {"rows": 300}, dbname)
    sink = MemorySink()
    offsets = MemoryOffsetStore()
    with Running(make_config(pg, dbname, **props()), sink=sink, offsets=offsets) as r:
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.a", "public.b"], "type": "incremental"},
               "sig-1")
        wait_for(lambda: len(snapshot_ops(sink.records, "test.public.b")) >= 300, 60, "the snapshot of b")
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        wait_for(lambda: not inc.running, 30, "the snapshot to finish")
        signal(pg, dbname, "log", {"message": "done"})
        wait_for(lambda: any(rec["value"]["payload"]["after"]["type"] == "log" for rec in sink.records
                             if rec["topic"] == "test.public.dbz_signal"), 30, "the log signal")
    a = snapshot_ops(sink.records, "test.public.a")
    assert [p["after"]["id"] for p in a] == list(range(1, 301))  # key order, each row once
    assert {p["source"]["snapshot"] for p in a} == {"incremental"}
    assert {(p["source"]["lsn"], p["source"]["txId"]) for p in a} == {(None, None)}
    assert len(snapshot_ops(sink.records, "test.public.b")) == 300
    # The windows: one open/close pair per chunk (300 rows / 64 = 5 chunks per table, then an empty read).
    kinds = [rec["value"]["payload"]["after"]["type"] for rec in sink.records
             if rec["topic"] == "test.public.dbz_signal"]
    assert kinds[0] == "execute-snapshot" and kinds[-1] == "log"
    assert kinds.count("snapshot-window-open") == kinds.count("snapshot-window-close") == 11
    # Each window's r records come right before its close row, sequence equal to the close row's.
    closes = [i for i, rec in enumerate(sink.records) if rec["topic"] == "test.public.dbz_signal"
              and rec["value"]["payload"]["after"]["type"] == "snapshot-window-close"]
    first_close = sink.records[closes[0]]["value"]["payload"]
    chunk = [rec["value"]["payload"] for rec in sink.records[closes[0] - 64:closes[0]]]
    assert [p["op"] for p in chunk] == ["r"] * 64
    assert {p["source"]["sequence"] for p in chunk} == {first_close["source"]["sequence"]}
    # Finished: the last stored offset carries no incremental snapshot.
    assert IncrementalProgress.from_offset(offsets.load() or {}) is None


@pytest.mark.parametrize(("seed", "read_only"), [(1, False), (2, False), (3, False), (4, True), (5, True)])
def test_snapshot_under_concurrent_writes_folds_to_the_database(pg: PostgresCluster, dbname: str,
                                                               seed: int, read_only: bool) -> None:
    """read.only=true: windows from pg_current_snapshot(), nothing written to the database."""
    rows = 1500
    pg.execute(SETUP % {"rows": rows}, dbname)
    sink = MemorySink()
    stop = threading.Event()
    with Running(make_config(pg, dbname, **props(**{"read.only": str(read_only).lower()})), sink=sink) as r:
        w = threading.Thread(target=writer, args=(pg, dbname, stop, seed, rows), daemon=True)
        w.start()
        time.sleep(0.3)
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public\\.(a|b)"]})
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        wait_for(lambda: inc.rows > 0, 60, "the snapshot to start")
        wait_for(lambda: not inc.running, 120, "the snapshot to finish")
        stop.set()
        w.join(30)
        signal(pg, dbname, "log", {"message": "end"}, "end-marker")
        wait_for(lambda: any(rec["key"] == {"schema": rec["key"]["schema"], "payload": {"id": "end-marker"}}
                             for rec in sink.records if rec["topic"] == "test.public.dbz_signal"), 60, "the marker")
    for table, key in (("a", ("id",)), ("b", ("k1", "k2"))):
        folded, expected = fold(sink.records, f"test.public.{table}"), db_state(pg, dbname, table, key)
        missing = sorted(set(expected) - set(folded))[:5]
        extra = sorted(set(folded) - set(expected))[:5]
        wrong = [k for k in expected if k in folded and folded[k] != expected[k]][:5]
        assert not missing and not extra and not wrong, (table, missing, extra, wrong)
        assert len(folded) == len(expected)
    watermarks = pg.execute("SELECT count(*) FROM dbz_signal WHERE type LIKE 'snapshot-window-%'", dbname)[0][0]
    assert (watermarks == 0) if read_only else (watermarks > 0)
    print(f"seed {seed} read.only={read_only}: {inc.rows} snapshot rows, {watermarks} watermark rows, "
          f"{len(sink.records)} records")


def test_stop_pause_resume_and_conditions(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(SETUP % {"rows": 400}, dbname)
    sink = MemorySink()
    with Running(make_config(pg, dbname, **props()), sink=sink) as r:
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        signal(pg, dbname, "pause-snapshot")  # nothing running: ignored
        signal(pg, dbname, "execute-snapshot", {
            "data-collections": ["public.a"], "additional-conditions": [
                {"data-collection": "public.a", "filter": "id % 2 = 0"}]})
        wait_for(lambda: inc.rows >= 200 and not inc.running, 60, "the filtered snapshot")
        ids = [p["after"]["id"] for p in snapshot_ops(sink.records, "test.public.a")]
        assert ids == list(range(2, 401, 2))
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.b"]})
        wait_for(lambda: inc.rows > 200, 60, "b to start")
        signal(pg, dbname, "pause-snapshot")
        wait_for(lambda: inc.paused and inc.window is None, 30, "the pause")
        paused_at = inc.rows
        signal(pg, dbname, "log", {"message": "while paused"}, "paused-marker")
        wait_for(lambda: any(rec["value"]["payload"]["after"]["id"] == "paused-marker" for rec in sink.records
                             if rec["topic"] == "test.public.dbz_signal"), 30, "the marker")
        assert inc.rows == paused_at and inc.running
        signal(pg, dbname, "resume-snapshot")
        wait_for(lambda: inc.rows >= 600 and not inc.running, 60, "b to finish")
        assert len(snapshot_ops(sink.records, "test.public.b")) == 400
        before = len(snapshot_ops(sink.records, "test.public.a"))
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.a"], "surrogate-key": "t"})
        wait_for(lambda: inc.rows >= 1000 and not inc.running, 60, "a read by its surrogate key")
        by_text = [p["after"]["t"] for p in snapshot_ops(sink.records, "test.public.a")[before:]]
        assert by_text == sorted(f"row {i}" for i in range(1, 401))  # chunked in the surrogate key's order
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.b"]}, "last")
        signal(pg, dbname, "stop-snapshot", {"data-collections": ["public.b"], "type": "incremental"}, "stop")
        wait_for(lambda: any(rec["value"]["payload"]["after"]["id"] == "stop" for rec in sink.records
                             if rec["topic"] == "test.public.dbz_signal"), 30, "the stop signal")
        assert not inc.running and inc.window is None


def test_blocking_snapshot_under_concurrent_writes_folds_to_the_database(pg: PostgresCluster, dbname: str) -> None:
    """type: blocking: streaming waits while the tables are read in a new snapshot; the changes committed
    meanwhile are streamed after the rows."""
    rows = 1500
    pg.execute(SETUP % {"rows": rows}, dbname)
    sink = MemorySink()
    stop = threading.Event()
    with Running(make_config(pg, dbname, **props()), sink=sink):
        w = threading.Thread(target=writer, args=(pg, dbname, stop, 7, rows), daemon=True)
        w.start()
        time.sleep(0.3)
        signal(pg, dbname, "execute-snapshot", {"data-collections": ["public.a", "public.b"], "type": "blocking"})
        wait_for(lambda: len(snapshot_ops(sink.records, "test.public.b")) > 0, 60, "the blocking snapshot")
        time.sleep(0.5)
        stop.set()
        w.join(30)
        signal(pg, dbname, "log", {"message": "end"}, "end-marker")
        wait_for(lambda: any(rec["key"]["payload"] == {"id": "end-marker"} for rec in sink.records
                             if rec["topic"] == "test.public.dbz_signal"), 60, "the marker")
    marks = [p["source"]["snapshot"] for t in ("a", "b") for p in snapshot_ops(sink.records, f"test.public.{t}")]
    assert marks[0] == "first" and marks[-1] == "last" and "incremental" not in marks
    for table, key in (("a", ("id",)), ("b", ("k1", "k2"))):
        folded, expected = fold(sink.records, f"test.public.{table}"), db_state(pg, dbname, table, key)
        assert folded == expected, (table, len(folded), len(expected))


def test_kafka_and_file_signal_channels(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                        tmp_path: Path) -> None:
    """signal.enabled.channels=source,kafka,file: a record keyed by topic.prefix on signal.kafka.topic, a line
    in signal.file; a Kafka signal handled before a restart is not handled again after it."""
    from confluent_kafka import Producer

    pg.execute(SETUP % {"rows": 300}, dbname)
    topic = f"signals_{dbname}"
    signal_file = tmp_path / "signals.txt"
    config = make_config(pg, dbname, broker.bootstrap_servers, **props(**{
        "signal.enabled.channels": "source,kafka,file", "signal.kafka.topic": topic,
        "signal.kafka.groupId": f"g_{dbname}", "signal.file": str(signal_file), "signal.poll.interval.ms": "100"}))
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

    def send(key: str, value: dict[str, Any]) -> None:
        producer.produce(topic, key=key.encode(), value=json.dumps(value).encode(), partition=0)
        producer.flush(10)

    send("test", {"type": "log", "data": {"message": "created the topic"}})
    offsets = MemoryOffsetStore()
    first = MemorySink()
    with Running(config, sink=first, offsets=offsets) as r:
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        send("other-connector", {"type": "execute-snapshot", "data": {"data-collections": ["public.b"]}})
        send("test", {"type": "execute-snapshot", "data": {"data-collections": ["public.a"], "type": "INCREMENTAL"}})
        wait_for(lambda: len(snapshot_ops(first.records, "test.public.a")) >= 300 and not inc.running, 60,
                 "the snapshot asked for on Kafka")
        signal_file.write_text(json.dumps({"id": "f1", "type": "execute-snapshot",
                                           "data": {"data-collections": ["public.b"]}}) + "\n")
        wait_for(lambda: len(snapshot_ops(first.records, "test.public.b")) >= 300 and not inc.running, 60,
                 "the snapshot asked for in the file")
        assert signal_file.read_text() == ""
    assert len(snapshot_ops(first.records, "test.public.a")) == 300  # the other connector's signal was skipped
    second = MemorySink()
    with Running(config, sink=second, offsets=offsets) as r:
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        send("test", {"type": "execute-snapshot", "data": {"data-collections": ["public.b"]}})
        wait_for(lambda: len(snapshot_ops(second.records, "test.public.b")) >= 300 and not inc.running, 60,
                 "the snapshot asked for after the restart")
    assert snapshot_ops(second.records, "test.public.a") == []  # the first Kafka signal was not handled again


def test_temporal_keys_are_read_chunk_after_chunk(pg: PostgresCluster, dbname: str) -> None:
    """Tables keyed by timestamp, timestamptz and time (and one with such a column in a composite key), read in
    chunks of 2: each chunk starts after the last key of the one before, compared as the key's own type.
    Debezium 3.6 binds that last key as a varchar and fails its second chunk here (SQL_EXCEPTION, measured:
    tests/conformance/test_notifications_vs_debezium.py)."""
    pg.execute(
        "CREATE TABLE k_ts (id timestamp PRIMARY KEY); INSERT INTO k_ts VALUES ('2020-01-01 10:00:00'),"
        " ('2020-01-01 10:00:00.5'), ('1999-12-31 23:59:59.123456'), ('0001-01-01 00:00'), ('294276-12-31 23:59');"
        "CREATE TABLE k_tz (id timestamptz PRIMARY KEY); INSERT INTO k_tz VALUES ('2020-01-01 10:00:00+00'),"
        " ('2020-06-01 10:00:00.25+02'), ('2020-06-01 08:00:00.26+00');"
        "CREATE TABLE k_time (id time PRIMARY KEY);"
        "INSERT INTO k_time VALUES ('00:00'), ('10:00'), ('23:59:59.999999'), ('24:00');"
        "CREATE TABLE k_mix (a int, b timestamp, PRIMARY KEY (a, b)); INSERT INTO k_mix VALUES (1, '2020-01-01'),"
        " (1, '2020-01-01 00:00:00.000001'), (2, '1970-01-01');" + SIGNAL, dbname)
    tables = ["k_ts", "k_tz", "k_time", "k_mix"]
    sink = MemorySink()
    config = make_config(pg, dbname, **{"snapshot.mode": "no_data", "signal.data.collection": "public.dbz_signal",
                                        "incremental.snapshot.chunk.size": "2"})
    with Running(config, sink=sink) as r:
        signal(pg, dbname, "execute-snapshot", {"data-collections": [f"public.{t}" for t in tables]})
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        wait_for(lambda: any(rec["topic"].endswith(".k_mix") for rec in sink.records) and not inc.running, 60,
                 "the incremental snapshot")
    read = {t: [rec for rec in sink.records if rec["topic"].endswith(f".{t}") and rec["value"]
                and rec["value"]["payload"]["op"] == "r"] for t in tables}
    assert {t: len(rs) for t, rs in read.items()} == {"k_ts": 5, "k_tz": 3, "k_time": 4, "k_mix": 3}
    for t in tables:
        keys = [json.dumps(rec["key"]["payload"], sort_keys=True) for rec in read[t]]
        assert len(set(keys)) == len(keys), f"{t}: a row read twice"


def test_key_value_types_see_through_domains(pg: PostgresCluster, dbname: str) -> None:
    """The types whose Java text IN_PROGRESS writes for a key (snapshot_plan.py `value_types`): a domain's base
    type, through a domain over a domain, with its modifier; other types as they are. Debezium writes the base
    type's text (measured: tests/conformance/test_notifications_vs_debezium.py `typed_keys`)."""
    pg.execute('CREATE SCHEMA "Odd s"; CREATE DOMAIN "Odd s"."D n" AS numeric(10,2);'
               'CREATE DOMAIN dd AS "Odd s"."D n" CHECK (VALUE > 0); CREATE DOMAIN db AS boolean;'
               "CREATE DOMAIN dv AS varchar(5); CREATE TABLE kd (a dd, b db, c dv, d real, e numeric(4,1), "
               "PRIMARY KEY (a, b, c, d, e)); CREATE TABLE plain (id float8 PRIMARY KEY)", dbname)
    with psycopg.connect(pg.dsn(dbname)) as conn:
        plan = TablePlan("public", "kd", lambda: None)  # type: ignore[arg-type,return-value]
        describe(conn, plan)
        assert plan.pk_types == ("dd", "db", "dv", "real", "numeric(4,1)")
        assert plan.pk_value_types == ("numeric(10,2)", "boolean", "character varying(5)", "real", "numeric(4,1)")
        plain = TablePlan("public", "plain", lambda: None)  # type: ignore[arg-type,return-value]
        describe(conn, plain)
        assert plain.pk_value_types == plain.pk_types == ("double precision",)
        assert value_types(conn, ('"Odd s"."D n"', "integer")) == ("numeric(10,2)", "integer")
