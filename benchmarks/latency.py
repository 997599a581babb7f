"""Commit → Kafka latency at a steady rate (default 10,000 events/s for 20 s).

A writer commits `--per-txn` rows per transaction at `--rate` rows/s; `pgcdc run` (a child process, Kafka sink:
Apache Kafka 4.1.1, or Tansu with `--broker tansu` (broker.py); acks=all, schemas on) streams them; a consumer
reads the topic as records arrive and takes, for each, the time it was consumed minus its commit time
(`source.ts_us`). That is commit → produced → acknowledged → fetched, so it bounds commit → ack from above.
Prints `workload  events/s  p50_ms  p99_ms  max_ms`.
Run: `.venv/bin/python benchmarks/latency.py [--rate 10000] [--per-txn 100] [--seconds 20] [--broker tansu]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import psycopg
from broker import add_broker_option, running_broker  # benchmarks/ is the script's folder, first on sys.path
from confluent_kafka import Consumer, KafkaError, TopicPartition

from pgcdc.local import PostgresCluster


def writer(pg: PostgresCluster, db: str, rate: int, per_txn: int, seconds: float, done: threading.Event) -> int:
    interval = per_txn / rate
    n = 0
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            conn.execute(f"INSERT INTO t SELECT g, g % 1000, md5(g::text), now() "
                         f"FROM generate_series({n + 1}, {n + per_txn}) g")
            n += per_txn
            pause = start + (n / per_txn) * interval - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
    done.set()
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--per-txn", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--offset-flush-ms", type=int, default=None,
                        help="offset.flush.interval.ms for pgcdc (default: pgcdc's own); a checkpoint pauses the "
                             "stream only if Kafka's queue has not emptied for another interval")
    add_broker_option(parser)
    args = parser.parse_args()
    # synchronous_commit=on, as in production: the throwaway cluster's default (off) leaves commits to the WAL
    # writer (wal_writer_delay, 200 ms), and logical decoding only reads flushed WAL.
    with PostgresCluster(settings={"synchronous_commit": "on"}) as pg, running_broker(args.broker) as broker, \
            tempfile.TemporaryDirectory() as tmp:
        pg.create_database("lat")
        pg.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)", "lat")
        config = {"name": "lat", "config": {
            "topic.prefix": "lat", **pg.connection_properties("lat"), "snapshot.mode": "no_data",
            "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory",
            **({"offset.flush.interval.ms": str(args.offset_flush_ms)} if args.offset_flush_ms is not None else {})}}
        path = Path(tmp) / "connector.json"
        path.write_text(json.dumps(config))
        log = open(Path(tmp) / "pgcdc.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "pgcdc.cli", "run", "--config", str(path)], stdout=log,
                                stderr=log, env={**os.environ})
        try:
            deadline = time.monotonic() + 60
            while pg.execute("SELECT count(*) FROM pg_replication_slots WHERE active")[0][0] == 0:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit((Path(tmp) / "pgcdc.log").read_text()[-2000:])
                time.sleep(0.1)
            consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "lat",
                                 "enable.auto.commit": "false", "fetch.wait.max.ms": "5", "fetch.min.bytes": "1"})
            done = threading.Event()
            total: list[int] = []
            w = threading.Thread(target=lambda: total.append(
                writer(pg, "lat", args.rate, args.per_txn, args.seconds, done)))
            topic = "lat.public.t"
            lat_ms: list[float] = []
            w.start()
            while True:
                md = consumer.list_topics(topic, timeout=5)
                if topic in md.topics and not md.topics[topic].error and md.topics[topic].partitions:
                    break
                time.sleep(0.05)
            consumer.assign([TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
            t0 = time.perf_counter()
            while not (done.is_set() and total and len(lat_ms) >= total[0]):
                msg = consumer.poll(0.5)
                if msg is None:
                    if done.is_set() and time.perf_counter() - t0 > args.seconds + 30:
                        break
                    continue
                if msg.error():
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise SystemExit(str(msg.error()))
                now_us = time.time_ns() // 1000
                value = orjson.loads(msg.value()) if msg.value() else None
                if value is not None:
                    lat_ms.append((now_us - value["payload"]["source"]["ts_us"]) / 1000)
            elapsed = time.perf_counter() - t0
            w.join()
            consumer.close()
        finally:
            proc.terminate()
            proc.wait(30)
        lat_ms.sort()
        q = lambda f: lat_ms[min(len(lat_ms) - 1, int(f * len(lat_ms)))]  # noqa: E731
        print(f"{'workload':<28} {'events/s':>9} {'p50_ms':>7} {'p99_ms':>7} {'max_ms':>7}")
        print(f"{f'{args.rate}/s, {args.per_txn}/txn':<28} {len(lat_ms) / elapsed:>9.0f} {q(0.5):>7.1f} "
              f"{q(0.99):>7.1f} {lat_ms[-1]:>7.1f}   ({len(lat_ms)} of {total[0] if total else '?'} rows)")


if __name__ == "__main__":
    main()
