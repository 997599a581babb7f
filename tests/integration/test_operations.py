"""Running for months: /health and /metrics, standby takeover, restarts after lost connections, a slot
dropped underneath, heartbeat.action.query, flush.lsn.source, WAL warnings, failover slots."""

from __future__ import annotations

import logging
import signal
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest

from pgcdc.errors import SlotLost, SourceError
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.lsn import parse_lsn
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records
from tests.integration.test_durability import (
    kafka_config,
    start_cli,
    wait_for_ids,
    wait_slot_active,
    writer,
)


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def metric(text: bytes, name: str) -> float:
    for line in text.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in metrics:\n{text.decode()}")


def test_health_and_metrics(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 20)", dbname)
    config = make_config(pg, dbname, **{"metrics.port": "0", "metrics.host": "127.0.0.1",
                                        "snapshot.mode": "initial", "pgcdc.slot.watch.interval.ms": "200"})
    sink = MemorySink()
    with Running(config, sink=sink) as running:
        port = running.connector.metrics_server.port
        pg.execute("INSERT INTO t SELECT generate_series(21, 30)", dbname)
        wait_records(sink, 30)
        status, body = get(port, "/health")
        assert status == 200, body
        health = orjson.loads(body)
        assert (health["status"], health["state"], health["slot"]) == ("UP", "streaming", f"slot_{dbname}")
        wait_for(lambda: orjson.loads(get(port, "/health")[1])["committed_lsn"] is not None, 10, "a checkpoint")
        wait_for(lambda: b"pgcdc_slot_lag_bytes" in get(port, "/metrics")[1], 10, "the slot watch")
        text = get(port, "/metrics")[1]
        assert metric(text, "pgcdc_events_total") >= 30
        assert metric(text, 'pgcdc_state{state="streaming"}') == 1.0
        assert metric(text, "pgcdc_up") == 1.0
        assert metric(text, "pgcdc_snapshot_rows_total") == 20
        assert metric(text, 'pgcdc_snapshot_table_rows{table="public.t"}') == 20
        committed = metric(text, "pgcdc_committed_lsn")
        assert 0 < committed <= metric(text, "pgcdc_processed_lsn")
        # A memory sink has nothing in flight: every streaming checkpoint is taken without waiting.
        assert metric(text, 'pgcdc_checkpoints_total{wait="no"}') >= 1
        assert metric(text, 'pgcdc_checkpoints_total{wait="yes"}') == 0
        assert metric(text, "pgcdc_slot_retained_bytes") >= 0
        assert get(port, "/nope")[0] == 404
    assert running.connector.health.state == "stopped"


def test_bad_metrics_port_is_one_clear_error(pg: PostgresCluster, dbname: str) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = make_config(pg, dbname, **{"metrics.port": str(port), "metrics.host": "127.0.0.1"})
        with pytest.raises(Exception, match=f"metrics.port: cannot listen on 127.0.0.1:{port}"):
            Connector(config, sink=MemorySink()).run()


