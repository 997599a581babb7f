"""The Kafka path's own ceiling: pgcdc's records produced with nothing else to do, against COPY.

For each workload (stream.py's tables), a small table is snapshotted by pgcdc into memory to get its real
records (key, value with schemas, headers), and then `--records` of them are handed to a bare confluent-kafka
producer with pgcdc's producer settings (acks=all, idempotence, lz4), in a loop of `produce()` calls and one
`flush()`: no PostgreSQL, no decoding, no conversion. That rate bounds any connector that writes these
records through librdkafka from Python into this broker (`--broker kafka`, Apache Kafka 4.1.1, the default, or
`--broker tansu`; broker.py) on this machine; the line prints it against COPY of
the same table (the snapshot target's ceiling) and pg_recvlogical's rate needs stream.py.

`--format json,avro` produces each format's records in turn (formats.py; Avro's are made through the in-process
`mock://` registry). Prints `workload  format  produce/s  copy/s  ratio  value_bytes` and, with `--cpu`, where the
CPU went (benchmarks/cpu.py).
Run: `.venv/bin/python benchmarks/produce.py [--records N] [--workloads narrow,mixed8,wide40,toast] [--cpu]
[--format json,avro] [--batch N] [--broker tansu]`.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import psycopg
from confluent_kafka import Producer

from broker import Broker, add_broker_option, broker_pid, running_broker  # benchmarks/ is first on sys.path
from cpu import CpuMeter, postmaster_pid
from formats import FORMATS, format_names
from stream import WORKLOADS

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink import Headers


class Keep:
    """A sink that keeps the records' bytes as pgcdc produced them."""

    def __init__(self) -> None:
        self.records: list[tuple[str, bytes | None, bytes | None, Headers | None]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        self.records.append((topic, key, value, headers))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def records_of(pg: PostgresCluster, broker: Broker, db: str, name: str, fmt: str) -> list[Any]:
    props = {**FORMATS[fmt], "name": name, "topic.prefix": name, **pg.connection_properties(db),
             "slot.name": f"keep_{name}_{fmt}", "publication.name": f"pub_keep_{name}", "snapshot.mode": "initial_only",
             "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory"}
    sink = Keep()
    Connector(build_config(props), sink=sink).run()
    return sink.records


def copy_rate(pg: PostgresCluster, db: str, rows: int) -> float:
    best = float("inf")
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        for _ in range(3):
            t0 = time.perf_counter()
            n = 0
            with conn.cursor() as cur, cur.copy("COPY (SELECT * FROM t) TO STDOUT") as copy:
                for block in copy:
                    n += bytes(block).count(b"\n")
            best = min(best, time.perf_counter() - t0)
            assert n == rows, (n, rows)
    return rows / best


def batch_of(producer: Producer, topic: str, records: list[Any], total: int, size: int) -> None:
    dicts = [{"key": key, "value": value} for _, key, value, _ in records]
    sent = 0
    while sent < total:
        batch = [dicts[(sent + j) % len(dicts)] for j in range(min(size, total - sent))]
        while batch:
            try:
                done = producer.produce_batch(topic, batch)
            except BufferError:
                done = 0
            sent += done
            batch = batch[done:]
            if batch:
                producer.poll(0.05)
        producer.poll(0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--distinct", type=int, default=5_000, help="rows in the table whose records are reused")
    ap.add_argument("--workloads", default="narrow,mixed8,wide40,toast")
    ap.add_argument("--cpu", action="store_true", help="after each line, CPU-seconds per party")
    ap.add_argument("--set", action="append", default=[], metavar="PROPERTY=VALUE",
                    help="an extra connector property, e.g. kafka.linger.ms=20 (repeatable)")
    ap.add_argument("--batch", type=int, default=0, help="hand records to produce_batch() in lists of N")
    ap.add_argument("--format", default="json", metavar="FORMAT,...",
                    help=f"record formats whose records are produced, each in turn ({', '.join(FORMATS)}; formats.py)")
    add_broker_option(ap)
    args = ap.parse_args()
    formats = format_names(args.format)
    print("load average (1/5/15 min) at start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print(f"{'workload':10} {'format':6} {'produce/s':>10} {'copy/s':>10} {'ratio':>6} {'value_bytes':>11}", flush=True)
    with PostgresCluster() as pg, running_broker(args.broker) as broker:
        for name in args.workloads.split(","):
            w = WORKLOADS[name]
            db = pg.create_database(f"produce_{name}")
            pg.execute(w.ddl + f"; CREATE PUBLICATION pub_keep_{name} FOR ALL TABLES", db)
            pg.execute(w.insert % {"lo": 1, "hi": args.distinct}, db)
            pg.execute("VACUUM ANALYZE t", db)
            copy = copy_rate(pg, db, args.distinct)
            for fmt in formats:
                records = records_of(pg, broker, db, name, fmt)
                assert len(records) == args.distinct, len(records)
                conf = build_config({"name": "p", "topic.prefix": "p", **pg.connection_properties(db),
                                     "bootstrap.servers": broker.bootstrap_servers,
                                     **dict(item.split("=", 1) for item in args.set)}).producer_config()
                producer = Producer(conf)
                topic = f"produce_{name}_{fmt}"
                producer.produce(topic, b"warm-up")  # the topic and its metadata exist before the clock starts
                producer.flush(30)
                meter = CpuMeter(broker_pid(broker), postmaster_pid(pg.datadir))
                meter.start()
                t0 = time.perf_counter()
                produce, poll = producer.produce, producer.poll
                if args.batch:
                    batch_of(producer, topic, records, args.records, args.batch)
                for i in range(0 if args.batch else args.records):
                    _, key, value, headers = records[i % len(records)]
                    while True:
                        try:
                            produce(topic, value, key, headers=headers)
                            break
                        except BufferError:
                            poll(0.05)
                    if i & 0x3FF == 0:
                        poll(0)
                left = producer.flush(120)
                elapsed = time.perf_counter() - t0
                meter.stop()
                assert left == 0, f"{left} records not acknowledged"
                rate = args.records / elapsed
                size = sum(len(r[2] or b"") for r in records) // len(records)
                print(f"{name:10} {fmt:6} {rate:10.0f} {copy:10.0f} {rate / copy:6.2f} {size:11}", flush=True)
                if args.cpu:
                    print(f"{'':17} {meter.line(args.records)}", flush=True)
    print("load average (1/5/15 min) at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
