"""`pgcdc demo`: the embedded default end to end on one machine.

Starts a throwaway PostgreSQL (wal_level=logical, 127.0.0.1) and a Tansu broker, creates sample tables, runs
pgcdc against them, writes a small workload and prints each Debezium record read back from Kafka as it arrives:
typed values (pgcdc.embed's Event view) by default, the records' own JSON payloads with `--raw`.

Ctrl-C and SIGTERM (a container or process manager stopping it) end it the same way: pgcdc stops, then the
broker and PostgreSQL stop and their temporary folders are removed; the exit status is 0, as for `pgcdc run`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import random
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import click
import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from pgcdc.client_settings import kafka_client
from pgcdc.config import build_config
from pgcdc.embed import Event
from pgcdc.errors import LocalServiceError, PgcdcError
from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.runner import Connector

log = logging.getLogger(__name__)

# REPLICA IDENTITY FULL: updates and deletes carry the whole old row. With PostgreSQL's default a delete's
# `before` holds only the key, and Debezium fills the other NOT NULL columns with their type's zero
# (`customer_id=0`), which reads as corrupt data in a first demo.
SCHEMA = """
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, email varchar(100),
                        balance numeric(10,2), created_at timestamptz DEFAULT now());
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers(id),
                     amount numeric(10,2) NOT NULL, placed_on date NOT NULL, tags text[]);
