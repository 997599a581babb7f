"""Broker outage: the Apache Kafka broker killed with SIGKILL while pgcdc produces under a continuous writer, kept
down, then started again on the same port and log dirs; `PGCDC_SOAK_OUTAGES` times (default 1). Afterwards every
committed change is in Kafka in commit order per key, none that was rolled back is, and while the broker was down
the slot never confirmed a position past the last offset Kafka had acknowledged (Kafka ack -> offset stored ->
LSN confirmed). pgcdc runs as the CLI with its default producer and retry settings and resumes by itself.

`PGCDC_SOAK_OUTAGE_S` sets how long the broker stays down (default 10; the soak run uses 60, three times:
tests/soak/README.md). Accounting: tests/ledger.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.lsn import format_lsn
from tests.harness import payload, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli, wait_slot_active
from tests.ledger import compare, confirmed_lsn, stored_offsets, tally
from tests.slow.test_kill_loop import TABLES, writer


@pytest.fixture
def own_broker() -> Iterator[KafkaBroker]:
    with KafkaBroker() as b:
        yield b


@pytest.mark.parametrize(("got", "counts"), [
    ([(1, "c", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 0, 0)),
    ([(1, "c", 7), (3, "d", 7)], (1, 0, 0, 0)),  # an update lost
    ([(1, "c", 7), (2, "u", 7), (1, "c", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 2, 0)),  # a replay
    ([(1, "c", 7), (3, "d", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 1, 1)),  # the update first seen after the delete
    ([(1, "c", 7), (2, "u", 7), (3, "d", 7), (4, "c", 9)], (0, 1, 0, 0)),  # a change never committed
])
def test_compare(got: list[tuple[int, str, int]], counts: tuple[int, int, int, int]) -> None:
    assert compare(got, [(1, "c", 7), (2, "u", 7), (3, "d", 7)]) == counts


def wait_marker(bootstrap: str, dbname: str, marker: int, log: Path) -> None:
    """Until the `c` event of row `marker` of table a, written after everything else, is in Kafka."""
    wait_for(lambda: any(r["value"] and payload(r)["op"] == "c" and payload(r)["after"]["id"] == marker
                         for r in read_topic(bootstrap, f"{dbname}.public.a")),
             300, f"row {marker} after the outage", lambda: log.read_text(errors="replace")[-2000:])


def test_broker_killed_and_restarted_loses_nothing(pg: PostgresCluster, dbname: str, own_broker: KafkaBroker,
                                                  tmp_path: Path) -> None:
    outage_s = float(os.environ.get("PGCDC_SOAK_OUTAGE_S", "10"))
    outages = int(os.environ.get("PGCDC_SOAK_OUTAGES", "1"))
    broker = own_broker
    for t in TABLES:
        pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int NOT NULL)", dbname)
    cfg = {**kafka_config(pg, dbname, broker), "offset.flush.interval.ms": "1000"}
    slot, offsets_topic = cfg["slot.name"], cfg["offset.storage.topic"]
    oracle = f"oracle_{dbname}"
    pg.execute(f"SELECT pg_create_logical_replication_slot('{oracle}', 'test_decoding')", dbname)
    proc = start_cli(tmp_path, cfg)
    log = tmp_path / "pgcdc.log"
    wait_slot_active(pg, slot)
    stop = threading.Event()
    commits: list[int] = []
    w = threading.Thread(target=writer, args=(pg, dbname, stop, 7, commits))
    w.start()
    before: list[tuple[int, dict[str, Any]]] = []
    kills: list[tuple[int, int]] = []  # (kill time in ms, highest position the slot confirmed while down)
    caught_up: list[float] = []
    try:
        for n in range(outages):
            stored = len(before) if n else 0
            wait_for(lambda s=stored: len(stored_offsets(broker.bootstrap_servers, offsets_topic)) >= s + 5, 120,
                     "offsets stored before the outage")
            before = stored_offsets(broker.bootstrap_servers, offsets_topic)
            killed_ms = int(time.time() * 1000)
            broker.kill()  # wherever it is: pgcdc produces all the time
            down_since = time.monotonic()
            confirmed: list[int] = []
            while time.monotonic() - down_since < outage_s:
                confirmed.append(confirmed_lsn(pg, slot))
                assert proc.poll() is None, f"pgcdc exited ({proc.returncode}) during the outage: " \
                                            f"{log.read_text(errors='replace')[-2000:]}"
                time.sleep(0.25)
            kills.append((killed_ms, max(confirmed)))
            broker.start()
            restarted = time.monotonic()
            # A row written now, after everything before it: once it is in Kafka, pgcdc has caught up.
            marker = -1 - n  # the writer's ids are positive: no earlier event has this key
            pg.execute(f"INSERT INTO a VALUES ({marker}, -1)", dbname)
            wait_marker(broker.bootstrap_servers, dbname, marker, log)
            caught_up.append(time.monotonic() - restarted)
    finally:
        stop.set()
        w.join()
    # The writer's last transactions came after the last marker: one more row, after them, before pgcdc stops.
    pg.execute(f"INSERT INTO a VALUES ({-1 - outages}, -1)", dbname)
    wait_marker(broker.bootstrap_servers, dbname, -1 - outages, log)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text(errors="replace")[-2000:]

    # Durability order: while the broker was down no offset could be stored, so the slot may not confirm past
    # the last one Kafka acknowledged before the kill. (An offset produced just before the kill and acknowledged
    # after the restart has an earlier timestamp too: that makes the bound looser, never wrong.)
    after = stored_offsets(broker.bootstrap_servers, offsets_topic)
    # What Kafka acknowledged before the last kill is still there, in the same order (the log dirs survive).
    assert [v for _, v in after[:len(before)]] == [v for _, v in before]
    for killed_ms, confirmed_max in kills:
        stored_before_kill = max(v["lsn"] for ts, v in after if ts < killed_ms)
        assert confirmed_max <= stored_before_kill, (f"slot confirmed {format_lsn(confirmed_max)} while Kafka was "
                                                     f"down; last stored {format_lsn(stored_before_kill)}")
    counts = tally(pg, dbname, oracle, broker.bootstrap_servers)
    restarts = log.read_text(errors="replace").count("restarting in")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    summary = (f"broker down {outage_s:g} s x{outages} (SIGKILL while producing): {sum(commits)} statements in "
               f"{len(commits)} transactions, {counts}, {restarts} connector restarts, caught up "
               f"{', '.join(f'{s:.1f}' for s in caught_up)} s after each restart; load average {load}")
    print(summary)
    if counts.lost_events:
        first, last = counts.lost_events[0], counts.lost_events[-1]
        print(f"lost: {first} .. {last}, transactions (xid: events) {counts.lost_xids}; per outage, the last "
              f"offset stored before the kill: "
              + ", ".join(format_lsn(max(v["lsn"] for ts, v in after if ts < k)) for k, _ in kills))
    assert (counts.lost, counts.phantom, counts.out_of_order, counts.state_differs) == (0, 0, 0, 0), summary
