"""Peak memory at several sizes, to show RSS does not follow the size: one huge transaction streamed into
Kafka, and the initial snapshot of one big table.

pgcdc runs in a child process (so its peak RSS is its own, read from the kernel's VmHWM) with the Kafka sink
(Tansu, acks=all, JSON with schemas). Transactions: pgcdc stops once the transaction is in Kafka; on
PostgreSQL 14+ the server streams the open transaction to pgcdc in blocks, which pgcdc spills to its own temp
files until the commit; the ceiling is pg_recvlogical draining the same transaction from its own slot.
Snapshots: pgcdc runs with snapshot.mode=initial_only on a narrow table (4 columns) and stops when the
snapshot is in Kafka; the ceiling is `COPY (SELECT * FROM t) TO STDOUT` of the same table. Prints
`workload  pgcdc/s  ceiling/s  ratio  peak_rss_mb` per size, then the pgcdc process's CPU-seconds and the
load average. Run: `.venv/bin/python benchmarks/memory.py [--rows 100000,1000000]
[--snapshot-rows 1000000,10000000]` (an empty list skips that workload).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
from confluent_kafka.admin import AdminClient

from snapshot import ceiling as copy_ceiling  # benchmarks/ is the script's folder, first on sys.path
from stream import run_recvlogical

from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.lsn import parse_lsn

CHILD = """
import json, resource, sys, time
from pgcdc.config import build_config
from pgcdc.runner import Connector
props, end = json.loads(sys.argv[1]), int(sys.argv[2])
connector = Connector(build_config(props), stop_at_lsn=end if end else None)
t0 = time.perf_counter()
connector.run()
elapsed = time.perf_counter() - t0
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"elapsed": elapsed, "events": connector.stats.events, "peak_kb": hwm,
                  "cpu": use.ru_utime + use.ru_stime}))
"""


def run_child(props: dict[str, str], end: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(props), str(end)], capture_output=True, text=True,
                         timeout=3600, cwd=Path(__file__).resolve().parents[1])
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def one(pg: PostgresCluster, broker: TansuBroker, rows: int) -> tuple[float, float, float, float]:
    db = f"m{rows}"
    pg.create_database(db)
    pg.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)", db)
    pub, slot, ceiling_slot = f"p_{db}", f"s_{db}", f"c_{db}"
    pg.execute(f"CREATE PUBLICATION {pub} FOR ALL TABLES", db)
    for s in (slot, ceiling_slot):
        pg.execute(f"SELECT pg_create_logical_replication_slot('{s}', 'pgoutput')", db)
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn, conn.transaction():
        conn.execute(f"INSERT INTO t SELECT g, g % 1000, md5(g::text), now() FROM generate_series(1, {rows}) g")
        # Inside the transaction: a commit at or past this LSN is this one (see stream.write_workload).
        row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
        assert row is not None
        end = parse_lsn(row[0])
    props = {"name": "mem", "topic.prefix": db, **pg.connection_properties(db), "slot.name": slot,
             "publication.name": pub, "snapshot.mode": "no_data", "bootstrap.servers": broker.bootstrap_servers,
             "offset.storage": "memory", "publication.autocreate.mode": "disabled"}
    result = run_child(props, end)
    ceiling = run_recvlogical(pg, db, ceiling_slot, pub, end)
    return result["events"] / result["elapsed"], rows / ceiling, result["peak_kb"] / 1024, result["cpu"]


def snapshot_one(pg: PostgresCluster, broker: TansuBroker, rows: int) -> tuple[float, float, float, float]:
    db = f"snap{rows}"
    pg.create_database(db)
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        # The key is added after the rows: one index build instead of one insertion per row.
        conn.execute("CREATE TABLE t (id bigint, a int, b text, c timestamptz)")
        conn.execute(f"INSERT INTO t SELECT g, g % 1000, md5(g::text), now() FROM generate_series(1, {rows}) g")
        conn.execute("ALTER TABLE t ADD PRIMARY KEY (id)")
        conn.execute("VACUUM ANALYZE t")
    props = {"name": "mem", "topic.prefix": db, **pg.connection_properties(db), "slot.name": f"s_{db}",
             "publication.name": f"p_{db}", "snapshot.mode": "initial_only",
             "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory"}
    result = run_child(props, 0)
    if result["events"] != rows:
        raise SystemExit(f"snapshot of {rows:,} rows: pgcdc emitted {result['events']:,} records")
    ceiling_s, copied = copy_ceiling(pg, db, ["t"])
    assert copied == rows
    pg.execute(f"SELECT pg_drop_replication_slot('s_{db}')", db)
    pg.drop_database(db)
    # The broker keeps every record in memory: the topic goes once measured.
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.delete_topics([f"{db}.public.t"])[f"{db}.public.t"].result(60)
    return rows / result["elapsed"], rows / ceiling_s, result["peak_kb"] / 1024, result["cpu"]


def sizes(text: str) -> list[int]:
    return [int(r) for r in text.split(",") if r.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000", help="transaction sizes, comma-separated")
    parser.add_argument("--snapshot-rows", default="1000000,10000000",
                        help="rows of the snapshotted table, comma-separated")
    args = parser.parse_args()
    txns, snaps = sizes(args.rows), sizes(args.snapshot_rows)
    print("load average (1/5/15 min) at start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    with PostgresCluster(settings={"logical_decoding_work_mem": "64MB"}) as pg, TansuBroker() as broker:
        print(f"{'workload':<22} {'pgcdc/s':>9} {'ceiling/s':>10} {'ratio':>6} {'peak_rss_mb':>12} {'cpu_s':>7}",
              flush=True)
        runs = [("1 txn x ", one, n) for n in txns] + [("snapshot x ", snapshot_one, n) for n in snaps]
        for label, fn, rows in runs:
            rate, ceiling, peak, cpu = fn(pg, broker, rows)
            print(f"{label + format(rows, ','):<22} {rate:>9.0f} {ceiling:>10.0f} {rate / ceiling:>6.2f} "
                  f"{peak:>12.0f} {cpu:>7.1f}", flush=True)
    print("load average (1/5/15 min) at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
