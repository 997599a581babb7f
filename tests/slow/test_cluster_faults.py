"""A three-node Apache Kafka cluster (replication factor 3, `min.insync.replicas=2`) under pgcdc's default
producer (acks=all, idempotent):

- nodes killed with SIGKILL one after another under a continuous writer and started again, the leader of the
  offsets topic's partition first: every committed change in Kafka in commit order per key, none rolled back,
  and the slot's confirmed position never stands still longer than the configured timeouts allow;
- a topic that asks for three replicas in sync and a node down: nothing is acknowledged, so nothing is confirmed
  to PostgreSQL, until the node is back; then every row arrives (acks=all is what pgcdc sends).

`PGCDC_SOAK_CLUSTER_KILLS` (default 3, each node once) and `PGCDC_SOAK_CLUSTER_DOWN_S` (default 10) size the
first test. Accounting: tests/ledger.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from pgcdc.local import KafkaCluster, PostgresCluster
from pgcdc.lsn import format_lsn
from tests.harness import commit_after, payload, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli, wait_slot_active
from tests.ledger import confirmed_lsn, stored_offsets, tally
from tests.slow.test_broker_outage import wait_marker
from tests.slow.test_kill_loop import TABLES, writer

# How long the confirmed position may stand still while a node is down: the cluster fences a node that stops
# heartbeating after broker.session.timeout.ms (4 s here, pgcdc/local/kafka.py) and moves leadership; the
# producer then learns the new leaders from its next metadata request; pgcdc stores an offset every
# offset.flush.interval.ms (1 s) and confirms it with its next status update (status.update.interval.ms, 0.5 s).
# Past pgcdc's own offset-write timeout (30 s) the connector would restart instead.
STALL_LIMIT_S = 30.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    started = time.monotonic()
    with KafkaCluster() as c:
        print(f"cluster of 3 started in {time.monotonic() - started:.1f} s")
        yield c


class Progress:
    """Samples the slot's confirmed position every 100 ms; `longest_stall()` is the longest time it did not move."""

    def __init__(self, pg: PostgresCluster, slot: str) -> None:
        self.pg, self.slot = pg, slot
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.monotonic(), confirmed_lsn(self.pg, self.slot)))
            time.sleep(0.1)

    def longest_stall(self) -> float:
        moves = [t for (t, lsn), (_, prev) in zip(self.samples[1:], self.samples) if lsn != prev]
        return max((b - a for a, b in pairwise([self.samples[0][0], *moves, self.samples[-1][0]])), default=0.0)


