"""kill -9 at random points of an incremental snapshot while a writer changes the table; restart each time.

Afterwards folding every Kafka record gives exactly the table's final rows: a restart continues from the
cursor stored in the streaming offset (a new window from the last emitted key), and watermark rows of the
killed run's windows, replayed from the slot, are ignored. `PGCDC_SOAK_INCREMENTAL_KILLS` sets the number of
kills (default 4). With read.only=true the windows come from pg_current_snapshot() instead of watermark rows.
"""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pgcdc.capture.position import IncrementalProgress
from pgcdc.local import KafkaBroker, PostgresCluster
from tests.harness import payload, random_writes, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli
from tests.slow.test_snapshot_kill import stop_after_the_writes, stored_offset

ROWS = 40_000


def writer(pg: PostgresCluster, db: str, stop: threading.Event, seed: int) -> None:
    random_writes(pg, db, stop, seed, tables=("a",), first_id=ROWS + 1, statements=8, inserts=0.35, pause=0.005)


@pytest.mark.parametrize("read_only", [False, True])
def test_kill9_during_incremental_snapshot(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                           tmp_path: Path, read_only: bool) -> None:
    kills = int(os.environ.get("PGCDC_SOAK_INCREMENTAL_KILLS", "4"))
    pg.execute("CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL);"
               f"INSERT INTO a SELECT g, 0 FROM generate_series(1, {ROWS}) g;"
               "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
               dbname)
    cfg = {**kafka_config(pg, dbname, broker), "offset.flush.interval.ms": "100",
           "signal.data.collection": "public.dbz_signal", "incremental.snapshot.chunk.size": "500",
           "read.only": str(read_only).lower(),
           "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat")}
    stop = threading.Event()
    w = threading.Thread(target=writer, args=(pg, dbname, stop, kills))
    rnd = random.Random(kills)
    proc = start_cli(tmp_path, cfg)
    in_progress = 0  # kills after which the offsets held an incremental snapshot under way
    try:
        wait_for(lambda: pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'")
                 == [(True,)], 60, "streaming")
        w.start()
        with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
            # An LSN inside the signal's transaction: a stored commit at or past it is the signal's (or later).
            signal_at = conn.execute(
                "INSERT INTO dbz_signal VALUES ('go', 'execute-snapshot', %s) "
                "RETURNING pg_current_wal_insert_lsn() - '0/0'",
                (json.dumps({"data-collections": ["public.a"], "type": "incremental"}),)).fetchone()[0]
        for _ in range(kills):
            time.sleep(rnd.uniform(1.0, 3.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            progress = IncrementalProgress.from_offset(stored_offset(cfg) or {})
            in_progress += progress is not None
            proc = start_cli(tmp_path, cfg)

        def finished() -> bool:
            offset = stored_offset(cfg) or {}
            return int(offset.get("lsn_commit") or 0) >= signal_at and IncrementalProgress.from_offset(offset) is None

        wait_for(finished, 300, "the incremental snapshot to complete")
    except BaseException:
        proc.kill()
        raise
    finally:
        stop.set()
        if w.is_alive():
            w.join()
    stop_after_the_writes(pg, dbname, cfg, proc)
    state: dict[int, int] = {}
    reads = 0
    for r in read_topic(broker.bootstrap_servers, f"{dbname}.public.a", timeout=180):
        if r["value"] is None:
            continue
        p = payload(r)
        if p["op"] == "r":
            reads += 1
            assert p["source"]["snapshot"] == "incremental"
        if p["op"] in ("r", "c", "u"):
            state[p["after"]["id"]] = p["after"]["v"]
        elif p["op"] == "d":
            state.pop(p["before"]["id"], None)
    state.pop(-1, None)
    expected = dict(pg.execute("SELECT id, v FROM a WHERE id <> -1", dbname))
    print(f"read.only={read_only}: incremental snapshot kill -9 x{kills} ({in_progress} with a snapshot under way "
          f"in the offsets): {reads} snapshot records for {len(expected)} rows")
    assert in_progress, "no kill landed while the incremental snapshot was under way"
    wrong = sorted(k for k in set(state) | set(expected) if state.get(k) != expected.get(k))
    assert not wrong, f"{len(wrong)} rows differ (id: folded, database): " + ", ".join(
        f"{k}: {state.get(k)}, {expected.get(k)}" for k in wrong[:10])
