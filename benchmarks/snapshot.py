"""Initial snapshot throughput: pgcdc into Kafka (acks=all, schemas on) vs `COPY … TO STDOUT` of the same tables.

The ceiling reads every table with COPY (text) and drops the bytes, in the same run. pgcdc runs with
snapshot.mode=initial_only in a child process (so its peak RSS is its own) and stops when the snapshot is
done; its time includes start-up (connections, slot creation, broker metadata). The broker is Apache Kafka
4.1.1 (`--broker kafka`, the default) or Tansu (`--broker tansu`), see broker.py. Prints one line per workload:
`workload  format  value_B  pgcdc/s  ceiling/s  ratio  peak_rss_mb` (best of `--repeat` runs; the highest peak
RSS; the mean value bytes of the format's records). `--format json,avro` runs each format in turn (formats.py:
Avro through confluent-kafka's in-process mock registry).

Where a JDK and pydbzengine are installed (`--debezium auto`), Debezium 3.x embedded snapshots the same tables
from its own slot into a Python handler (no Kafka), its rate taken between its first and last snapshot record
(stream.py's `run_debezium`), and each line adds `debezium/s` and `x_debezium`.

Run: `.venv/bin/python benchmarks/snapshot.py [--rows N] [--tables N] [--threads 1,2] [--debezium auto|yes|no]
[--broker kafka|tansu] [--format json,avro] [--topics auto|created] [--fresh-broker]`. With `--topics auto` (the
default) the broker creates each topic on the snapshot's first record of its table, inside the timing: on Apache
Kafka that bounds the many-tables workload at about 30,000 rows/s whatever the format (a checkpoint's flush waits
for the topics created so far). `--topics created` creates them before each run, as a cluster without auto-creation has
them, so the timing is pgcdc's. By default every run writes into one broker, and a run after a many-tables run
finds it slower whatever its format (README.md): `--fresh-broker` starts and warms a broker for each run, so
formats compare on equal terms (its JIT is cold: compare formats within such runs, not with shared-broker ones).
`--profile null|kafka` instead runs one snapshot of one `--rows` table in this process under cProfile, into a
sink that drops records (`null`) or into the `--broker` (`kafka`), and prints the profile's top lines.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import time

import psycopg
from psycopg import sql

from broker import Broker, add_broker_option, broker_pid, running_broker  # benchmarks/ is first on sys.path
from cpu import CpuMeter, postmaster_pid
from formats import FORMATS, SizeSample, format_names
from stream import debezium_available, run_debezium

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import DropSink

DDL = ("CREATE TABLE {} (id bigint PRIMARY KEY, a int, b text, c numeric(12,2), d double precision, "
       "e boolean, f timestamptz, g jsonb)")
FILL = ("INSERT INTO {} SELECT g, g % 1000, md5(g::text), g / 7.0, g * 1.5, g % 2 = 0, now(), "
        "jsonb_build_object('k', g, 'v', md5(g::text)) FROM generate_series(1, {}) g")


def create(pg: PostgresCluster, db: str, tables: int, rows: int) -> list[str]:
    names = [f"t{i:03d}" for i in range(tables)]
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        for n in names:
            conn.execute(DDL.format(n))
            conn.execute(FILL.format(n, rows // tables))
        conn.execute("VACUUM ANALYZE")
    return names


def ceiling(pg: PostgresCluster, db: str, names: list[str]) -> tuple[float, int]:
    rows = 0
    t0 = time.perf_counter()
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        for n in names:
            with conn.cursor() as cur, cur.copy(sql.SQL("COPY (SELECT * FROM {}) TO STDOUT").format(
                    sql.Identifier(n))) as copy:
                for block in copy:
                    rows += bytes(block).count(b"\n")
    return time.perf_counter() - t0, rows


def child(args: argparse.Namespace) -> None:
    """One pgcdc snapshot in this process; prints seconds, events and peak RSS as JSON."""
    from pgcdc.config import build_config
    from pgcdc.runner import Connector

    from pgcdc.sink import make_sink

    props = json.loads(args.child)
    config = build_config(props)
    sink = SizeSample(make_sink(config))
    connector = Connector(config, sink=sink)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    stats = connector.run()
    elapsed = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": elapsed, "events": stats.events, "cpu_s": usage.ru_utime + usage.ru_stime,
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "value_bytes": sink.value_mean}))


def create_topics(broker: Broker, prefix: str, names: list[str]) -> None:
    """The run's topics created before it (`--topics created`), each partition's leader elected: a broker with
    auto-creation off, or topics made by whoever runs the cluster. Otherwise the broker creates each topic on its
    first record, one at a time as the snapshot reaches its table, and the many-tables workload measures that."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    topics = [f"{prefix}.public.{name}" for name in names]
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
        future.result(60)
    deadline = time.monotonic() + 60
    while not all(m.partitions and all(p.leader >= 0 for p in m.partitions.values())
                  for t, m in admin.list_topics(timeout=10).topics.items() if t in topics):
        if time.monotonic() > deadline:
            raise SystemExit(f"--topics created: {len(topics)} topics have no leaders after 60 s")
        time.sleep(0.05)


