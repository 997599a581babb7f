"""Helpers for tests that run pgcdc against the real servers: a connector in a thread, Kafka readers."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
from confluent_kafka import Consumer, KafkaError, TopicPartition

from pgcdc.config import ConnectorConfig, build_config
import psycopg

from pgcdc.local import PostgresCluster
from pgcdc.lsn import parse_lsn
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink


def make_config(pg: PostgresCluster, dbname: str, bootstrap: str | None = None, **props: str) -> ConnectorConfig:
    base = {
        "name": "test", "topic.prefix": "test", **pg.connection_properties(dbname),
        "snapshot.mode": "no_data", "slot.name": f"slot_{dbname}", "publication.name": f"pub_{dbname}",
        "offset.storage": "memory", "offset.flush.interval.ms": "200", "status.update.interval.ms": "1000",
    }
    if bootstrap:
        base.update({"bootstrap.servers": bootstrap, "offset.storage.partitions": "1"})
    else:
        base["sink.type"] = "file"
    base.update(props)
    return build_config(base)


class Running:
    """`with Running(config, sink=MemorySink()) as r:` runs a Connector in a thread until the block ends."""

    def __init__(self, config: ConnectorConfig, **kwargs: Any) -> None:
        self.connector = Connector(config, **kwargs)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.connector.run()
        except BaseException as exc:
            self.error = exc
            self.connector.ready.set()

    def __enter__(self) -> Running:
        self.thread.start()
        if not self.connector.ready.wait(60) or self.error:
            raise RuntimeError(f"connector did not start: {self.error!r}")
        return self

    def stop(self) -> None:
        self.connector.stop()
        self.thread.join(60)
        if self.error:
            raise self.error

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            self.stop()
            return
        # The block failed: its own error is the one to see. The connector's, which its stop may raise (often
        # with its context suppressed, which would hide the block's), goes into a note on it.
        try:
            self.stop()
        except BaseException as stop_error:
            exc.add_note(f"the connector, stopped after the block failed, raised: {stop_error!r}")


def in_thread(connector: Connector) -> tuple[threading.Thread, list[BaseException]]:
    """`connector.run()` in a daemon thread, started, and the list that gets what it raises. Unlike `Running`,
    it does not wait for streaming to start: for runs that wait before it (snapshot.delay.ms, streaming.delay.ms)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            connector.run()
        except BaseException as exc:  # the test reads it
            errors.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def wait_for(predicate: Callable[[], bool], timeout: float = 30, what: str = "condition",
              show: Callable[[], Any] = lambda: None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; have: {show()!r}")


def wal_end(pg: PostgresCluster) -> int:
    """The end of the WAL inserted so far: every transaction committed before this call ends at or before it.

    pg_current_wal_insert_lsn(), not pg_current_wal_lsn(): the test clusters commit with synchronous_commit=off,
    so the write position pg_current_wal_lsn() returns can still be behind the last commit record."""
    return parse_lsn(str(pg.execute("SELECT pg_current_wal_insert_lsn()")[0][0]))


def commit_after(pg: PostgresCluster, dbname: str, sql: str) -> int:
    """Runs `sql` in one transaction; returns the WAL insert position before its commit record. The commit, the
    position a connector stores and confirms for it, ends after it; every earlier commit ends at or before it."""
    with psycopg.connect(pg.dsn(dbname)) as conn:  # one transaction, committed as the block ends
        conn.execute(sql)
        row = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
    assert row is not None
    return parse_lsn(str(row[0]))


def wait_records(sink: MemorySink, count: int, timeout: float = 30) -> list[dict[str, Any]]:
    wait_for(lambda: len(sink.records) >= count, timeout, f"{count} records",
             lambda: [(r["topic"], (r["value"] or {}).get("payload", {}).get("op")) for r in sink.records])
    return sink.records


def read_topic(bootstrap: str, topic: str, timeout: float = 20) -> list[dict[str, Any]]:
    """Every record of a topic, read to the end of each partition, in the file sink's shape."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pgcdc-test-reader",
                         "enable.auto.commit": "false", "enable.partition.eof": "true"})
    out: list[dict[str, Any]] = []
    try:
        md = consumer.list_topics(topic, timeout=timeout)
        if topic not in md.topics or md.topics[topic].error:
            return []
        parts = sorted(md.topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        remaining = set(parts)
        deadline = time.monotonic() + timeout
        while remaining and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            deadline = time.monotonic() + timeout  # the limit is on silence: a long topic may take longer
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    remaining.discard(msg.partition())
                    continue
                raise AssertionError(f"reading {topic}: {msg.error()}")
            out.append({
                "topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
                "key": orjson.loads(msg.key()) if msg.key() else None,
                "value": orjson.loads(msg.value()) if msg.value() else None,
                "headers": [[k, orjson.loads(v)] for k, v in msg.headers() or []],
            })
        if remaining:
            raise AssertionError(f"reading {topic}: no end of partitions {sorted(remaining)} after {timeout}s "
                                 f"without a record ({len(out)} read)")
    finally:
        consumer.close()
    return out


def payload(record: dict[str, Any]) -> Any:
    v = record["value"]
    return v["payload"] if isinstance(v, dict) and "payload" in v else v


def random_writes(pg: PostgresCluster, db: str, stop: threading.Event, seed: int, *, tables: tuple[str, ...],
                  first_id: int, targets: int | None = None, statements: int = 10, column: str = "v",
                  inserts: float = 0.4, pause: float = 0.0) -> None:
    """Small random transactions until `stop`: inserts of fresh ids, updates of `column`, deletes and primary-key
    changes (in that order of `inserts`, up to 0.75, up to 0.95, the rest) on rows 1..`targets` (default: every id
    so far). Each table is `(id int PRIMARY KEY, <column> int)`."""
    rnd = random.Random(seed)
    next_id = first_id
    with psycopg.connect(pg.dsn(db)) as conn:
        while not stop.is_set():
            with conn.transaction():
                for _ in range(rnd.randint(1, statements)):
                    table, action, target = rnd.choice(tables), rnd.random(), rnd.randint(1, targets or next_id)
                    if action < inserts:
                        conn.execute(f"INSERT INTO {table} VALUES (%s, 0)", (next_id,))
                        next_id += 1
                    elif action < 0.75:
                        conn.execute(f"UPDATE {table} SET {column} = {column} + 1 WHERE id = %s", (target,))
                    elif action < 0.95:
                        conn.execute(f"DELETE FROM {table} WHERE id = %s", (target,))
                    else:
                        conn.execute(f"UPDATE {table} SET id = %s WHERE id = %s", (next_id, target))
                        next_id += 1
            time.sleep(pause)
