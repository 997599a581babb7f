"""kill -9 at random points of a large initial snapshot while a writer changes the tables; restart each time.

Afterwards: folding every Kafka record gives exactly each table's final rows, and no restart emitted again a
row that the offsets stored at the kill said was already emitted (duplicates are counted: only rows sent
after the last stored progress may repeat). `PGCDC_SOAK_SNAPSHOT_KILLS` sets the number of kills (default 5).
"""

from __future__ import annotations

import bisect
import os
import random
import signal
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import psycopg

from pgcdc.capture.position import SnapshotProgress
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.offsets import offset_key
from pgcdc.offsets.file import FileOffsetStore
from tests.harness import payload, random_writes, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli

TABLES = ("a", "b", "c")
ROWS = 100_000


def writer(pg: PostgresCluster, db: str, stop: threading.Event, seed: int) -> None:
    random_writes(pg, db, stop, seed, tables=TABLES, first_id=10_000_000, targets=ROWS, pause=0.01)


def stored_offset(cfg: dict[str, str]) -> dict[str, Any] | None:
    store = FileOffsetStore(cfg["offset.storage.file.filename"], offset_key(cfg["name"], cfg["topic.prefix"]))
    try:
        return store.load()
    finally:
        store.close()


def stop_after_the_writes(pg: PostgresCluster, dbname: str, cfg: dict[str, str], proc: Any) -> None:
    """Everything committed so far is in Kafka once the stored position passes a marker row written now; then
    SIGTERM, which must exit 0. The marker row (id -1 in table a) stays for the caller to remove or skip."""
    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
        # An LSN inside the marker's transaction: a stored commit at or past it is the marker's (or later).
        end = conn.execute("INSERT INTO a VALUES (-1, -1) RETURNING pg_current_wal_insert_lsn() - '0/0'").fetchone()[0]
    try:
        wait_for(lambda: int((stored_offset(cfg) or {}).get("lsn_commit") or 0) >= end, 180,
                 "streaming past the end of the writes")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def run_id(record: dict[str, Any]) -> str:
    value = next(v for k, v in record["headers"] if k == "__debezium.context.runId")
    return value["payload"] if isinstance(value, dict) else value


def test_kill9_during_initial_snapshot(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                       tmp_path: Path) -> None:
    kills = int(os.environ.get("PGCDC_SOAK_SNAPSHOT_KILLS", "5"))
    for t in TABLES:
        pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int NOT NULL);"
                   f"INSERT INTO {t} SELECT g, 0 FROM generate_series(1, {ROWS}) g", dbname)
    cfg = {**kafka_config(pg, dbname, broker), "snapshot.mode": "initial", "pgcdc.snapshot.chunk.rows": "2000",
           "snapshot.max.threads": "2", "offset.flush.interval.ms": "100",
           "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat")}
    stop = threading.Event()
    w = threading.Thread(target=writer, args=(pg, dbname, stop, kills))
    w.start()
    rnd = random.Random(kills)
    cursors: list[SnapshotProgress | None] = []  # what the offsets said at each kill, in run order
    started = [time.time()]  # when each run started: its runId (a UUIDv7) carries a later time
    proc = start_cli(tmp_path, cfg)
    try:
        for i in range(kills):
            if i == 0:  # the first kill lands after progress was stored, however fast the machine
                wait_for(lambda: SnapshotProgress.from_offset(stored_offset(cfg) or {}) is not None, 120,
                         "stored snapshot progress")
            else:
                time.sleep(rnd.uniform(1.5, 4.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            offset = stored_offset(cfg)
            cursors.append(SnapshotProgress.from_offset(offset) if offset else None)
            started.append(time.time())
            proc = start_cli(tmp_path, cfg)
            if offset is not None and offset.get("snapshot_completed") is not False:
                break  # the snapshot finished before this kill
        wait_for(lambda: (stored_offset(cfg) or {"snapshot_completed": False}).get("snapshot_completed")
                 is not False, 300, "the snapshot to complete")
    except BaseException:
        proc.kill()
        raise
    finally:
        stop.set()
        w.join()
    stop_after_the_writes(pg, dbname, cfg, proc)
    pg.execute("DELETE FROM a WHERE id = -1", dbname)
    marker = -1

    by_topic = {t: read_topic(broker.bootstrap_servers, f"{dbname}.public.{t}", timeout=180) for t in TABLES}
    reread = 0
    reads: Counter[tuple[str, int]] = Counter()
    per_run: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for t, records in by_topic.items():
        state: dict[int, int] = {}
        for r in records:
            if r["value"] is None:
                continue
            p = payload(r)
            if p["op"] == "r":
                reads[(t, p["after"]["id"])] += 1
                per_run[run_id(r)].append((t, p["after"]["id"]))
            if p["op"] in ("r", "c", "u"):
                state[p["after"]["id"]] = p["after"]["v"]
            elif p["op"] == "d":
                state.pop(p["before"]["id"], None)
        state.pop(marker, None)
        assert state == dict(pg.execute(f"SELECT id, v FROM {t}", dbname)), f"table {t} differs from the database"
    # Run i+1 started from the cursor stored when run i was killed: rows up to it must not come again.
    run_of = {rid: bisect.bisect_right(started, int(rid.replace("-", "")[:12], 16) / 1000) - 1 for rid in per_run}
    for rid, rows in per_run.items():
        i = run_of[rid]
        cursor = cursors[i - 1] if i >= 1 else None
        if cursor is None:
            continue
        for t, key in rows:
            name = ("public", t)
            emitted = (cursor.done is not None and name <= cursor.done) or (
                name == cursor.table and cursor.key is not None and key <= int(cursor.key[0]))
            reread += emitted
    dupes = sum(n - 1 for n in reads.values())
    print(f"snapshot kill -9 x{len(cursors)} ({len(per_run)} runs emitted snapshot rows): "
          f"{sum(reads.values())} snapshot records, "
          f"{dupes} repeated (rows sent after the last stored progress), {reread} re-emitted behind a stored cursor")
    assert any(c is not None for c in cursors), "no kill landed inside the snapshot after stored progress"
    assert reread == 0


def test_sigterm_during_initial_snapshot_resumes_without_repeats(pg: PostgresCluster, dbname: str,
                                                                 broker: KafkaBroker, tmp_path: Path) -> None:
    """SIGTERM stores the exact progress (after the sink flushed): the restart repeats no row at all."""
    pg.execute("CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL);"
               "INSERT INTO a SELECT g, 0 FROM generate_series(1, 200000) g", dbname)
    cfg = {**kafka_config(pg, dbname, broker), "snapshot.mode": "initial", "pgcdc.snapshot.chunk.rows": "5000",
           "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat")}
    proc = start_cli(tmp_path, cfg)
    try:
        wait_for(lambda: SnapshotProgress.from_offset(stored_offset(cfg) or {}) is not None, 120,
                 "the first stored snapshot progress")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        progress = SnapshotProgress.from_offset(stored_offset(cfg) or {})
        assert progress is not None and progress.key is not None, stored_offset(cfg)
        proc = start_cli(tmp_path, cfg)
        wait_for(lambda: (stored_offset(cfg) or {}).get("snapshot_completed") is True, 300,
                 "the snapshot to complete")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    log = (tmp_path / "pgcdc.log").read_text()
    assert "snapshot stopped at public.a" in log and "resuming the initial snapshot" in log
    ids = Counter(payload(r)["after"]["id"] for r in read_topic(broker.bootstrap_servers, f"{dbname}.public.a",
                                                                 timeout=180) if r["value"])
    assert set(ids) == set(range(1, 200001)) and max(ids.values()) == 1, "a row was lost or repeated"
