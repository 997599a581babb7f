"""`pgcdc demo`: the embedded default end to end on one machine.

Starts a throwaway PostgreSQL (wal_level=logical, 127.0.0.1) and a Tansu broker, creates sample tables, runs
pgcdc against them, writes a small workload and prints each Debezium record read back from Kafka.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import click
import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.runner import Connector

SCHEMA = """
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, email varchar(100),
                        balance numeric(10,2), created_at timestamptz DEFAULT now());
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers(id),
                     amount numeric(10,2) NOT NULL, placed_on date NOT NULL, tags text[]);
"""

NAMES = ["Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"]


def _workload(pg: PostgresCluster, transactions: int) -> None:
    import psycopg

    rnd = random.Random(7)
    with psycopg.connect(pg.dsn("inventory"), autocommit=False) as conn:
        for i in range(transactions):
            name = rnd.choice(NAMES)
            cur = conn.execute(
                "INSERT INTO customers (name, email, balance) VALUES (%s, %s, %s) RETURNING id",
                (name, f"{name.lower()}{i}@example.com", round(rnd.uniform(0, 500), 2)))
            row = cur.fetchone()
            assert row is not None
            conn.execute("INSERT INTO orders (customer_id, amount, placed_on, tags) VALUES (%s, %s, now(), %s)",
                         (row[0], round(rnd.uniform(1, 99), 2), ["demo", f"batch{i % 3}"]))
            if i % 4 == 3:
                conn.execute("UPDATE customers SET balance = balance + 10 WHERE id = %s", (row[0],))
            if i % 7 == 6:
                conn.execute("DELETE FROM orders WHERE customer_id = %s", (row[0],))
            conn.commit()
            time.sleep(0.05)


def _show(msg: Any) -> None:
    value = orjson.loads(msg.value()) if msg.value() else None
    key = orjson.loads(msg.key()) if msg.key() else None
    key_payload = key.get("payload") if isinstance(key, dict) else key
    if value is None:
        click.echo(click.style(f"{msg.topic():28} tombstone key={key_payload}", dim=True))
        return
    payload = value["payload"]
    op = payload["op"]
    color = {"c": "green", "u": "yellow", "d": "red", "r": "cyan"}.get(op, "white")
    row = payload["after"] if payload["after"] is not None else payload["before"]
    click.echo(f"{msg.topic():28} " + click.style(f"op={op}", fg=color, bold=True)
               + f" lsn={payload['source']['lsn']} key={key_payload} row={orjson.dumps(row).decode()}")


def run_demo(transactions: int = 20, keep_running: bool = False) -> None:
    click.echo("starting PostgreSQL and the Tansu broker on 127.0.0.1 ...")
    with PostgresCluster() as pg, TansuBroker() as broker:
        pg.create_database("inventory")
        pg.execute(SCHEMA, "inventory")
        config = build_config({
            "name": "demo", "topic.prefix": "demo", **pg.connection_properties("inventory"),
            "bootstrap.servers": broker.bootstrap_servers, "snapshot.mode": "no_data",
            "offset.storage.topic": "demo-offsets", "offset.storage.partitions": "1",
        })
        connector = Connector(config)
        errors: list[BaseException] = []

        def target() -> None:
            try:
                connector.run()
            except BaseException as exc:  # shown below; the demo must not hang on a dead thread
                errors.append(exc)
                connector.ready.set()

        thread = threading.Thread(target=target, name="pgcdc", daemon=True)
        thread.start()
        connector.ready.wait(60)
        if errors:
            raise errors[0]
        click.echo(f"pgcdc is streaming (PostgreSQL {pg.major} on port {pg.port}, broker "
                   f"{broker.bootstrap_servers}); running {transactions} transactions ...")
        writer = threading.Thread(target=_workload, args=(pg, transactions), daemon=True)
        writer.start()
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "pgcdc-demo",
                             "enable.auto.commit": "false", "log.connection.close": "false"})
        assigned: set[tuple[str, int]] = set()
        seen = 0
        idle_since = time.monotonic()
        try:
            while True:
                md = consumer.list_topics(timeout=5).topics
                parts = {(t, p) for t, tm in md.items() if t.startswith("demo.public.") for p in tm.partitions}
                if parts - assigned:
                    consumer.incremental_assign([TopicPartition(t, p, OFFSET_BEGINNING)
                                                 for t, p in sorted(parts - assigned)])
                    assigned |= parts
                msg = consumer.poll(0.5)
                if msg is not None and not msg.error():
                    _show(msg)
                    seen += 1
                    idle_since = time.monotonic()
                elif not writer.is_alive() and not keep_running and time.monotonic() - idle_since > 3:
                    break
                if errors:
                    raise errors[0]
        except KeyboardInterrupt:
            pass
        finally:
            consumer.close()
            connector.stop()
            thread.join(30)
        click.echo(f"done: {seen} records read back from Kafka; stopping PostgreSQL and the broker")