ALTER TABLE customers REPLICA IDENTITY FULL;
ALTER TABLE orders REPLICA IDENTITY FULL;
"""

NAMES = ["Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia"]
OPS = {"c": ("insert", "green"), "u": ("update", "yellow"), "d": ("delete", "red"), "r": ("read", "cyan")}

# The demo's consumer. Records trickled out one per ~0.5 s when each record read (poll) was followed by a
# metadata request: on the broker connection that request queues behind the pending fetch, which the broker
# holds for fetch.wait.max.ms (500 ms by default) when no record is due. Now records are read in batches,
# topics are looked up twice a second, and a fetch is held 100 ms at most.
CONSUMER = {"group.id": "pgcdc-demo", "enable.auto.commit": "false", "log.connection.close": "false",
            "fetch.wait.max.ms": "100"}


def _workload(pg: PostgresCluster, transactions: int, stop: threading.Event, errors: list[BaseException]) -> None:
    import psycopg

    try:
        _write(pg, transactions, stop)
    except psycopg.Error as exc:
        if not stop.is_set():  # PostgreSQL stopping under an interrupted demo is no error
            errors.append(exc)


def _write(pg: PostgresCluster, transactions: int, stop: threading.Event) -> None:
    import psycopg

    rnd = random.Random(7)
    with psycopg.connect(pg.dsn("inventory"), autocommit=False) as conn:
        for i in range(transactions):
            if stop.is_set():
                return
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


def _typed(v: Any) -> str:
    if isinstance(v, str):
        return orjson.dumps(v).decode()
    if isinstance(v, dt.date | dt.time | dt.datetime):
        return v.isoformat()
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_typed(x) for x in v) + "]"
    return "null" if v is None else str(v)  # Decimal, int, float, bool as Python prints them


def _show(msg: Any, raw: bool) -> None:
    topic = msg.topic()
    event = Event(None, 0, "change" if msg.value() is not None else "tombstone", topic, msg.key(), msg.value(),
                  msg.headers(), msg.partition())
    if event.kind == "tombstone":
        click.echo(click.style(f"{topic:22} tombstone   key {_row(event.key_values or {})}", dim=True))
        return
    label, color = OPS.get(event.op or "", (event.op or "?", "white"))
    head = f"{topic:22} " + click.style(f"{label:11}", fg=color, bold=True)
    if raw:  # Debezium's JSON payload as the record carries it (decimals as base64, dates as day counts)
        payload = event.payload
        row = payload["after"] if payload["after"] is not None else payload["before"]
        click.echo(f"{head} lsn={event.lsn} key={event.key_json.get('payload') if event.key_json else None} "
                   f"row={orjson.dumps(row).decode()}")
        return
    if event.op == "d":
        click.echo(f"{head} {_row(event.before or {})}")
    elif event.op == "u" and event.before is not None and event.after is not None:
        before = event.before
        click.echo(f"{head} " + " ".join(
            f"{k}={_typed(v)}" + ("" if before.get(k) == v else click.style(f" (was {_typed(before.get(k))})",
                                                                             dim=True))
            for k, v in event.after.items()))
    else:
        click.echo(f"{head} {_row(event.after or {})}")


def _row(row: dict[str, Any]) -> str:
    return " ".join(f"{k}={_typed(v)}" for k, v in row.items())


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the demo as Ctrl-C does (the cleanup below runs); later signals during that cleanup are
    ignored so that it completes."""
    def on_signal(signum: int, _frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_signal)
    previous_int = signal.signal(signal.SIGINT, on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def run_demo(transactions: int = 20, keep_running: bool = False, raw: bool = False) -> None:
    with _sigterm_as_interrupt():
        try:
            _run(transactions, keep_running, raw)
        except KeyboardInterrupt:
            click.echo("stopped: PostgreSQL, the broker and their temporary folders are gone")


def _run(transactions: int, keep_running: bool, raw: bool) -> None:
    click.echo("starting PostgreSQL and the Tansu broker on 127.0.0.1 ...")
    with contextlib.ExitStack() as stack:
        # Each server's cleanup is registered before it starts: an interrupt during a start leaves nothing.
        pg = PostgresCluster()
        stack.callback(pg.cleanup)
        broker = TansuBroker()
        stack.callback(broker.cleanup)
        pg.start()
        broker.start()
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
        stack.callback(thread.join, 30)
        stack.callback(connector.stop)  # runs before the join above and before the servers stop
        connector.ready.wait(60)
        _raise_first(errors, broker)
        click.echo(f"pgcdc is streaming (PostgreSQL {pg.major} on port {pg.port}, broker "
                   f"{broker.bootstrap_servers}); running {transactions} transactions ...")
        stop_writing = threading.Event()
        writer = threading.Thread(target=_workload, args=(pg, transactions, stop_writing, errors), daemon=True)
        writer.start()
        stack.callback(writer.join, 10)
        stack.callback(stop_writing.set)
        consumer = Consumer(kafka_client({"bootstrap.servers": broker.bootstrap_servers, **CONSUMER}))
        stack.callback(consumer.close)
        seen = _consume(consumer, broker, writer, keep_running, errors, raw)
        click.echo(f"done: {seen} records read back from Kafka; stopping PostgreSQL and the broker")


def _consume(consumer: Any, broker: TansuBroker, writer: threading.Thread, keep_running: bool,
             errors: list[BaseException], raw: bool) -> int:
    assigned: set[tuple[str, int]] = set()
    seen = 0
    idle_since = refreshed = time.monotonic()
    refreshed -= 1
    while True:
        try:
            if time.monotonic() - refreshed >= 0.5:  # new tables' topics: a metadata request twice a second
                md = consumer.list_topics(timeout=5).topics
                refreshed = time.monotonic()
                parts = {(t, p) for t, tm in md.items() if t.startswith("demo.public.") for p in tm.partitions}
                if parts - assigned:
                    consumer.incremental_assign([TopicPartition(t, p, OFFSET_BEGINNING)
                                                 for t, p in sorted(parts - assigned)])
                    assigned |= parts
            messages = consumer.consume(500, 0.2)
        except KafkaException as exc:
            _raise_first(errors, broker)
            raise PgcdcError(f"demo: the broker at {broker.bootstrap_servers} stopped answering: "
                             f"{exc.args[0].str()}") from None
        for msg in messages:
            if not msg.error():
                _show(msg, raw)
                seen += 1
                idle_since = time.monotonic()
        _raise_first(errors, broker)
        if not messages and not writer.is_alive() and not keep_running and time.monotonic() - idle_since > 3:
            return seen


def _raise_first(errors: list[BaseException], broker: TansuBroker) -> None:
    """The demo's servers and connector thread end the demo with one line, never a traceback."""
    if broker.proc is not None and broker.proc.poll() is not None:
        raise LocalServiceError(f"demo: the Tansu broker exited (status {broker.proc.returncode}); "
                                f"the demo cannot go on without it")
    if errors:
        exc = errors[0]
        if isinstance(exc, PgcdcError):
            raise exc
        log.debug("pgcdc stopped", exc_info=exc)
        raise PgcdcError(f"demo: pgcdc stopped: {exc}") from None
