"""Kill -9 loop (short version for CI): random transactions of inserts, updates, deletes and key changes
across tables while pgcdc is killed and restarted; afterwards every committed change is in Kafka, in commit
order per key, and folding the topics gives exactly the database's final state.

`PGCDC_SOAK_KILLS` sets the number of kills (default 8; the soak run uses 50+).
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgcdc.local import KafkaBroker, PostgresCluster
from tests.harness import payload, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli, wait_slot_active

TABLES = ("a", "b", "c")


def writer(pg: PostgresCluster, db: str, stop: threading.Event, seed: int, commits: list[int],
           big: float = 0.02) -> None:
    """`big`: the share of transactions of 500 to 5000 statements."""
    rnd = random.Random(seed)
    next_id = 1
    with psycopg.connect(pg.dsn(db)) as conn:
        while not stop.is_set():
            # 1 to 5000 statements: mostly small, now and then a large one
            size = rnd.randint(500, 5000) if rnd.random() < big else rnd.choice((1, 1, 5, 50, rnd.randint(1, 500)))
            rollback = rnd.random() < 0.1
            with conn.transaction():
                for _ in range(size):
                    table = rnd.choice(TABLES)
                    action = rnd.random()
                    if action < 0.6 or next_id < 20:
                        conn.execute(f"INSERT INTO {table} VALUES (%s, 0)", (next_id,))
                        next_id += 1
                    elif action < 0.8:
                        conn.execute(f"UPDATE {table} SET v = v + 1 WHERE id = %s", (rnd.randrange(1, next_id),))
                    elif action < 0.9:
                        conn.execute(f"DELETE FROM {table} WHERE id = %s", (rnd.randrange(1, next_id),))
                    else:  # primary-key change to a fresh id
                        conn.execute(f"UPDATE {table} SET id = %s WHERE id = %s", (next_id, rnd.randrange(1, next_id)))
                        next_id += 1
                if rollback:  # none of it may ever reach Kafka
                    raise psycopg.Rollback()
            if not rollback:
                commits.append(size)
            time.sleep(0.002)


def fold(records: list[dict]) -> tuple[dict[int, int], list[tuple[int, int]]]:
    state: dict[int, int] = {}
    versions: list[tuple[int, int]] = []
    for r in records:
        if r["value"] is None:
            continue
        p = payload(r)
        if p["op"] in ("c", "u", "r"):
            state[p["after"]["id"]] = p["after"]["v"]
            versions.append((p["after"]["id"], p["source"]["lsn"]))
        elif p["op"] == "d":
            state.pop(p["before"]["id"], None)
    return state, versions


def test_kill9_loop_keeps_every_committed_change(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                 tmp_path: Path) -> None:
    kill_loop(pg, dbname, broker, tmp_path, int(os.environ.get("PGCDC_SOAK_KILLS", "8")), big=0.02)


@pytest.fixture(scope="module")
def streaming_pg() -> Iterator[PostgresCluster]:
    """A server that streams (14+) or spills (11-13) every transaction over 64 kB of decoded changes."""
    with PostgresCluster() as cluster:
        if cluster.major >= 13:
            cluster.execute("ALTER SYSTEM SET logical_decoding_work_mem = '64kB'")
            cluster.execute("SELECT pg_reload_conf()")
        yield cluster


def test_kill9_loop_inside_streamed_transactions(streaming_pg: PostgresCluster, broker: KafkaBroker,
                                                tmp_path: Path) -> None:
    """The same loop where a fifth of the transactions are big enough to be streamed before commit: kills land
    while pgcdc holds blocks of open transactions in its spill files and while it replays committed ones."""
    pg = streaming_pg
    dbname = f"ks_{uuid.uuid4().hex[:8]}"
    pg.create_database(dbname)
    kill_loop(pg, dbname, broker, tmp_path, int(os.environ.get("PGCDC_SOAK_KILLS", "8")), big=0.2)
    if pg.major >= 14:
        streamed = pg.execute(f"SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = 'slot_{dbname}'")
        assert streamed and streamed[0][0] > 0, "the server streamed no transaction"
        print(f"streamed transactions (server's count, resends included): {streamed[0][0]}")


def kill_loop(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path, kills: int,
              big: float) -> None:
    for t in TABLES:
        pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int NOT NULL)", dbname)
    cfg = kafka_config(pg, dbname, broker)
    proc = start_cli(tmp_path, cfg)
    wait_slot_active(pg, cfg["slot.name"])
    stop = threading.Event()
    commits: list[int] = []
    rnd = random.Random(kills)
    w = threading.Thread(target=writer, args=(pg, dbname, stop, 42, commits, big))
    w.start()
    try:
        for _ in range(kills):
            time.sleep(rnd.uniform(0.3, 2.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            proc = start_cli(tmp_path, cfg)
    finally:
        stop.set()
        w.join()
    # The writer's ids are positive, so no earlier event has this key (max(id) + 1 may have been deleted or moved
    # away, and its old `c` event would pass for the marker).
    marker = -1
    pg.execute(f"INSERT INTO a VALUES ({marker}, -1)", dbname)
    try:
        wait_for(lambda: any(payload(r) and payload(r)["op"] == "c" and payload(r)["after"]["id"] == marker
                             for r in read_topic(broker.bootstrap_servers, f"{dbname}.public.a") if r["value"]),
                 120, "the marker row after the last restart")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    total = dupes = 0
    for t in TABLES:
        records = read_topic(broker.bootstrap_servers, f"{dbname}.public.{t}")
        state, versions = fold(records)
        expected = dict(pg.execute(f"SELECT id, v FROM {t}", dbname))
        assert state == expected, f"table {t}: folded Kafka state differs from the database"
        # The fold equals the database only if every committed change arrived, none rolled back did, and
        # each key's last event is its last committed version (commit order per key).
        counts = Counter(versions)
        dupes += sum(n - 1 for n in counts.values())
        total += len(records)
    print(f"kill -9 x{kills}: {sum(commits)} statements in {len(commits)} transactions, {total} records, "
          f"{dupes} duplicate change events")
