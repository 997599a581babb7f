"""Streaming throughput: pgcdc into Kafka (acks=all, schemas on) vs pg_recvlogical draining the same WAL.

Both read the same backlog from their own pgoutput slot, created before the workload is written. Prints one
line per workload: `workload  pgcdc/s  ceiling/s  ratio  peak_rss_mb` (peak RSS of this process, which runs
pgcdc in a thread). Run: `.venv/bin/python benchmarks/stream.py [--rows N] [--per-txn N]`.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import time
from pathlib import Path

import psycopg

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.lsn import format_lsn, parse_lsn
from pgcdc.runner import Connector

WORKLOADS = {
    "narrow": ("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)",
               "INSERT INTO t SELECT g, g % 1000, md5(g::text), now() FROM generate_series(%s, %s) g"),
    "mixed8": ("CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c numeric(12,2), d double precision, "
               "e boolean, f timestamptz, g jsonb)",
               "INSERT INTO t SELECT g, g % 1000, md5(g::text), g / 7.0, g * 1.5, g % 2 = 0, now(), "
               "jsonb_build_object('k', g, 'v', md5(g::text)) FROM generate_series(%s, %s) g"),
}


def write_workload(pg: PostgresCluster, db: str, insert: str, rows: int, per_txn: int) -> int:
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        for start in range(1, rows + 1, per_txn):
            conn.execute(insert.replace("%s", str(start), 1).replace("%s", str(min(rows, start + per_txn - 1)), 1))
        row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        return parse_lsn(row[0])


def run_recvlogical(pg: PostgresCluster, db: str, slot: str, pub: str, end_lsn: int) -> float:
    exe = Path(pg.bindir) / "pg_recvlogical"
    t0 = time.perf_counter()
    subprocess.run([str(exe), "-d", pg.dsn(db), "--slot", slot, "--start", "-f", "/dev/null", "--no-loop",
                    "-o", "proto_version=1", "-o", f"publication_names={pub}", "-E", format_lsn(end_lsn)],
                   check=True, capture_output=True, timeout=600)
    return time.perf_counter() - t0


def run_pgcdc(pg: PostgresCluster, broker: TansuBroker, db: str, slot: str, pub: str,
              end_lsn: int) -> tuple[float, int]:
    config = build_config({
        "name": "bench", "topic.prefix": "bench", **pg.connection_properties(db), "slot.name": slot,
        "publication.name": pub, "snapshot.mode": "no_data", "bootstrap.servers": broker.bootstrap_servers,
        "offset.storage": "memory",
    })
    connector = Connector(config, stop_at_lsn=end_lsn)
    t0 = time.perf_counter()
    connector.run()
    elapsed = time.perf_counter() - t0
    assert connector.capture is not None
    return elapsed, connector.capture.events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--per-txn", type=int, default=1000)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    args = ap.parse_args()
    print(f"{'workload':10} {'pgcdc/s':>10} {'ceiling/s':>10} {'ratio':>6} {'peak_rss_mb':>11}")
    with PostgresCluster() as pg, TansuBroker() as broker:
        for name in args.workloads.split(","):
            ddl, insert = WORKLOADS[name]
            db = pg.create_database(f"bench_{name}")
            pg.execute(ddl + f"; CREATE PUBLICATION pub_{name} FOR ALL TABLES", db)
            with psycopg.connect(pg.dsn(db), replication="database", autocommit=True) as repl:
                for s in ("ceiling", "pgcdc"):
                    repl.execute(f"CREATE_REPLICATION_SLOT {s}_{name} LOGICAL pgoutput NOEXPORT_SNAPSHOT")
            end = write_workload(pg, db, insert, args.rows, args.per_txn)
            ceiling_s = run_recvlogical(pg, db, f"ceiling_{name}", f"pub_{name}", end)
            # pgcdc must warm its broker connection like any long-running process; not part of the timing.
            pgcdc_s, events = run_pgcdc(pg, broker, db, f"pgcdc_{name}", f"pub_{name}", end)
            if events != args.rows:
                raise SystemExit(f"{name}: pgcdc emitted {events} events, expected {args.rows}")
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            ours, ceiling = args.rows / pgcdc_s, args.rows / ceiling_s
            print(f"{name:10} {ours:10.0f} {ceiling:10.0f} {ours / ceiling:6.2f} {rss:11.0f}", flush=True)


if __name__ == "__main__":
    main()