def run_pgcdc(pg: PostgresCluster, broker: Broker, db: str, slot: str, threads: int,
              fmt: str = "json") -> dict[str, float]:
    props = {**FORMATS[fmt], "name": slot, "topic.prefix": slot, **pg.connection_properties(db), "slot.name": slot,
             "publication.name": f"pub_{slot}", "snapshot.mode": "initial_only",
             "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory",
             "snapshot.max.threads": str(threads)}
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(props)], check=True,
                         capture_output=True, text=True, timeout=3600)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def profile(rows: int, into: str, threads: int, top: int, broker_name: str) -> None:
    from pgcdc.config import build_config
    from pgcdc.runner import Connector

    with PostgresCluster() as pg, running_broker(broker_name) as broker:
        db = pg.create_database("bench_profile")
        names = create(pg, db, 1, rows)
        ceiling_s, n = ceiling(pg, db, names)
        props = {"name": "prof", "topic.prefix": "prof", **pg.connection_properties(db), "slot.name": "prof",
                 "publication.name": "pub_prof", "snapshot.mode": "initial_only",
                 "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory",
                 "snapshot.max.threads": str(threads)}
        connector = Connector(build_config(props), sink=DropSink() if into == "null" else None)
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        stats = connector.run()
        prof.disable()
        elapsed = time.perf_counter() - t0
        print(f"{stats.events} records in {elapsed:.2f} s under cProfile ({stats.events / elapsed:.0f}/s); "
              f"COPY {n / ceiling_s:.0f} rows/s")
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(order).print_stats(top)
            print(out.getvalue().split("\n", 5)[-1] if order == "tottime" else out.getvalue())


