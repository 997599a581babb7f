"""internal.create.slot.command.timeout: CREATE_REPLICATION_SLOT waits for the transactions open when it starts;
after the timeout pgcdc cancels it, as Debezium does (default 90 s), and stops with one line, leaving no slot."""

from __future__ import annotations

import time

import psycopg
import pytest

from pgcdc.errors import SourceError
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import make_config


def test_slot_creation_blocked_by_an_open_transaction_stops_after_the_timeout(pg: PostgresCluster,
                                                                             dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, **{"internal.create.slot.command.timeout": "2"})
    with psycopg.connect(pg.dsn(dbname)) as blocker:
        blocker.execute("INSERT INTO t VALUES (1)")  # holds a transaction id until rolled back
        started = time.monotonic()
        with pytest.raises(SourceError) as exc:
            Connector(config, sink=MemorySink()).run()
        waited = time.monotonic() - started
        blocker.rollback()
    assert str(exc.value).startswith(f"internal.create.slot.command.timeout: slot 'slot_{dbname}' not created "
                                     "within 2 s"), exc.value
    assert 2 <= waited < 30, waited
    assert pg.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == [(0,)]
