"""streaming.delay.ms: after a completed snapshot, streaming waits (ChangeEventSourceCoordinator
.delayStreamingIfNeeded); a stop during the wait ends the run cleanly, whatever the delay (up to Long.MAX_VALUE
ms, which Debezium takes). That streaming happens after a delay is compared with Debezium in
tests/conformance/test_props_vs_debezium.py."""

from __future__ import annotations

import time

from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import in_thread, make_config


def test_stop_during_the_longest_delay(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)", dbname)
    sink = MemorySink()
    connector = Connector(make_config(pg, dbname, **{"snapshot.mode": "initial",
                                                     "streaming.delay.ms": str((1 << 63) - 1)}), sink=sink)
    thread, errors = in_thread(connector)
    deadline = time.monotonic() + 60
    while not sink.records and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r["value"]["payload"]["op"] for r in sink.records] == ["r"]
    assert not connector.ready.is_set()  # the snapshot is done, streaming has not started
    connector.stop()
    thread.join(30)
    assert not thread.is_alive() and errors == [] and not connector.ready.is_set()
