"""Large transactions: emitted only at commit, whole, never when aborted.

PostgreSQL 14+ streams them before commit (protocol 2+, streaming=on); 11 to 13 have no streaming in pgoutput
(protocol 1): the server spills them to disk and decodes them at commit. The events are the same.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records
from tests.integration.test_durability import kafka_config, start_cli, wait_for_ids, wait_slot_active


@pytest.fixture(scope="module")
def small_mem_pg() -> Iterator[PostgresCluster]:
    """A server that streams (14+) or spills to disk (13) any transaction over 64 kB of decoded changes; 11/12
    has no such setting and spills a transaction after 4096 changes."""
    with PostgresCluster() as cluster:
        if cluster.major >= 13:
            cluster.execute("ALTER SYSTEM SET logical_decoding_work_mem = '64kB'")
            cluster.execute("SELECT pg_reload_conf()")
        yield cluster


@pytest.fixture
def db(small_mem_pg: PostgresCluster) -> str:
    import uuid

    name = f"big_{uuid.uuid4().hex[:8]}"
    small_mem_pg.create_database(name)
    small_mem_pg.execute("CREATE TABLE big (id int PRIMARY KEY, pad text)", name)
    return name


def streamed(pg: PostgresCluster, slot: str) -> int:
    rows = pg.execute(f"SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = '{slot}'")
    return int(rows[0][0]) if rows else 0


def start_options(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The options of each START_REPLICATION pgcdc sent, as it logged them."""
    return [r.getMessage().rsplit(" (", 1)[1] for r in caplog.records
            if r.name == "pgcdc.source.stream" and r.getMessage().startswith("streaming from slot")]


def test_committed_big_transaction_arrives_whole_at_commit(small_mem_pg: PostgresCluster, db: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pgcdc.source.stream")
    pg = small_mem_pg
    sink = MemorySink()
    config = make_config(pg, db)
    with Running(config, sink=sink):
        with psycopg.connect(pg.dsn(db)) as conn:
            conn.execute("INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 3000) g")
            conn.execute("SAVEPOINT s1")
            conn.execute("INSERT INTO big SELECT g, 'rolled back' FROM generate_series(3001, 4000) g")
            conn.execute("ROLLBACK TO SAVEPOINT s1")
            conn.execute("INSERT INTO big SELECT g, 'kept' FROM generate_series(4001, 4500) g")
            # A small transaction that commits while the big one is still open comes out first.
            pg.execute("INSERT INTO big VALUES (0, 'small')", db)
            wait_records(sink, 1)
            assert len(sink.records) == 1  # nothing of the open transaction was emitted
            conn.commit()
        records = wait_records(sink, 3501)
    ids = [payload(r)["after"]["id"] for r in records]
    assert ids == [0, *range(1, 3001), *range(4001, 4501)]
    assert len({payload(r)["source"]["txId"] for r in records[1:]}) == 1
    lsns = [payload(r)["source"]["lsn"] for r in records[1:]]
    assert lsns == sorted(lsns)
    options = start_options(caplog)
    assert options, "pgcdc logged no START_REPLICATION"
    if pg.major >= 14:
        assert all("streaming 'on'" in o for o in options)
        assert streamed(pg, config.slot_name) >= 1, "the server did not stream the transaction"
    else:  # protocol 1, nothing to ask for: the transaction came decoded at commit
        assert all("proto_version '1'" in o and "streaming" not in o for o in options), options


def test_aborted_big_transaction_emits_nothing(small_mem_pg: PostgresCluster, db: str) -> None:
    pg = small_mem_pg
    sink = MemorySink()
    config = make_config(pg, db)
    with Running(config, sink=sink):
        with psycopg.connect(pg.dsn(db)) as conn:
            conn.execute("INSERT INTO big SELECT g, repeat('y', 100) FROM generate_series(1, 3000) g")
            conn.rollback()
        pg.execute("INSERT INTO big VALUES (-1, 'after')", db)
        records = wait_records(sink, 1)
    assert [payload(r)["after"]["id"] for r in records] == [-1]
    # (Whether the server streamed it depends on the version: newer ones can skip decoding an aborted
    # transaction altogether. Either way nothing of it may be emitted.)


def test_two_big_transactions_interleaved(small_mem_pg: PostgresCluster, db: str) -> None:
    pg = small_mem_pg
    sink = MemorySink()
    with Running(make_config(pg, db), sink=sink):
        a, b = psycopg.connect(pg.dsn(db)), psycopg.connect(pg.dsn(db))
        try:
            for start in range(0, 2000, 500):
                a.execute(f"INSERT INTO big SELECT g, 'a' FROM generate_series({start + 1}, {start + 500}) g")
                b.execute(f"INSERT INTO big SELECT g, 'b' FROM generate_series({start + 10001}, {start + 10500}) g")
            b.commit()
            a.commit()
        finally:
            a.close()
            b.close()
        records = wait_records(sink, 4000)
    pads = [payload(r)["after"]["pad"] for r in records]
    assert pads == ["b"] * 2000 + ["a"] * 2000  # commit order, each transaction whole


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
def test_killed_inside_a_streamed_transaction(small_mem_pg: PostgresCluster, db: str, broker: KafkaBroker,
                                              tmp_path: Path, outcome: str) -> None:
    """SIGKILL while the server is streaming an open transaction to pgcdc: nothing of it was emitted or
    confirmed, so after the restart the server sends it again and it arrives whole, once (or not at all when
    it rolls back). The dead process's spill folder is swept by the next start."""
    pg = small_mem_pg
    spill = tmp_path / "spill"
    spill.mkdir()
    cfg = kafka_config(pg, db, broker)
    env = {"TMPDIR": str(spill)}
    proc = start_cli(tmp_path, cfg, env)
    topic = f"{db}.public.big"
    try:
        wait_slot_active(pg, cfg["slot.name"])
        with psycopg.connect(pg.dsn(db)) as conn:
            conn.execute("INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 3000) g")
            if pg.major >= 14:  # streamed: pgcdc holds blocks of the open transaction in its spill file
                wait_for(lambda: any(f.stat().st_size > 0 for f in spill.glob("pgcdc-stream-*/*.spill")), 60,
                         "a streamed block of the open transaction in pgcdc's spill file")
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            dead = list(spill.glob("pgcdc-stream-*"))
            conn.execute("INSERT INTO big SELECT g, 'after the kill' FROM generate_series(3001, 3500) g")
            if outcome == "commit":
                conn.commit()
            else:
                conn.rollback()
        pg.execute("INSERT INTO big VALUES (0, 'last')", db)
        proc = start_cli(tmp_path, cfg, env)
        expected = [*range(1, 3501), 0] if outcome == "commit" else [0]
        got = wait_for_ids(broker, topic, set(expected))
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, (tmp_path / "pgcdc.log").read_text()[-2000:]
    assert sorted(got) == sorted(expected)  # each once (the topic's partitions interleave in the read)
    if pg.major >= 14:
        assert dead and not any(d.exists() for d in dead), "the killed process's spill folder was not swept"