def test_nodes_killed_under_load_lose_nothing(pg: PostgresCluster, dbname: str, cluster: KafkaCluster,
                                              tmp_path: Path) -> None:
    kills = int(os.environ.get("PGCDC_SOAK_CLUSTER_KILLS", "3"))
    down_s = float(os.environ.get("PGCDC_SOAK_CLUSTER_DOWN_S", "10"))
    for t in TABLES:
        pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int NOT NULL)", dbname)
    # The offsets topic takes the cluster's replication factor (offset.storage.replication.factor -1).
    cfg = {**kafka_config(pg, dbname, cluster), "offset.flush.interval.ms": "1000"}  # type: ignore[arg-type]
    slot, offsets_topic = cfg["slot.name"], cfg["offset.storage.topic"]
    oracle = f"oracle_{dbname}"
    pg.execute(f"SELECT pg_create_logical_replication_slot('{oracle}', 'test_decoding')", dbname)
    proc = start_cli(tmp_path, cfg)
    log = tmp_path / "pgcdc.log"
    wait_slot_active(pg, slot)
    stop = threading.Event()
    commits: list[int] = []
    w = threading.Thread(target=writer, args=(pg, dbname, stop, 11, commits))
    w.start()
    progress = Progress(pg, slot)
    victims: list[str] = []
    try:
        wait_for(lambda: len(stored_offsets(cluster.bootstrap_servers, offsets_topic)) >= 5, 120,
                 "offsets stored before the first kill")
        progress.thread.start()
        offsets_leader = cluster.leader(offsets_topic)
        for n in range(kills):
            victim = offsets_leader if n == 0 else (offsets_leader + n - 1) % 3 + 1
            victims.append(f"node {victim}" + (" (offsets leader)" if victim == cluster.leader(offsets_topic)
                                                else ""))
            cluster.broker(victim).kill()
            time.sleep(down_s)
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            cluster.start_broker(victim)
            time.sleep(2)  # the writer goes on with every node back
    finally:
        stop.set()
        w.join()
    marker = -1
    pg.execute(f"INSERT INTO a VALUES ({marker}, -1)", dbname)
    wait_marker(cluster.bootstrap_servers, dbname, marker, log)
    progress.stop.set()
    progress.thread.join()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text(errors="replace")[-2000:]

    counts = tally(pg, dbname, oracle, cluster.bootstrap_servers)
    restarts = log.read_text(errors="replace").count("restarting in")
    stall = progress.longest_stall()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    summary = (f"cluster of 3, {kills} node(s) killed, each down {down_s:g} s ({', '.join(victims)}): "
               f"{sum(commits)} statements in {len(commits)} transactions, {counts}, {restarts} connector "
               f"restarts, longest stall of the confirmed position {stall:.1f} s; load average {load}")
    print(summary)
    assert (counts.lost, counts.phantom, counts.out_of_order, counts.state_differs) == (0, 0, 0, 0), summary
    assert stall < STALL_LIMIT_S, summary


def test_acks_all_waits_for_the_replicas_in_sync(pg: PostgresCluster, dbname: str, cluster: KafkaCluster,
                                                 tmp_path: Path) -> None:
    # The change topic made beforehand, asking for all three replicas in sync: with a follower down, a produce
    # request with acks=all is refused (NOT_ENOUGH_REPLICAS) and retried; acks=1 would be acknowledged.
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    topic = f"{dbname}.public.t"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "3"})])[topic].result(30)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    assert admin.describe_configs([res])[res].result(30)["min.insync.replicas"].value == "3"
    cfg = {**kafka_config(pg, dbname, cluster), "offset.storage": "file",  # type: ignore[arg-type]
           "offset.storage.file.filename": str(tmp_path / "offsets.dat")}
    slot = cfg["slot.name"]
    proc = start_cli(tmp_path, cfg)
    log = tmp_path / "pgcdc.log"
    try:
        wait_slot_active(pg, slot)
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        wait_for(lambda: any(r["value"] and payload(r)["after"]["id"] == 1
                             for r in read_topic(cluster.bootstrap_servers, topic)), 60, "row 1")
        follower = next(n for n in (1, 2, 3) if n != cluster.leader(topic))
        cluster.broker(follower).kill()
        # Once the cluster has fenced the node, the leader refuses the append (NOT_ENOUGH_REPLICAS). A request
        # that arrives before appends and then waits for the dead follower: its idempotent retry is answered as
        # a duplicate, that is acknowledged, with two replicas (Kafka's semantics, not the case tested here).
        wait_for(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions[0].isrs) == 2, 60,
                 "the in-sync replicas to shrink to two")
        row2 = commit_after(pg, dbname, "INSERT INTO t VALUES (2)")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            assert confirmed_lsn(pg, slot) < row2, "the slot confirmed row 2, which no broker acknowledged"
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            time.sleep(0.25)
        cluster.start_broker(follower)
        wait_for(lambda: {2} <= {payload(r)["after"]["id"] for r in read_topic(cluster.bootstrap_servers, topic)
                                 if r["value"]}, 120, "row 2 once the follower is back",
                 lambda: log.read_text(errors="replace")[-2000:])
        wait_for(lambda: confirmed_lsn(pg, slot) > row2, 60, "the slot to confirm row 2",
                 lambda: format_lsn(confirmed_lsn(pg, slot)))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
