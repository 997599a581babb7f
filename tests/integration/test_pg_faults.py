"""PostgreSQL faults mid-stream: the walsender terminated under a writer, REPLICA IDENTITY changed, and the
publication altered. (Server restarts, fast and immediate, and a slot dropped underneath are in
test_operations.py.)"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for
from tests.integration.test_durability import writer


def events(sink: MemorySink, table: str) -> list[dict[str, Any]]:
    """Payloads of the change events of one table (tombstones left out), in emission order."""
    return [payload(r) for r in sink.records if r["topic"] == f"test.public.{table}" and r["value"] is not None]


def walsender_pid(pg: PostgresCluster, slot: str) -> int | None:
    rows = pg.execute(f"SELECT active_pid FROM pg_replication_slots WHERE slot_name = '{slot}' AND active")
    return rows[0][0] if rows else None


def test_walsender_terminated_mid_stream_resumes_without_loss(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE w (id int PRIMARY KEY)", dbname)
    slot = f"slot_{dbname}"
    config = make_config(pg, dbname, **{"retriable.restart.connector.wait.ms": "200"})

    class CountingSink(MemorySink):
        closes = 0

        def close(self) -> None:
            self.closes += 1

    sink = CountingSink()
    stop, committed = threading.Event(), []
    terminated = []
    with Running(config, sink=sink) as running:
        w = threading.Thread(target=writer, args=(pg, dbname, stop, committed))
        w.start()
        try:
            for round_ in range(3):  # three kills while rows keep committing
                wait_for(lambda r=round_: len(committed) > 200 * (r + 1), 30, "more writes")
                pid = walsender_pid(pg, slot)
                assert pid is not None, running.connector.health.__dict__
                assert pg.execute(f"SELECT pg_terminate_backend({pid})") == [(True,)]
                terminated.append(pid)
                wait_for(lambda p=pid: walsender_pid(pg, slot) not in (None, p), 30, "a new walsender",
                         lambda: running.connector.health.__dict__)
            wait_for(lambda: len(committed) > 800, 30, "writes after the last kill")
        finally:
            stop.set()
            w.join()
        expected = set(committed)
        wait_for(lambda: {e["after"]["id"] for e in events(sink, "w")} >= expected, 60, "every committed row",
                 lambda: sorted(expected - {e["after"]["id"] for e in events(sink, "w")})[:20])
        assert running.connector.health.restarts >= 3
        assert running.connector.health.state == "streaming"
        assert sink.closes == 0  # a sink handed to the Connector serves every restart...
    assert sink.closes == 1  # ...and is closed once, when it stops
    counts = Counter(e["after"]["id"] for e in events(sink, "w"))
    assert set(counts) == expected  # nothing lost, nothing invented
    duplicates = sum(n - 1 for n in counts.values())
    print(f"walsender terminated 3 times: {len(expected)} rows, {duplicates} duplicates")


def test_replica_identity_changed_mid_stream(pg: PostgresCluster, dbname: str) -> None:
    """Each UPDATE/DELETE carries the old row PostgreSQL logged under the identity in force when it ran:
    DEFAULT logs the old primary key only when it changes (a delete: the key), FULL the whole old row,
    USING INDEX the index's columns (a unique index on `code` here). Columns PostgreSQL did not log are
    absent: null, or the type's zero value for a NOT NULL column, as Debezium fills them (compared with
    Debezium in tests/conformance/test_debezium_streaming.py, replica_identity_index)."""
    pg.execute("CREATE TABLE ri (id int PRIMARY KEY, code text NOT NULL, note text); "
               "CREATE UNIQUE INDEX ri_code ON ri (code); "
               "INSERT INTO ri SELECT i, 'c' || i, 'n' || i FROM generate_series(1, 9) i", dbname)
    # (identity, statement, the events it gives: (op, the old columns PostgreSQL logged or None for no before))
    steps: list[tuple[str, str, list[tuple[str, dict[str, Any] | None]]]] = [
        ("DEFAULT", "UPDATE ri SET note = 'x1' WHERE id = 1", [("u", None)]),
        ("DEFAULT", "DELETE FROM ri WHERE id = 2", [("d", {"id": 2})]),
        ("FULL", "UPDATE ri SET note = 'x3' WHERE id = 3", [("u", {"id": 3, "code": "c3", "note": "n3"})]),
        ("FULL", "DELETE FROM ri WHERE id = 4", [("d", {"id": 4, "code": "c4", "note": "n4"})]),
        ("USING INDEX ri_code", "UPDATE ri SET note = 'x5' WHERE id = 5", [("u", None)]),
        # The identity (code) changed: the old key differs from the new one, so a delete and a create.
        ("USING INDEX ri_code", "UPDATE ri SET code = 'k6' WHERE id = 6", [("d", {"code": "c6"}), ("c", None)]),
        ("USING INDEX ri_code", "DELETE FROM ri WHERE id = 7", [("d", {"code": "c7"})]),
        ("DEFAULT", "UPDATE ri SET note = 'x8' WHERE id = 8", [("u", None)]),
        ("DEFAULT", "DELETE FROM ri WHERE id = 9", [("d", {"id": 9})]),
    ]
    expected = [e for _, _, evs in steps for e in evs]
    sink = MemorySink()
    with Running(make_config(pg, dbname), sink=sink):
        for identity, statement, _ in steps:
            pg.execute(f"ALTER TABLE ri REPLICA IDENTITY {identity}; {statement}", dbname)
        wait_for(lambda: len(events(sink, "ri")) >= len(expected), 30, "every change", lambda: events(sink, "ri"))
    got = events(sink, "ri")
    assert [e["op"] for e in got] == [op for op, _ in expected]
    absent = {"id": 0, "code": "", "note": None}  # NOT NULL int, NOT NULL text, nullable text
    for event, (op, logged) in zip(got, expected):
        want = None if logged is None else {**absent, **logged} if len(logged) < 3 else logged
        assert event["before"] == want, (op, event)
    # The after image is whole in every case: PostgreSQL logs the full new row whatever the identity.
    assert got[0]["after"] == {"id": 1, "code": "c1", "note": "x1"}
    assert got[6]["after"] == {"id": 6, "code": "k6", "note": "n6"}


def test_publication_altered_mid_stream(pg: PostgresCluster, dbname: str) -> None:
    """pgoutput reads publication membership from the catalog as of each change (the walsender's relation
    cache is invalidated by ALTER PUBLICATION): a table dropped from the publication stops producing events
    with the first change that commits after the ALTER, a table added starts with the first change after it;
    nothing is replayed for the time a table was outside the publication."""
    pub = f"pub_{dbname}"
    pg.execute(f"CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); "
               f"CREATE TABLE c (id int PRIMARY KEY); CREATE PUBLICATION {pub} FOR TABLE a, b", dbname)
    sink = MemorySink()
    config = make_config(pg, dbname, **{"publication.autocreate.mode": "disabled"})
    with Running(config, sink=sink):
        pg.execute("INSERT INTO a VALUES (1); INSERT INTO b VALUES (1); INSERT INTO c VALUES (1)", dbname)
        pg.execute(f"ALTER PUBLICATION {pub} DROP TABLE b", dbname)
        pg.execute("INSERT INTO a VALUES (2); INSERT INTO b VALUES (2); INSERT INTO c VALUES (2)", dbname)
        pg.execute(f"ALTER PUBLICATION {pub} ADD TABLE c", dbname)
        pg.execute("INSERT INTO a VALUES (3); INSERT INTO b VALUES (3); INSERT INTO c VALUES (3)", dbname)
        pg.execute(f"ALTER PUBLICATION {pub} ADD TABLE b", dbname)
        pg.execute("INSERT INTO a VALUES (4); INSERT INTO b VALUES (4); INSERT INTO c VALUES (4)", dbname)
        # The last transaction writes a, b then c: its last event (c's row 4) comes after a's and b's.
        wait_for(lambda: [e["after"]["id"] for e in events(sink, "c")][-1:] == [4], 30, "the last transaction",
                 lambda: [(r["topic"], payload(r)) for r in sink.records])
    ids = {t: [e["after"]["id"] for e in events(sink, t)] for t in ("a", "b", "c")}
    assert ids == {"a": [1, 2, 3, 4], "b": [1, 4], "c": [3, 4]}
    # The publication pgcdc was told to use was read, not changed: it is as the ALTERs left it.
    assert sorted(pg.execute(f"SELECT tablename FROM pg_publication_tables WHERE pubname = '{pub}'", dbname)) == [
        ("a",), ("b",), ("c",)]