def test_standby_takes_over_when_the_active_one_is_killed(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                          tmp_path: Path) -> None:
    pg.execute("CREATE TABLE w (id int PRIMARY KEY)", dbname)
    # Both processes share one offset store. (A file here: the test broker stalls a reader of a topic that another
    # process keeps writing to, which a standby's start-up does; Apache Kafka does not.)
    cfg = {**kafka_config(pg, dbname, broker), "slot.max.retries": "-1", "slot.retry.delay.ms": "200",
           "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat")}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    active = start_cli(tmp_path / "a", cfg)
    wait_slot_active(pg, cfg["slot.name"])
    standby = start_cli(tmp_path / "b", {**cfg, "metrics.port": "0"})
    stop, committed = threading.Event(), []
    w = threading.Thread(target=writer, args=(pg, dbname, stop, committed))
    w.start()
    try:
        _standby_takeover(pg, dbname, broker, tmp_path, cfg, active, standby, stop, w, committed)
    finally:
        stop.set()
        for proc in (active, standby):
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def _standby_takeover(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path, cfg: dict[str, str],
                      active: Any, standby: Any, stop: threading.Event, w: threading.Thread,
                      committed: list[int]) -> None:
    try:
        wait_for(lambda: b"standing by" in (tmp_path / "b" / "pgcdc.log").read_bytes(), 30, "the standby to wait",
                 lambda: (tmp_path / "b" / "pgcdc.log").read_text()[-1500:])
        wait_for(lambda: len(committed) > 200, 30, "some writes")
        active.send_signal(signal.SIGKILL)
        active.wait(10)
        wait_for(lambda: b"streaming from" in (tmp_path / "b" / "pgcdc.log").read_bytes()
                 or pg.execute(f"SELECT active_pid FROM pg_replication_slots WHERE slot_name = '{cfg['slot.name']}' "
                               f"AND active") != [], 30, "the standby to take the slot")
        wait_for(lambda: len(committed) > 600, 30, "more writes after the takeover")
    finally:
        stop.set()
        w.join()
    try:
        got = wait_for_ids(broker, f"{dbname}.public.w", set(committed), timeout=90)
    finally:
        standby.send_signal(signal.SIGTERM)
        assert standby.wait(30) == 0, (tmp_path / "b" / "pgcdc.log").read_text()[-2000:]
    assert set(got) == set(committed)  # nothing lost across the takeover
    print(f"takeover: {len(committed)} rows, {len(got) - len(set(got))} duplicates")


def test_restarts_after_postgresql_restarts(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, **{"retriable.restart.connector.wait.ms": "300"})
    sink = MemorySink()
    with Running(config, sink=sink) as running:
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        wait_records(sink, 1)
        pg.restart("fast")
        # Back to streaming before the second restart, so that each restart costs the connector one of its own.
        wait_for(lambda: running.connector.health.restarts >= 1 and running.connector.health.state == "streaming",
                 60, "the connector streaming again", lambda: running.connector.health.__dict__)
        pg.execute("INSERT INTO t VALUES (2)", dbname)
        pg.execute("CHECKPOINT")  # the test cluster runs fsync=off: make row 2 survive the crash below
        pg.restart("immediate")
        pg.execute("INSERT INTO t VALUES (3)", dbname)
        wait_for(lambda: {payload(r)["after"]["id"] for r in sink.records if r["value"]} >= {1, 2, 3}, 60,
                 "rows written across two server restarts",
                 lambda: (running.connector.health.__dict__, [(r["topic"], payload(r)) for r in sink.records]))
        assert running.connector.health.restarts >= 2
        assert running.connector.health.state == "streaming"


def test_slot_dropped_underneath_is_fatal_not_recreated(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, **{"retriable.restart.connector.wait.ms": "1000"})
    running = Running(config, sink=MemorySink()).__enter__()
    slot = f"slot_{dbname}"
    pg.execute(f"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '{slot}'")
    wait_for(lambda: pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = '{slot}'") == [(False,)],
             10, "the walsender to exit")
    pg.execute(f"SELECT pg_drop_replication_slot('{slot}')")
    running.thread.join(30)
    assert isinstance(running.error, SlotLost), running.error
    assert "was dropped while pgcdc used it" in str(running.error)
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = '{slot}'") == []  # not re-created
    assert running.connector.health.state == "failed"


