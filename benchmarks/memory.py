"""Peak memory: one huge transaction streamed into Kafka, at several sizes, to show RSS does not follow the size.

pgcdc runs in a child process (so its peak RSS is its own, read from the kernel's VmHWM) with the Kafka sink
(Tansu, acks=all, JSON with schemas) and stops once the transaction is in Kafka. On PostgreSQL 14+ the server
streams the open transaction to pgcdc in blocks, which pgcdc spills to its own temp files until the commit.
Prints `workload  pgcdc/s  ceiling/s  ratio  peak_rss_mb` per size; the ceiling is pg_recvlogical draining
the same transaction from its own slot. Run: `.venv/bin/python benchmarks/memory.py [--rows 100000,1000000]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import psycopg

from stream import run_recvlogical  # benchmarks/ is the script's folder, first on sys.path

from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.lsn import parse_lsn

CHILD = """
import json, sys, time
from pgcdc.config import build_config
from pgcdc.runner import Connector
props, end = json.loads(sys.argv[1]), int(sys.argv[2])
connector = Connector(build_config(props), stop_at_lsn=end)
t0 = time.perf_counter()
connector.run()
elapsed = time.perf_counter() - t0
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"elapsed": elapsed, "events": connector.stats.events, "peak_kb": hwm}))
"""


def one(pg: PostgresCluster, broker: TansuBroker, rows: int) -> tuple[float, float, float]:
    db = f"m{rows}"
    pg.create_database(db)
    pg.execute("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)", db)
    pub, slot, ceiling_slot = f"p_{db}", f"s_{db}", f"c_{db}"
    pg.execute(f"CREATE PUBLICATION {pub} FOR ALL TABLES", db)
    for s in (slot, ceiling_slot):
        pg.execute(f"SELECT pg_create_logical_replication_slot('{s}', 'pgoutput')", db)
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        conn.execute(f"INSERT INTO t SELECT g, g % 1000, md5(g::text), now() FROM generate_series(1, {rows}) g")
        row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        end = parse_lsn(row[0])
    props = {"name": "mem", "topic.prefix": db, **pg.connection_properties(db), "slot.name": slot,
             "publication.name": pub, "snapshot.mode": "no_data", "bootstrap.servers": broker.bootstrap_servers,
             "offset.storage": "memory", "publication.autocreate.mode": "disabled"}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(props), str(end)], capture_output=True, text=True,
                         timeout=3600, cwd=Path(__file__).resolve().parents[1])
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    ceiling = run_recvlogical(pg, db, ceiling_slot, pub, end)
    return result["events"] / result["elapsed"], rows / ceiling, result["peak_kb"] / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000", help="transaction sizes, comma-separated")
    args = parser.parse_args()
    with PostgresCluster(settings={"logical_decoding_work_mem": "64MB"}) as pg, TansuBroker() as broker:
        print(f"{'workload':<22} {'pgcdc/s':>9} {'ceiling/s':>10} {'ratio':>6} {'peak_rss_mb':>12}")
        for rows in (int(r) for r in args.rows.split(",")):
            rate, ceiling, peak = one(pg, broker, rows)
            print(f"{'1 txn x ' + format(rows, ','):<22} {rate:>9.0f} {ceiling:>10.0f} {rate / ceiling:>6.2f} "
                  f"{peak:>12.0f}", flush=True)


if __name__ == "__main__":
    main()
