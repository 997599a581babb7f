"""Streaming checkpoints against a real broker: taken in the pauses between transactions, without waiting."""

from __future__ import annotations

import time

import psycopg

from pgcdc.local import KafkaBroker, PostgresCluster
from tests.harness import Running, make_config, payload, read_topic, wait_for


def test_checkpoints_are_taken_between_transactions_without_waiting(pg: PostgresCluster, dbname: str,
                                                                    broker: KafkaBroker) -> None:
    pg.execute("CREATE TABLE c (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "offset.flush.interval.ms": "100"})
    topic = f"{dbname}.public.c"
    ids: list[int] = []

    def delivered() -> bool:
        nonlocal ids
        ids = [payload(r)["after"]["id"] for r in read_topic(broker.bootstrap_servers, topic)
               if r["value"] is not None]
        return len(set(ids)) >= n

    n = 0
    with Running(config) as running:
        checkpointer = running.connector.checkpointer
        assert checkpointer is not None
        # Transactions 50 ms apart: never the 200 ms without data that makes a read idle, so only the pauses
        # between transactions give the loop an empty queue. Until three checkpoints were taken in them.
        with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
            while checkpointer.without_wait < 3 and n < 400:
                n += 1
                conn.execute("INSERT INTO c VALUES (%s)", (n,))
                time.sleep(0.05)
        without_wait, after_wait = checkpointer.without_wait, checkpointer.after_wait
        wait_for(delivered, 60, f"{n} rows in {topic}")
        stored = checkpointer.stored
    assert without_wait >= 3, f"{n} transactions: {without_wait} checkpoints without waiting, {after_wait} after"
    assert sorted(ids) == list(range(1, n + 1))
    assert stored is not None and stored.end_lsn > 0
