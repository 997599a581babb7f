"""Kafka faults: a record too large fails loudly and stores nothing past it; a broker outage is waited out."""

from __future__ import annotations

import time

import pytest

from pgcdc.errors import RecordTooLarge
from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.runner import Connector
from tests.harness import Running, make_config, payload, read_topic, wait_for


def ids(broker: TansuBroker, topic: str) -> set[int]:
    return {payload(r)["after"]["id"] for r in read_topic(broker.bootstrap_servers, topic)
            if r["value"] is not None and payload(r)["op"] == "c"}


def test_record_too_large_is_fatal_and_nothing_past_it_is_stored(pg: PostgresCluster, dbname: str,
                                                                 broker: TansuBroker) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, doc text)", dbname)
    offsets = MemoryOffsetStore()
    props = {"producer.override.max.request.size": "4000", "retriable.restart.connector.wait.ms": "100",
             "topic.prefix": dbname}
    running = Running(make_config(pg, dbname, broker.bootstrap_servers, **props), offsets=offsets).__enter__()
    pg.execute("INSERT INTO t VALUES (1, 'small')", dbname)
    wait_for(lambda: offsets.offset is not None, 20, "the first offset")
    stored_before = dict(offsets.offset or {})
    pg.execute("INSERT INTO t VALUES (2, repeat('x', 20000))", dbname)  # too large for max.request.size
    running.thread.join(60)
    assert isinstance(running.error, RecordTooLarge), running.error
    assert f"topic '{dbname}.public.t' exceeds the producer's maximum request size" in str(running.error)
    assert "max.request.size" in str(running.error)
    assert offsets.offset == stored_before  # never acknowledged, never stored
    assert running.connector.health.restarts == 0  # retrying could not help
    # With a larger limit, the same slot and offsets deliver the row that failed: nothing was lost.
    bigger = {**props, "producer.override.max.request.size": "1000000"}
    with Running(make_config(pg, dbname, broker.bootstrap_servers, **bigger), offsets=offsets):
        wait_for(lambda: 2 in ids(broker, f"{dbname}.public.t"), 30, "row 2 after raising the limit")


def test_unknown_producer_property_is_one_clear_error(pg: PostgresCluster, dbname: str,
                                                      broker: TansuBroker) -> None:
    config = make_config(pg, dbname, broker.bootstrap_servers, **{"producer.override.no.such.setting": "1"})
    with pytest.raises(Exception, match="kafka: bad producer configuration: .*no.such.setting"):
        Connector(config).run()
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []


def test_broker_outage_is_waited_out(pg: PostgresCluster, dbname: str) -> None:
    # A broker of its own, stopped and started again on the same port. (The test broker keeps topics in
    # memory, so what it held before the outage is gone; what matters is that changes made during the outage
    # arrive once it is back, from the stored offset.)
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    with TansuBroker() as broker:
        props = {"retriable.restart.connector.wait.ms": "500", "topic.prefix": dbname,
                 "kafka.message.timeout.ms": "5000", "offset.storage": "memory"}
        config = make_config(pg, dbname, broker.bootstrap_servers, **props)
        with Running(config) as running:
            pg.execute("INSERT INTO t VALUES (1)", dbname)
            wait_for(lambda: 1 in ids(broker, f"{dbname}.public.t"), 30, "row 1")
            broker.stop()
            pg.execute("INSERT INTO t VALUES (2)", dbname)
            time.sleep(3)
            pg.execute("INSERT INTO t VALUES (3)", dbname)
            broker.start()
            wait_for(lambda: {2, 3} <= ids(broker, f"{dbname}.public.t"), 90, "rows written during the outage",
                     lambda: running.connector.health.__dict__)
            assert running.connector.health.state == "streaming"