@pytest.mark.parametrize("manual", [{"flush.lsn.source": "false"}, {"lsn.flush.mode": "manual"}])
def test_heartbeat_action_query_and_manual_lsn_flush(pg: PostgresCluster, dbname: str,
                                                     manual: dict[str, str]) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE hb (at timestamptz)", dbname)
    config = make_config(pg, dbname, **{"heartbeat.interval.ms": "200",
                                        "heartbeat.action.query": "INSERT INTO hb VALUES (now())", **manual})
    slot = f"slot_{dbname}"
    sink = MemorySink()
    with Running(config, sink=sink) as running:
        created = parse_lsn(pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                       f"WHERE slot_name = '{slot}'")[0][0])
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        wait_for(lambda: pg.execute("SELECT count(*) FROM hb", dbname)[0][0] >= 3, 20, "heartbeat action rows")
        wait_for(lambda: running.connector.checkpointer.stored is not None
                 and running.connector.checkpointer.stored.end_lsn > created, 20, "an offset past the start")
        confirmed = parse_lsn(pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                         f"WHERE slot_name = '{slot}'")[0][0])
    assert confirmed == created  # flush.lsn.source=false: pgcdc stored offsets but never moved the slot
    assert any(r["topic"] == "__debezium-heartbeat.test" for r in sink.records)


def test_wal_warning_names_the_bytes(pg: PostgresCluster, dbname: str, caplog: Any) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, **{"pgcdc.wal.warn.bytes": "1", "pgcdc.slot.watch.interval.ms": "100"})
    with caplog.at_level(logging.WARNING, logger="pgcdc.metrics"), Running(config, sink=MemorySink()):
        pg.execute("INSERT INTO t SELECT generate_series(1, 100)", dbname)
        wait_for(lambda: any("retains" in r.getMessage() for r in caplog.records), 20, "the WAL warning")
    msg = next(r.getMessage() for r in caplog.records if "retains" in r.getMessage())
    assert f"slot slot_{dbname} retains" in msg and "pgcdc.wal.warn.bytes=1" in msg


def test_failover_slot_needs_postgresql_17(pg: PostgresCluster, dbname: str) -> None:
    config = make_config(pg, dbname, **{"slot.failover": "true"})
    if pg.major >= 17:
        with Running(config, sink=MemorySink()):
            row = pg.execute(f"SELECT failover FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'")
            assert row == [(True,)]
    else:
        with pytest.raises(SourceError, match="slot.failover: needs PostgreSQL 17 or newer"):
            Connector(config, sink=MemorySink()).run()
        assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []


# pgcdc's own policy, and Debezium's offset.mismatch.strategy mapped onto it: trust_offset stops (the slot moved
# past what was delivered), trust_slot and trust_greater_lsn stream on from the slot with a warning.
@pytest.mark.parametrize("props, fails", [
    ({"pgcdc.offset.behind.slot": "fail"}, True), ({"pgcdc.offset.behind.slot": "warn"}, False),
    ({"offset.mismatch.strategy": "trust_offset"}, True), ({"offset.mismatch.strategy": "trust_slot"}, False),
    ({"offset.mismatch.strategy": "trust_greater_lsn"}, False)])
def test_offset_behind_the_slot(pg: PostgresCluster, dbname: str, tmp_path: Path, props: dict[str, str],
                                fails: bool, caplog: Any) -> None:
    from pgcdc.offsets import offset_key
    from pgcdc.offsets.file import FileOffsetStore

    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    path = str(tmp_path / "offsets.dat")
    config = make_config(pg, dbname, **{"offset.storage": "file", "offset.storage.file.filename": path, **props})
    store = FileOffsetStore(path, offset_key(config.name, config.topic_prefix))
    with Running(config, sink=MemorySink()):
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        wait_for(lambda: store.load() is not None, 20, "an offset")
    good = store.load() or {}
    store.store({**good, "lsn": good["lsn"] - 100, "lsn_proc": good["lsn"] - 100, "lsn_commit": good["lsn"] - 100})
    if fails:
        with pytest.raises(SourceError, match="100 bytes behind slot .*pgcdc.offset.behind.slot=warn"):
            Connector(config, sink=MemorySink()).run()
    else:
        sink = MemorySink()
        with caplog.at_level(logging.WARNING), Running(config, sink=sink):
            pg.execute("INSERT INTO t VALUES (2)", dbname)
            wait_for(lambda: any(r["topic"] == "test.public.t" for r in sink.records), 20, "the next row")
        assert any("100 bytes behind slot" in r.getMessage() for r in caplog.records)
