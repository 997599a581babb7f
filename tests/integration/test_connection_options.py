"""Debezium's JDBC connection options and snapshot delay on a real PostgreSQL: `database.initial.statements` run on
every connection but the replication one (a failing statement stops the start in one line, before a slot or a
publication exists), and `snapshot.delay.ms` waits before the initial snapshot, a stop during the wait ending the
run with nothing written."""

from __future__ import annotations

import time

import pytest

from pgcdc.errors import SourceError
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, in_thread, make_config, wait_for


def _count(pg: PostgresCluster, dbname: str, sql: str) -> int:
    return int(pg.execute(sql, dbname)[0][0])


def test_initial_statements_run_on_each_regular_connection(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE opened (pid int, replication bool, note text); CREATE TABLE t (id int PRIMARY KEY);"
               "INSERT INTO t VALUES (1); GRANT ALL ON opened TO PUBLIC", dbname)
    statements = ("SET application_name = 'initial;;statements';"
                  "INSERT INTO opened SELECT pg_backend_pid(), false, current_setting('application_name')")
    sink = MemorySink()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial",
                                        "database.initial.statements": statements})
    with Running(config, sink=sink):
        wait_for(lambda: len(sink.records) >= 1, 30, "the snapshot record")
        walsender = pg.execute("SELECT pid FROM pg_stat_replication WHERE application_name LIKE 'pgcdc-%'",
                               dbname)
    rows = pg.execute("SELECT pid, note FROM opened", dbname)
    assert rows and {note for _, note in rows} == {"initial;statements"}  # `;;` is a semicolon of the statement
    assert walsender and walsender[0][0] not in {pid for pid, _ in rows}  # not on the replication connection


def test_a_failing_initial_statement_stops_before_anything_is_made(pg: PostgresCluster, dbname: str) -> None:
    config = make_config(pg, dbname, **{"database.initial.statements": "SET lock_timeout = '1s'; SELECT * FROM nope"})
    with pytest.raises(SourceError) as exc:
        Connector(config, sink=MemorySink()).run()
    assert str(exc.value).startswith("database.initial.statements: 'SELECT * FROM nope' failed: relation \"nope\" "
                                     "does not exist")
    assert _count(pg, dbname, f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == 0
    assert _count(pg, dbname, f"SELECT count(*) FROM pg_publication WHERE pubname = 'pub_{dbname}'") == 0


def test_snapshot_delay_waits_and_a_stop_ends_the_wait(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)", dbname)
    sink = MemorySink()
    connector = Connector(make_config(pg, dbname, **{"snapshot.mode": "initial",
                                                     "snapshot.delay.ms": str((1 << 63) - 1)}), sink=sink)
    thread, errors = in_thread(connector)
    # The slot is made before the wait (as Debezium's task makes it before its snapshot source runs).
    wait_for(lambda: _count(pg, dbname, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = "
                                        f"'slot_{dbname}'") == 1, 30, "the slot")
    time.sleep(1)
    assert sink.records == [] and not connector.ready.is_set()
    connector.stop()
    thread.join(30)
    assert not thread.is_alive() and errors == [] and sink.records == []
    # The next start snapshots the rows (no offset was stored) after its own, short, delay.
    again = MemorySink()
    with Running(make_config(pg, dbname, **{"snapshot.mode": "initial", "snapshot.delay.ms": "200"}), sink=again):
        wait_for(lambda: len(again.records) >= 2, 30, "the snapshot records")
    assert sorted(r["value"]["payload"]["after"]["id"] for r in again.records) == [1, 2]
