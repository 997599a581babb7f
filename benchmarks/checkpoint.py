"""Time the replication loop spends in checkpoints while streaming at a steady rate (default 10,000 rows/s).

The connector runs in this process (Kafka sink: Tansu, memory offsets) with `Checkpointer.tick` timed; a writer
in another process commits `--per-txn` rows per transaction at `--rate` rows/s, so it does not compete for
this process's GIL. Prints the checkpoints taken without and after waiting for Kafka, the loop's total time
in `tick` and its longest call.
Run: `.venv/bin/python benchmarks/checkpoint.py [--seconds 20] [--offset-flush-ms 1000]`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import threading
import time
from typing import Any

import psycopg

from pgcdc import durability
from pgcdc.config import build_config
from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.runner import Connector


def writer(dsn: str, rate: int, per_txn: int, seconds: float) -> None:
    n = 0
    with psycopg.connect(dsn, autocommit=True) as conn:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            conn.execute(f"INSERT INTO t SELECT g, g % 1000, md5(g::text), now() "
                         f"FROM generate_series({n + 1}, {n + per_txn}) g")
            n += per_txn
            pause = start + n / rate - time.perf_counter()
            if pause > 0:
                time.sleep(pause)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--per-txn", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--offset-flush-ms", type=int, default=1000)
    args = parser.parse_args()
    durations: list[float] = []
    tick = durability.Checkpointer.tick

    def timed(self: durability.Checkpointer, *a: Any) -> bool:
        t = time.perf_counter()
        try:
            return tick(self, *a)
        finally:
            durations.append(time.perf_counter() - t)

    durability.Checkpointer.tick = timed  # type: ignore[method-assign]
    with PostgresCluster(settings={"synchronous_commit": "on"}) as pg, TansuBroker() as broker:
        pg.create_database("cp")
        pg.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)", "cp")
        config = build_config({"name": "cp", "topic.prefix": "cp", **pg.connection_properties("cp"),
                               "snapshot.mode": "no_data", "bootstrap.servers": broker.bootstrap_servers,
                               "offset.storage": "memory", "offset.flush.interval.ms": str(args.offset_flush_ms)})
        connector = Connector(config)
        thread = threading.Thread(target=connector.run, daemon=True)
        thread.start()
        if not connector.ready.wait(60):
            raise SystemExit("the connector did not start")
        proc = multiprocessing.get_context("spawn").Process(
            target=writer, args=(pg.dsn("cp"), args.rate, args.per_txn, args.seconds))
        proc.start()
        proc.join()
        time.sleep(1)  # the last transactions reach Kafka and the next checkpoint
        streaming = sorted(d * 1000 for d in durations)
        checkpointer = connector.checkpointer
        connector.stop()
        thread.join(60)
    assert checkpointer is not None
    print(f"{'workload':<28} {'without_wait':>12} {'after_wait':>10} {'ticks':>7} {'sum_ms':>7} {'max_ms':>7}")
    print(f"{f'{args.rate}/s, {args.per_txn}/txn, {args.seconds:g} s':<28} {checkpointer.without_wait:>12} "
          f"{checkpointer.after_wait:>10} {len(streaming):>7} {sum(streaming):>7.1f} {streaming[-1]:>7.1f}")


if __name__ == "__main__":
    main()
