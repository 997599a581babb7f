"""Initial snapshot inside the slot's exported snapshot, then streaming with nothing lost or repeated."""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg.types.json import Jsonb

from pgcdc.local import PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records


def test_initial_snapshot_markers_then_streaming(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id int PRIMARY KEY);"
               "CREATE TABLE empty_t (id int PRIMARY KEY);"
               "INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, 'z'); INSERT INTO b VALUES (10), (11)", dbname)
    sink = MemorySink()
    offsets = MemoryOffsetStore()
    with Running(make_config(pg, dbname, **{"snapshot.mode": "initial"}), sink=sink, offsets=offsets):
        pg.execute("INSERT INTO b VALUES (12)", dbname)
        records = wait_records(sink, 6)
    snap = [payload(r) for r in records[:5]]
    assert [(p["op"], p["source"]["table"], p["after"]["id"], p["source"]["snapshot"]) for p in snap] == [
        ("r", "a", 1, "first"), ("r", "a", 2, "true"), ("r", "a", 3, "last_in_data_collection"),
        ("r", "b", 10, "first_in_data_collection"), ("r", "b", 11, "last"),
    ]  # `last` on the last record even though an empty table follows, as Debezium (conformance test_snapshot_modes)
    stream = payload(records[5])
    assert (stream["op"], stream["after"], stream["source"]["snapshot"]) == ("c", {"id": 12}, "false")
    # The first offset stored with the snapshot completed is its last record's; none after it goes back. (An
    # offset may be stored mid-snapshot, every offset.flush.interval.ms of 200 ms: snapshot_completed false.)
    done = next(i for i, o in enumerate(offsets.history) if o.get("snapshot_completed"))
    assert offsets.history[done]["last_snapshot_record"] is True
    assert all(o.get("snapshot_completed") is not False for o in offsets.history[done:])  # (streaming: no key)


def test_snapshot_under_concurrent_writes_is_exact(pg: PostgresCluster, dbname: str) -> None:
    """Fold snapshot + stream into a table state: it must equal the final database state."""
    pg.execute("CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL);"
               "INSERT INTO c SELECT g, 0 FROM generate_series(1, 2000) g", dbname)
    stop = threading.Event()

    def write() -> None:
        with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
            i = 0
            while not stop.is_set():
                i += 1
                conn.execute("UPDATE c SET n = n + 1 WHERE id = %s", (i % 2000 + 1,))
                conn.execute("INSERT INTO c VALUES (%s, 0)", (2000 + i,))
                if i % 3 == 0:
                    conn.execute("DELETE FROM c WHERE id = %s", (i % 1000 + 1,))

    sink = MemorySink()
    writer = threading.Thread(target=write)
    writer.start()
    try:
        with Running(make_config(pg, dbname, **{"snapshot.mode": "initial"}), sink=sink):
            wait_for(lambda: any(payload(r)["op"] != "r" for r in sink.records if r["value"]), 60, "streaming")
            stop.set()
            writer.join()
            final = dict(pg.execute("SELECT id, n FROM c", dbname))
            marker = pg.execute("INSERT INTO c VALUES (-1, -1) RETURNING id", dbname)
            assert marker == [(-1,)]
            wait_for(lambda: any((payload(r) or {}).get("after") == {"id": -1, "n": -1} for r in sink.records
                                 if r["value"]), 60, "the marker row")
    finally:
        stop.set()
        writer.join()
    state: dict[int, int] = {}
    for r in sink.records:
        if r["value"] is None:
            continue
        p = payload(r)
        if p["op"] in ("r", "c", "u"):
            state[p["after"]["id"]] = p["after"]["n"]
        elif p["op"] == "d":
            state.pop(p["before"]["id"], None)
    state.pop(-1)
    assert state == final


# Values COPY's text format escapes (tab, newline, CR, backslash, backspace, form feed, vertical tab), the
# literal text `\N` next to a real null, and multi-byte characters.
ESCAPED = ["a\tb\nc\rd\\e", None, "\\N", "\b\f\x0b\x01", "ünï €", "", "\\\\N", "x\\"]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_snapshot_values_with_copy_escapes_equal_streamed_ones(pg: PostgresCluster, dbname: str, threads: str) -> None:
    """The snapshot reads rows through COPY's text format, streaming through pgoutput: the same values must
    make the same `after`."""
    pg.execute("CREATE TABLE e (id int PRIMARY KEY, v text, j jsonb)", dbname)
    rows = [(i, v, Jsonb({"k": v})) for i, v in enumerate(ESCAPED, 1)]
    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
        conn.cursor().executemany("INSERT INTO e VALUES (%s, %s, %s)", rows)
    sink = MemorySink()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial", "snapshot.max.threads": threads})
    with Running(config, sink=sink):
        wait_records(sink, len(rows))
        with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
            conn.cursor().executemany("INSERT INTO e VALUES (%s, %s, %s)", [(i + 100, v, j) for i, v, j in rows])
        records = wait_records(sink, 2 * len(rows))
    after = {(p["op"], p["after"]["id"] % 100): p["after"] for p in map(payload, records)}
    for i, v in enumerate(ESCAPED, 1):
        assert after[("r", i)]["v"] == v
        assert {**after[("r", i)], "id": 0} == {**after[("c", i)], "id": 0}
