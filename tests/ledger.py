"""Checking every committed change against Kafka, for the fault tests (tests/slow/test_broker_outage.py,
tests/slow/test_cluster_faults.py).

What was committed comes from PostgreSQL itself: a second slot with the test_decoding plugin, created before the
writer starts, read once at the end. Lost = a committed change no record carries; phantom = a record for no
committed change (a rolled-back one); duplicates = records repeated after a restart; out of order = a change
that reached Kafka for the first time before an earlier change of the same key had. A hole in a partition's
offsets is counted and shown apart.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import orjson
from confluent_kafka import Consumer, KafkaError, TopicPartition

from pgcdc.local import PostgresCluster
from pgcdc.lsn import parse_lsn
from tests.harness import payload, read_topic
from tests.slow.test_kill_loop import TABLES, fold

# test_decoding's text for one row change (contrib/test_decoding): a key change names the old key first.
CHANGE = re.compile(r"table public\.(\w+): (INSERT|UPDATE|DELETE): "
                    r"(?:old-key: id\[integer\]:(-?\d+) new-tuple: )?id\[integer\]:(-?\d+)")

Event = tuple[int, str, int]  # (lsn, op, id) of one change event, as pgcdc emits it


def committed_events(pg: PostgresCluster, dbname: str, slot: str,
                     xids: dict[int, int] | None = None) -> dict[str, list[Event]]:
    """Per table, the change events every committed change must give, in commit order: a primary-key change is
    a delete of the old key and a create of the new one (pgcdc/capture/changes.py, as Debezium). `xids` is
    filled with each change's transaction id, by LSN."""
    out: dict[str, list[Event]] = defaultdict(list)
    xid = 0
    for lsn_text, data in pg.execute(f"SELECT lsn, data FROM pg_logical_slot_get_changes('{slot}', NULL, NULL, "
                                     f"'include-xids', '1')", dbname):
        m = CHANGE.match(data)
        if m is None:
            assert data.startswith(("BEGIN", "COMMIT")), data
            if data.startswith("BEGIN"):
                xid = int(data.split()[1])
            continue
        if xids is not None:
            xids[parse_lsn(str(lsn_text))] = xid
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
    """(lost, phantom, duplicates, out of order): a key's records share a partition, so their order in `got` is
    the order a consumer reads them."""
    got_set, want = set(got), set(expected)
    first_seen: dict[int, list[int]] = defaultdict(list)
    seen: set[Event] = set()
    for e in got:
        if e not in seen:
            seen.add(e)
            first_seen[e[2]].append(e[0])
    out_of_order = sum(b < a for lsns in first_seen.values() for a, b in pairwise(lsns))
    return len(want - got_set), len(got_set - want), len(got) - len(got_set), out_of_order


def stored_offsets(bootstrap: str, topic: str, timeout: float = 30) -> list[tuple[int, dict[str, Any]]]:
    """(record timestamp in ms, offset value) of every record in the offsets topic, in order."""
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


@dataclass
class Tally:
    changes: int = 0  # change events committed
    records: int = 0
    lost: int = 0
    phantom: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    holes: int = 0
    state_differs: int = 0  # rows whose folded Kafka state differs from the table's final state
    lost_events: list[tuple[str, Event]] = field(default_factory=list)  # (table, event), for the report
    lost_xids: dict[int, int] = field(default_factory=dict)  # transaction id -> events lost, for the report

    def __str__(self) -> str:
        return (f"{self.changes} change events committed, {self.records} records, lost {self.lost}, phantom "
                f"{self.phantom}, {self.duplicates} duplicates, out of order {self.out_of_order}, offset holes "
                f"{self.holes}, {self.state_differs} rows whose folded state differs from the table")


def tally(pg: PostgresCluster, dbname: str, oracle_slot: str, bootstrap: str) -> Tally:
    """Every table of tests/slow/test_kill_loop.py's writer against what its topic holds, and each topic folded
    (last value per key) against the table's final state. Drops the oracle slot."""
    xids: dict[int, int] = {}
    committed = committed_events(pg, dbname, oracle_slot, xids)
    pg.execute(f"SELECT pg_drop_replication_slot('{oracle_slot}')", dbname)
    t = Tally()
    for table in TABLES:
        records = read_topic(bootstrap, f"{dbname}.public.{table}")
        for part in {r["partition"] for r in records}:
            offsets = [-1] + [r["offset"] for r in records if r["partition"] == part]
            t.holes += sum(b - a - 1 for a, b in pairwise(offsets))
        got = events_in(records)
        lost_here = sorted(set(committed[table]) - set(got))
        t.lost_events += [(table, e) for e in lost_here]
        for e in lost_here:
            t.lost_xids[xids[e[0]]] = t.lost_xids.get(xids[e[0]], 0) + 1
        lost, phantom, dupes, disordered = compare(got, committed[table])
        t.lost, t.phantom, t.duplicates, t.out_of_order = (
            t.lost + lost, t.phantom + phantom, t.duplicates + dupes, t.out_of_order + disordered)
        state, _ = fold(records)
        final = dict(pg.execute(f"SELECT id, v FROM {table}", dbname))
        t.state_differs += sum(state.get(k) != final.get(k) for k in state.keys() | final.keys())
        t.records += len(records)
        t.changes += len(committed[table])
    return t
