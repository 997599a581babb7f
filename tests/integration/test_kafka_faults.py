"""Kafka faults: a record too large fails loudly and stores nothing past it; a broker outage is waited out; a
data topic or the offsets topic deleted under a running connector loses nothing and confirms nothing unstored.

The broker is Apache Kafka with its defaults for a deletion: a produce request for a deleted topic is answered
UNKNOWN_TOPIC_OR_PARTITION, the records in flight fail, and the client's metadata request re-creates the topic
(auto.create.topics.enable). pgcdc runs with the client's default settings here (docs/operations.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from confluent_kafka.admin import AdminClient

from pgcdc.errors import RecordTooLarge
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.lsn import parse_lsn
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.runner import Connector
from tests.harness import Running, make_config, payload, read_topic, wait_for


def ids(broker: KafkaBroker, topic: str) -> set[int]:
    return {payload(r)["after"]["id"] for r in read_topic(broker.bootstrap_servers, topic)
            if r["value"] is not None and payload(r)["op"] == "c"}


def test_record_too_large_is_fatal_and_nothing_past_it_is_stored(pg: PostgresCluster, dbname: str,
                                                                 broker: KafkaBroker) -> None:
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
                                                      broker: KafkaBroker) -> None:
    config = make_config(pg, dbname, broker.bootstrap_servers, **{"producer.override.no.such.setting": "1"})
    with pytest.raises(Exception, match="kafka: bad producer configuration: .*no.such.setting"):
        Connector(config).run()
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []


def test_broker_outage_is_waited_out(pg: PostgresCluster, dbname: str) -> None:
    # A broker of its own, stopped and started again on the same port and log dirs: the changes made during the
    # outage arrive once it is back, after the one it held. tests/slow/test_broker_outage.py kills a broker under
    # a continuous writer and checks every committed change.
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    with KafkaBroker() as broker:
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
            wait_for(lambda: {1, 2, 3} <= ids(broker, f"{dbname}.public.t"), 90, "rows written during the outage",
                     lambda: running.connector.health.__dict__)
            assert running.connector.health.state == "streaming"



def confirmed_lsn(pg: PostgresCluster, slot: str) -> int:
    rows = pg.execute(f"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '{slot}'")
    assert rows and rows[0][0] is not None, f"slot {slot} is gone"
    return parse_lsn(str(rows[0][0]))


def delete_topic(broker: KafkaBroker, topic: str, running: bool = True) -> None:
    """Delete `topic` (the broker confirms it, or this raises). While pgcdc runs, it may write to the topic, and
    so create it again, before a listing would show it gone: only a stopped pgcdc leaves it absent."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.delete_topics([topic])[topic].result(30)
    if not running:
        wait_for(lambda: topic not in admin.list_topics(timeout=10).topics, 30, f"{topic} gone from the metadata")


def insert_slowly(pg: PostgresCluster, dbname: str, rows: range, check: Callable[[], object]) -> None:
    """One row per transaction, 50 ms apart, calling `check()` after each."""
    for i in rows:
        pg.execute(f"INSERT INTO t VALUES ({i})", dbname)
        check()
        time.sleep(0.05)


def restart_reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "pgcdc.runner" and "restarting in" in r.getMessage()]


def test_data_topic_deleted_while_running_keeps_delivering(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    topic, slot = f"{dbname}.public.t", f"slot_{dbname}"
    offsets = MemoryOffsetStore()
    props = {"topic.prefix": dbname, "retriable.restart.connector.wait.ms": "500"}
    caplog.set_level(logging.WARNING, logger="pgcdc.runner")

    def confirmed_only_what_was_stored() -> None:
        confirmed = confirmed_lsn(pg, slot)  # read first: the stored offset only moves forward
        assert confirmed <= (offsets.offset or {}).get("lsn", 0)

    with Running(make_config(pg, dbname, broker.bootstrap_servers, **props), offsets=offsets) as running:
        pg.execute("INSERT INTO t SELECT generate_series(1, 10)", dbname)
        wait_for(lambda: set(range(1, 11)) <= ids(broker, topic), 30, "rows 1-10")
        delete_topic(broker, topic)
        insert_slowly(pg, dbname, range(11, 61), confirmed_only_what_was_stored)

        def delivered() -> bool:
            confirmed_only_what_was_stored()
            return set(range(11, 61)) <= ids(broker, topic)

        wait_for(delivered, 120, "rows 11-60 in the re-created topic",
                 lambda: (sorted(set(range(11, 61)) - ids(broker, topic)), running.connector.health.__dict__))
        assert running.connector.health.state == "streaming"
    # Each restart on the way (records in flight refused once the client saw the topic gone) names the topic.
    assert all(topic in reason for reason in restart_reasons(caplog)), restart_reasons(caplog)


def stored_lsns(broker: KafkaBroker, topic: str) -> list[int]:
    return [r["value"]["lsn"] for r in read_topic(broker.bootstrap_servers, topic) if r["value"] is not None]


def test_offsets_topic_deleted_while_running_loses_nothing(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    topic, slot, offsets_topic = f"{dbname}.public.t", f"slot_{dbname}", f"offsets_{dbname}"
    props = {"topic.prefix": dbname, "retriable.restart.connector.wait.ms": "500", "offset.storage": "kafka",
             "offset.storage.topic": offsets_topic}
    config = make_config(pg, dbname, broker.bootstrap_servers, **props)
    caplog.set_level(logging.WARNING, logger="pgcdc.runner")
    confirmed: list[int] = []
    with Running(config) as running:
        pg.execute("INSERT INTO t SELECT generate_series(1, 10)", dbname)
        wait_for(lambda: set(range(1, 11)) <= ids(broker, topic), 30, "rows 1-10")
        wait_for(lambda: bool(stored_lsns(broker, offsets_topic)), 30, "an offset in the offsets topic")
        delete_topic(broker, offsets_topic)
        insert_slowly(pg, dbname, range(11, 61), lambda: confirmed.append(confirmed_lsn(pg, slot)))
        wait_for(lambda: set(range(11, 61)) <= ids(broker, topic), 120, "rows 11-60",
                 lambda: running.connector.health.__dict__)
        # The offsets go on into the re-created topic; the last one covers row 60.
        last_row_lsn = max(payload(r)["source"]["lsn"] for r in read_topic(broker.bootstrap_servers, topic)
                           if r["value"] is not None)
        wait_for(lambda: max(stored_lsns(broker, offsets_topic) or [0]) > last_row_lsn, 60,
                 "an offset past row 60 in the re-created offsets topic")
        assert running.connector.health.state == "streaming"
    assert all(offsets_topic in reason for reason in restart_reasons(caplog)), restart_reasons(caplog)
    # Never confirmed past a stored offset: every position the slot held is one the offsets topic holds or
    # held before the deletion (positions only grow, so compare with the largest stored).
    assert max(confirmed) <= max(stored_lsns(broker, offsets_topic))

    # Deleted while stopped: the next start finds no offset, says so, and streams from the slot's confirmed
    # position, which never passed a stored offset: the rows written meanwhile all arrive.
    delete_topic(broker, offsets_topic, running=False)
    pg.execute("INSERT INTO t SELECT generate_series(61, 80)", dbname)
    caplog.clear()
    with Running(config):
        wait_for(lambda: set(range(61, 81)) <= ids(broker, topic), 60, "rows 61-80 after the offsets were lost")
    warnings = [r.getMessage() for r in caplog.records if "no stored offset" in r.getMessage()]
    assert len(warnings) == 1 and f"offset.storage.topic {offsets_topic!r}" in warnings[0] and slot in warnings[0], \
        warnings