def measure(pg: PostgresCluster, broker: Broker | None, db: str, names: list[str], label: str, threads: int, fmt: str,
            args: argparse.Namespace, theirs: float | None) -> None:
    """One line: the best of `--repeat` snapshots of the database in format `fmt`, against the best COPY."""
    best_ceiling, best, rss, value_bytes = float("inf"), float("inf"), 0.0, 0.0
    for run in range(args.repeat):
        ceiling_s, rows = ceiling(pg, db, names)
        # --fresh-broker: a broker of the run's own, that no earlier run has written to
        with running_broker(args.broker) if args.fresh_broker else contextlib.nullcontext(broker) as into:
            meter = CpuMeter(broker_pid(into), postmaster_pid(pg.datadir))
            meter.start()
            slot = f"snap_{label}_{threads}_{fmt}_{run}"
            if args.topics == "created":
                create_topics(into, slot, names)
            result = run_pgcdc(pg, into, db, slot, threads, fmt)
            meter.stop()
        if result["events"] != rows:
            raise SystemExit(f"{label}: pgcdc emitted {result['events']} records, the tables hold {rows}")
        best_ceiling, best = min(best_ceiling, ceiling_s), min(best, result["seconds"])
        rss, value_bytes = max(rss, result["rss_mb"]), result["value_bytes"]
    ours, ceil = rows / best, rows / best_ceiling
    name = f"{label}/threads={threads}"
    print(f"{name:16} {fmt:>6} {value_bytes:7.0f} {ours:10.0f} {ceil:10.0f} {ours / ceil:6.2f} {rss:11.0f}"
          + (f" {theirs:10.0f} {ours / theirs:10.1f}" if theirs else ""), flush=True)
    if args.cpu:
        _, _, _, broker_s, postgres_s = meter.used
        per = 1e6 / rows
        print(f"{'':16} cpu s: pgcdc {result['cpu_s']:.2f} ({result['cpu_s'] * per:.1f} us/row, with "
              f"start-up), broker {broker_s:.2f} ({broker_s * per:.1f} us/row), postgres "
              f"{postgres_s:.2f} ({postgres_s * per:.1f} us/row); pgcdc's wall {result['seconds']:.2f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000, help="rows per workload, spread over its tables")
    ap.add_argument("--tables", type=int, default=100, help="tables of the many-tables workload")
    ap.add_argument("--threads", default="1,2", help="snapshot.max.threads values to run")
    ap.add_argument("--repeat", type=int, default=3, help="runs per workload; the best of each side is kept "
                    "(the machines are shared: the best run is the one least disturbed)")
    ap.add_argument("--profile", choices=("null", "kafka"), help="profile one snapshot of one --rows table")
    ap.add_argument("--top", type=int, default=15, help="profile lines to print")
    ap.add_argument("--debezium", choices=("auto", "yes", "no"), default="auto",
                    help="also run Debezium 3.x embedded (pydbzengine, needs a JDK 17); auto: when installed")
    ap.add_argument("--cpu", action="store_true", help="after each line, CPU-seconds of its last run per party: "
                    "pgcdc's process (from start-up, all threads), the broker, PostgreSQL")
    ap.add_argument("--format", default="json", metavar="FORMAT,...",
                    help=f"record formats, each run in turn ({', '.join(FORMATS)}; formats.py)")
    ap.add_argument("--topics", choices=("auto", "created"), default="auto",
                    help="auto: the broker creates each topic on its first record, inside the timing; created: "
                    "the topics are created (leaders elected) before each run")
    ap.add_argument("--fresh-broker", action="store_true",
                    help="each run into a broker started for it; by default all runs share one broker, and a run "
                    "after a many-tables run finds it slower (README.md)")
    add_broker_option(ap)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if args.profile:
        profile(args.rows, args.profile, int(args.threads.split(",")[0]), args.top, args.broker)
        return
    # The machines are shared: the load average says how much else ran while measuring.
    print("load average (1/5/15 min) at start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    debezium = args.debezium == "yes" or (args.debezium == "auto" and debezium_available())
    formats = format_names(args.format)
    print(f"{'workload':16} {'format':>6} {'value_B':>7} {'pgcdc/s':>10} {'ceiling/s':>10} {'ratio':>6} "
          f"{'peak_rss_mb':>11}"
          + (f" {'debezium/s':>10} {'x_debezium':>10}" if debezium else ""), flush=True)
    with PostgresCluster() as pg, (contextlib.nullcontext(None) if args.fresh_broker
                                   else running_broker(args.broker)) as broker:
        for label, tables in (("single", 1), ("many", args.tables)):
            db = pg.create_database(f"bench_{label}")
            names = create(pg, db, tables, args.rows)
            theirs = run_debezium(pg, db, f"dbz_{label}", f"pub_dbz_{label}", tables * (args.rows // tables),
                                  "initial_only") if debezium else None
            for threads in (int(t) for t in args.threads.split(",")):
                for fmt in formats:
                    measure(pg, broker, db, names, label, threads, fmt, args, theirs)
    print("load average (1/5/15 min) at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
