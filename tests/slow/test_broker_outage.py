"""Broker outage: the Kafka broker killed with SIGKILL under a continuous writer, kept down, then started again
on the same port and storage. Afterwards every committed change is in Kafka in commit order per key, none that
was rolled back is, and while the broker was down the slot never confirmed a position past the last offset Kafka
had acknowledged (Kafka ack -> offset stored -> LSN confirmed).

The broker keeps its topics in a local S3 endpoint (s3rver, see pgcdc/local/s3.py), so the change topics and
the offsets topic (`offset.storage` Kafka, the default) outlive the restart. pgcdc runs as the CLI with its
default producer and retry settings. `PGCDC_SOAK_OUTAGE_S` sets how long the broker stays down (default 10; the
soak run uses 60: tests/soak/README.md).

What was committed comes from PostgreSQL itself: a second slot with the test_decoding plugin, created before the
writer starts, read once at the end. Lost = a committed change no record carries; phantom = a record for no
committed change (a rolled-back one); duplicates = records repeated after a restart. A hole in a partition's
offsets is counted and shown apart: offsets are the broker's, and readers pass over a hole as over a compacted
range.

The broker is killed between requests: clients reach it through tests/broker_gate.py, which holds new requests
until the broker has answered every one it was given. Tansu's S3 storage does not write a produce request
atomically and, killed in the middle of one, acknowledges records it never stored to the producer's retry
(docs/decisions/test-broker.md); Apache Kafka has no such window. Requests pgcdc sent during the hold are lost
with the connection, as in a crash.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from pgcdc.local import PostgresCluster, S3Server, TansuBroker
from pgcdc.local.postgres import free_port
from pgcdc.lsn import format_lsn, parse_lsn
from tests.broker_gate import BrokerGate
from tests.harness import payload, read_topic, wait_for
from tests.integration.test_durability import kafka_config, start_cli, wait_slot_active
from tests.slow.test_kill_loop import TABLES, fold, writer

# test_decoding's text for one row change (contrib/test_decoding): a key change names the old key first.
CHANGE = re.compile(r"table public\.(\w+): (INSERT|UPDATE|DELETE): "
                    r"(?:old-key: id\[integer\]:(-?\d+) new-tuple: )?id\[integer\]:(-?\d+)")

Event = tuple[int, str, int]  # (lsn, op, id) of one change event, as pgcdc emits it


@pytest.fixture
def gated_broker() -> Iterator[tuple[TansuBroker, BrokerGate]]:
    gate_port = free_port()
    with S3Server() as s3, TansuBroker(s3=s3, advertised_port=gate_port) as broker, \
            BrokerGate(gate_port, broker.port) as gate:
        yield broker, gate


def committed_events(pg: PostgresCluster, dbname: str, slot: str) -> dict[str, list[Event]]:
    """Per table, the change events every committed change must give, in commit order: a primary-key change is
    a delete of the old key and a create of the new one (pgcdc/capture/changes.py, as Debezium)."""
    out: dict[str, list[Event]] = defaultdict(list)
    for lsn_text, data in pg.execute(f"SELECT lsn, data FROM pg_logical_slot_get_changes('{slot}', NULL, NULL)",
                                     dbname):
        m = CHANGE.match(data)
        if m is None:
            assert data.startswith(("BEGIN", "COMMIT")), data
            continue
        table, kind, old, new = m.groups()
        lsn, key = parse_lsn(str(lsn_text)), int(new)
        if kind == "INSERT":
            out[table].append((lsn, "c", key))
        elif kind == "DELETE":
            out[table].append((lsn, "d", key))
        elif old is None:
            out[table].append((lsn, "u", key))
        else:
            out[table] += [(lsn, "d", int(old)), (lsn, "c", key)]
    return out


def events_in(records: list[dict[str, Any]]) -> list[Event]:
    """The change events of a topic's records in offset order per partition (tombstones carry none)."""
    out: list[Event] = []
    for r in records:
        if r["value"] is None:
            continue
        p = payload(r)
        row = p["before"] if p["op"] == "d" else p["after"]
        out.append((p["source"]["lsn"], p["op"], row["id"]))
    return out


