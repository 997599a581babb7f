"""The embedding API against a real PostgreSQL: typed events, commit semantics, shutdown, callbacks, asyncio."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pgcdc.embed import Engine, Event
from pgcdc.local import KafkaBroker, PostgresCluster


def props(pg: PostgresCluster, db: str, **extra: str) -> dict[str, Any]:
    return {"topic.prefix": "app", **pg.connection_properties(db), "slot.name": f"s_{db}",
            "publication.name": f"p_{db}", "snapshot.mode": "no_data", "offset.flush.interval.ms": "100",
            **extra}


def take(engine: Engine, n: int, timeout: float = 30) -> list[Event]:
    got: list[Event] = []
    for event in engine.events(timeout=timeout):
        got.append(event)
        if len(got) == n:
            return got
    raise AssertionError(f"wanted {n} events, got {len(got)}: {got}")


def slot_exists(pg: PostgresCluster, db: str) -> bool:
    return bool(pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 's_{db}'"))


def test_events_carry_debezium_json_and_python_values(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, amount numeric(10,3), at timestamp, atz timestamptz, "
               "d date, u uuid, b bytea, tags text[])", dbname)
    u = uuid.uuid4()
    with Engine(props(pg, dbname)) as engine:
        pg.execute(f"INSERT INTO t VALUES (1, 12.345, '2024-02-29 13:14:15.123456', '2024-01-01 00:00:00+02', "
                   f"'1999-12-31', '{u}', '\\x00ff', ARRAY['a','b'])", dbname)
        pg.execute("UPDATE t SET amount = -0.5 WHERE id = 1", dbname)
        pg.execute("DELETE FROM t WHERE id = 1", dbname)
        c, upd, d, tomb = take(engine, 4)
    assert [e.op for e in (c, upd, d)] == ["c", "u", "d"]
    assert (c.kind, tomb.kind, tomb.op, tomb.value) == ("change", "tombstone", None, None)
    assert c.topic == "app.public.t" and (c.schema, c.table) == ("public", "t")
    assert c.after == {"id": 1, "amount": Decimal("12.345"), "at": dt.datetime(2024, 2, 29, 13, 14, 15, 123456),
                       "atz": dt.datetime(2023, 12, 31, 22, 0, tzinfo=dt.UTC), "d": dt.date(1999, 12, 31),
                       "u": u, "b": b"\x00\xff", "tags": ["a", "b"]}
    assert upd.after["amount"] == Decimal("-0.500")
    assert d.before["id"] == 1 and d.after is None
    assert c.key_values == d.key_values == tomb.key_values == {"id": 1}
    # The Debezium JSON is there byte for byte: the value parses to the envelope with its schema.
    assert c.value_json["schema"]["name"] == "app.public.t.Envelope"
    assert c.payload["source"]["lsn"] == c.lsn and c.lsn < upd.lsn < d.lsn
    assert tomb.key == d.key and c.header("__debezium.context.connectorLogicalName") == "app"


def test_committed_events_are_not_redelivered_uncommitted_ones_are(pg: PostgresCluster, dbname: str,
                                                                   tmp_path: Path) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    cfg = props(pg, dbname, **{"offset.storage": "file",
                                "offset.storage.file.filename": str(tmp_path / "offsets.dat")})
    with Engine(cfg) as engine:
        for i in range(1, 4):  # three transactions of two rows
            pg.execute(f"INSERT INTO n VALUES ({2 * i - 1}), ({2 * i})", dbname)
        events = take(engine, 6)
        events[3].commit()  # rows 1-4: transactions one and two
    assert slot_exists(pg, dbname)
    with Engine(cfg) as engine:
        again = take(engine, 2)
        assert [e.after["id"] for e in again] == [5, 6]  # the third transaction, and nothing before it
        assert engine.poll(1.0) is None
        engine.commit()  # batch acknowledgement
    with Engine(cfg) as engine:
        pg.execute("INSERT INTO n VALUES (7)", dbname)
        assert [e.after["id"] for e in take(engine, 1)] == [7]


def test_half_committed_transaction_comes_again_whole(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    cfg = props(pg, dbname)  # offsets in memory: the slot's confirmed LSN is what carries over
    with Engine(cfg) as engine:
        pg.execute("INSERT INTO n VALUES (1)", dbname)
        pg.execute("INSERT INTO n VALUES (2), (3)", dbname)
        events = take(engine, 3)
        events[1].commit()  # the second transaction only half
    with Engine(cfg) as engine:
        assert [e.after["id"] for e in take(engine, 2)] == [2, 3]


def test_stop_from_another_thread_ends_iteration(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    engine = Engine(props(pg, dbname)).start()
    seen: list[Event] = []
    done = threading.Event()

    def consume() -> None:
        for event in engine.events():
            seen.append(event)
            event.commit()
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    pg.execute("INSERT INTO n VALUES (1)", dbname)
    deadline = 300
    while not seen and deadline:
        done.wait(0.1)
        deadline -= 1
    stopper = threading.Thread(target=engine.stop)
    stopper.start()
    assert done.wait(30), "events() did not end after stop()"
    stopper.join(60)
    assert [e.after["id"] for e in seen] == [1]
    assert not engine.running


def test_on_event_callback_commits_when_it_returns(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    got: list[int] = []
    ready = threading.Event()

    def on_event(event: Event) -> None:
        got.append(event.after["id"])
        if len(got) == 2:
            ready.set()

    with Engine(props(pg, dbname), on_event=on_event):
        pg.execute("INSERT INTO n VALUES (1)", dbname)
        pg.execute("INSERT INTO n VALUES (2)", dbname)
        assert ready.wait(30), got
    with Engine(props(pg, dbname)) as engine:
        assert engine.poll(1.0) is None  # both were committed by the callback's return
    assert got == [1, 2]


def test_async_iteration(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)

    async def main() -> list[int]:
        engine = Engine(props(pg, dbname))
        ids: list[int] = []
        async for event in engine.aevents():
            if not ids:
                await asyncio.to_thread(pg.execute, "INSERT INTO n VALUES (2)", dbname)
            ids.append(event.after["id"])
            event.commit()
            if len(ids) == 2:
                await asyncio.to_thread(engine.stop)
        return ids

    async def writer() -> None:
        await asyncio.sleep(1)
        await asyncio.to_thread(pg.execute, "INSERT INTO n VALUES (1)", dbname)

    async def both() -> list[int]:
        ids, _ = await asyncio.gather(main(), writer())
        return ids

    assert asyncio.run(asyncio.wait_for(both(), 60)) == [1, 2]


def test_snapshot_not_committed_leaves_nothing_behind(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY); INSERT INTO n SELECT generate_series(1, 5)", dbname)
    cfg = props(pg, dbname, **{"snapshot.mode": "initial", "offset.storage": "file",
                                "offset.storage.file.filename": str(tmp_path / "offsets.dat")})
    with Engine(cfg) as engine:
        first = take(engine, 5)
        assert [e.op for e in first] == ["r"] * 5
        assert [e.source["snapshot"] for e in first] == ["first", "true", "true", "true", "last"]
        first[2].commit()
    # The snapshot never became durable: the next engine snapshots again, from a fresh slot.
    with Engine(cfg) as engine:
        again = take(engine, 5)
        assert [e.after["id"] for e in again] == [1, 2, 3, 4, 5]
        again[-1].commit()
        pg.execute("INSERT INTO n VALUES (6)", dbname)
        created = take(engine, 1)[0]
        assert created.op == "c"
        created.commit()
    with Engine(cfg) as engine:  # snapshot committed: streaming resumes, no second snapshot
        assert engine.poll(1.0) is None


def test_bad_config_is_one_clear_error(pg: PostgresCluster, dbname: str) -> None:
    from pgcdc.errors import PgcdcError

    with pytest.raises(PgcdcError, match="decimal.handling.mode"):
        Engine(props(pg, dbname, **{"decimal.handling.mode": "exact"}))


def test_custom_sink_is_flushed_before_each_offset(pg: PostgresCluster, dbname: str) -> None:
    from pgcdc.offsets.memory import MemoryOffsetStore

    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    offsets = MemoryOffsetStore()

    class ListSink:
        def __init__(self) -> None:
            self.sent: list[tuple[str, bytes | None]] = []
            self.flushed_at: list[tuple[int, int]] = []  # (records sent, offsets stored) at each flush

        def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
                 partition: int | None = None) -> None:
            self.sent.append((topic, value))

        def flush(self) -> None:
            self.flushed_at.append((len(self.sent), len(offsets.history)))

        def close(self) -> None:
            pass

    sink = ListSink()
    with Engine(props(pg, dbname), sink=sink, offsets=offsets) as engine:
        with pytest.raises(RuntimeError, match="not to events"):
            next(engine.events())
        pg.execute("INSERT INTO n VALUES (1)", dbname)
        deadline = 300
        while not offsets.history and deadline:
            threading.Event().wait(0.1)
            deadline -= 1
    assert [t for t, _ in sink.sent] == ["app.public.n"]
    assert offsets.history, "no offset stored"
    # Every stored offset was preceded by a flush that covered the record.
    assert sink.flushed_at[0] == (1, 0)


def test_offsets_in_kafka(pg: PostgresCluster, dbname: str, broker: KafkaBroker) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY)", dbname)
    cfg = props(pg, dbname, **{"offset.storage": "kafka", "bootstrap.servers": broker.bootstrap_servers,
                                "offset.storage.topic": f"offsets_{dbname}", "offset.storage.partitions": "1"})
    with Engine(cfg) as engine:
        pg.execute("INSERT INTO n VALUES (1)", dbname)
        pg.execute("INSERT INTO n VALUES (2)", dbname)
        first, _second = take(engine, 2)
        first.commit()
    with Engine(cfg) as engine:
        assert [e.after["id"] for e in take(engine, 1)] == [2]