def compare(got: list[Event], expected: list[Event]) -> tuple[int, int, int, int]:
    """(lost, phantom, duplicates, out of order): out of order counts events that reached Kafka for the first
    time before an earlier change of the same key had (a key's records share a partition, so their order in
    `got` is the order a consumer reads them)."""
    got_set, want = set(got), set(expected)
    first_seen: dict[int, list[int]] = defaultdict(list)
    seen: set[Event] = set()
    for e in got:
        if e not in seen:
            seen.add(e)
            first_seen[e[2]].append(e[0])
    out_of_order = sum(b < a for lsns in first_seen.values() for a, b in pairwise(lsns))
    return len(want - got_set), len(got_set - want), len(got) - len(got_set), out_of_order


@pytest.mark.parametrize(("got", "counts"), [
    ([(1, "c", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 0, 0)),
    ([(1, "c", 7), (3, "d", 7)], (1, 0, 0, 0)),  # an update lost
    ([(1, "c", 7), (2, "u", 7), (1, "c", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 2, 0)),  # a replay
    ([(1, "c", 7), (3, "d", 7), (2, "u", 7), (3, "d", 7)], (0, 0, 1, 1)),  # the update first seen after the delete
    ([(1, "c", 7), (2, "u", 7), (3, "d", 7), (4, "c", 9)], (0, 1, 0, 0)),  # a change never committed
])
def test_compare(got: list[Event], counts: tuple[int, int, int, int]) -> None:
    assert compare(got, [(1, "c", 7), (2, "u", 7), (3, "d", 7)]) == counts


def stored_offsets(bootstrap: str, topic: str, timeout: float = 30) -> list[tuple[int, dict[str, Any]]]:
    """(broker timestamp in ms, offset value) of every record in the offsets topic, in order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pgcdc-test-offsets",
                         "enable.auto.commit": "false", "enable.partition.eof": "true"})
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise AssertionError(f"reading {topic}: {msg.error()}")
            if msg.value():
                out.append((msg.timestamp()[1], orjson.loads(msg.value())))
        raise AssertionError(f"reading {topic}: no end of partition in {timeout}s")
    finally:
        consumer.close()


def confirmed_lsn(pg: PostgresCluster, slot: str) -> int:
    rows = pg.execute(f"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '{slot}'")
    assert rows and rows[0][0] is not None, f"slot {slot} is gone"
    return parse_lsn(str(rows[0][0]))


def test_broker_killed_and_restarted_loses_nothing(pg: PostgresCluster, dbname: str,
                                                  gated_broker: tuple[TansuBroker, BrokerGate],
                                                  tmp_path: Path) -> None:
    outage_s = float(os.environ.get("PGCDC_SOAK_OUTAGE_S", "10"))
    broker, gate = gated_broker
    for t in TABLES:
        pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int NOT NULL)", dbname)
    # pgcdc's default offset.flush.interval.ms (1 s), not the kill tests' 100 ms: every produce request is an
    # object in the broker's S3 storage, and reading a partition lists them all.
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
    try:
        wait_for(lambda: len(stored_offsets(broker.bootstrap_servers, offsets_topic)) >= 5, 60,
                 "offsets stored before the outage")
        before = stored_offsets(broker.bootstrap_servers, offsets_topic)
        # PGCDC_SOAK_OUTAGE_HOLD=0 kills the broker wherever it is, to see the broker's own losses (see above).
        held = gate.hold() if os.environ.get("PGCDC_SOAK_OUTAGE_HOLD", "1") != "0" else -1
        killed_ms = int(time.time() * 1000)
        broker.kill()
        gate.drop_connections()
        gate.release()  # new connections are refused until the broker is back
        down_since = time.monotonic()
        confirmed: list[int] = []
        while time.monotonic() - down_since < outage_s:
            confirmed.append(confirmed_lsn(pg, slot))
            assert proc.poll() is None, f"pgcdc exited ({proc.returncode}) during the outage: " \
                                        f"{log.read_text(errors='replace')[-2000:]}"
            time.sleep(0.25)
        broker.start()
        restarted = time.monotonic()
        time.sleep(min(outage_s, 5.0))  # the writer goes on after the restart too
    finally:
        stop.set()
        w.join()
    assert proc.poll() is None, f"pgcdc exited after the outage: {log.read_text(errors='replace')[-2000:]}"
    # The writer's ids are positive, so no earlier event has this key (max(id) + 1 may have been deleted or moved
    # away, and its old `c` event would pass for the marker).
    marker = -1
    pg.execute(f"INSERT INTO a VALUES ({marker}, -1)", dbname)
    try:
        wait_for(lambda: any(r["value"] and payload(r)["op"] == "c" and payload(r)["after"]["id"] == marker
                             for r in read_topic(broker.bootstrap_servers, f"{dbname}.public.a")),
                 300, "the marker row after the outage", lambda: log.read_text(errors="replace")[-2000:])
        caught_up_s = time.monotonic() - restarted
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text(errors="replace")[-2000:]

    # The offsets Kafka acknowledged before the kill are still there after the restart, in the same order.
    after = stored_offsets(broker.bootstrap_servers, offsets_topic)
    assert [v for _, v in after[:len(before)]] == [v for _, v in before]
    # Durability order: during the outage no offset could be stored, so the slot may not confirm past the last
    # one Kafka acknowledged before the kill. (An offset produced just before the kill and acknowledged after
    # the restart also has an earlier timestamp: that makes the bound looser, never wrong.)
    stored_before_kill = max(v["lsn"] for ts, v in after if ts < killed_ms)
    assert max(v["lsn"] for _, v in before) <= stored_before_kill
    assert max(confirmed) <= stored_before_kill, (f"slot confirmed {format_lsn(max(confirmed))} while Kafka was "
                                                  f"down; last stored {format_lsn(stored_before_kill)}")

    committed = committed_events(pg, dbname, oracle)
    pg.execute(f"SELECT pg_drop_replication_slot('{oracle}')", dbname)
    total = changes = lost = phantom = dupes = disordered = holes = 0
    for t in TABLES:
        records = read_topic(broker.bootstrap_servers, f"{dbname}.public.{t}")
        for part in {r["partition"] for r in records}:
            offsets = [-1] + [r["offset"] for r in records if r["partition"] == part]
            holes += sum(b - a - 1 for a, b in pairwise(offsets))
        counts = compare(events_in(records), committed[t])
        lost, phantom, dupes, disordered = (x + y for x, y in zip((lost, phantom, dupes, disordered), counts))
        state, _ = fold(records)
        assert state == dict(pg.execute(f"SELECT id, v FROM {t}", dbname)), \
            f"table {t}: folded Kafka state differs from the database"
        total += len(records)
        changes += len(committed[t])
    restarts = log.read_text(errors="replace").count("restarting in")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    how = f"{held} connections held" if held >= 0 else "not held"
    summary = (f"broker down {outage_s:g} s (SIGKILL, {how}): {sum(commits)} statements in "
               f"{len(commits)} transactions, {changes} change events committed, {total} records, lost {lost}, "
               f"phantom {phantom}, {dupes} duplicates, out of order {disordered}, offset holes {holes}, "
               f"{restarts} connector restarts, caught up {caught_up_s:.1f} s after the restart; slot confirmed "
               f"{format_lsn(max(confirmed))} during the outage, last offset stored before it "
               f"{format_lsn(stored_before_kill)}; load average {load}")
    print(summary)
    assert (lost, phantom, disordered) == (0, 0, 0), summary
