"""Transforms in a running connector: a record a transform drops or reroutes still moves the stored offset and
the slot's confirmed position past its transaction; a transform failing under errors.tolerance=none stops the
connector with one line."""

from __future__ import annotations

import pytest

from pgcdc.errors import PgcdcError
from pgcdc.local import PostgresCluster
from pgcdc.lsn import parse_lsn
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, commit_after, make_config, wait_for

K = "org.apache.kafka.connect.transforms."


def confirmed(pg: PostgresCluster, slot: str) -> int:
    return parse_lsn(pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                f"WHERE slot_name = '{slot}'")[0][0])


@pytest.mark.parametrize("chain", [
    {"transforms": "drop", "transforms.drop.type": K + "Filter"},
    {"transforms": "route", "transforms.route.type": K + "RegexRouter", "transforms.route.regex": ".*",
     "transforms.route.replacement": "elsewhere"},
    # Compiled: the capture hands the rows alone to the chain (capture/rows.py), never writing the envelopes.
    {"transforms": "unwrap,route", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
     "transforms.route.type": K + "RegexRouter", "transforms.route.regex": ".*",
     "transforms.route.replacement": "elsewhere"},
])
def test_dropped_or_rerouted_records_still_move_the_position(pg: PostgresCluster, dbname: str,
                                                            chain: dict[str, str]) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, **chain)
    slot = f"slot_{dbname}"
    sink = MemorySink()
    with Running(config, sink=sink) as running:
        inside = commit_after(pg, dbname, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
        wait_for(lambda: running.connector.checkpointer is not None
                 and running.connector.checkpointer.stored is not None
                 and running.connector.checkpointer.stored.end_lsn > inside, 30, "an offset past both inserts")
        wait_for(lambda: confirmed(pg, slot) > inside, 30, "the slot confirmed past the inserts")
    if chain["transforms"] == "drop":
        assert sink.records == []
    else:
        assert [r["topic"] for r in sink.records] == ["elsewhere", "elsewhere"]
    if chain["transforms"] == "unwrap,route":
        assert [r["value"]["payload"] for r in sink.records] == [{"id": 1}, {"id": 2}]
        capture = running.connector.capture
        assert capture is not None
        senders = list(capture._row_senders.values())  # table t's: the rows went alone
        assert len(senders) == 1 and senders[0] is not None


def explode(record: object) -> object:
    raise RuntimeError("boom")


def test_a_failing_transform_stops_the_connector_with_one_line(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, transforms="x", **{"transforms.x.type": f"{__name__}:explode"})
    connector = Connector(config, sink=MemorySink())
    import threading

    errors: list[BaseException] = []

    def run() -> None:
        try:
            connector.run()
        except BaseException as exc:
            errors.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert connector.ready.wait(60)
    pg.execute("INSERT INTO t VALUES (1)", dbname)
    thread.join(60)
    if thread.is_alive():
        connector.stop()
        thread.join(30)
    assert errors and isinstance(errors[0], PgcdcError)
    assert str(errors[0]) == (f"transforms.x ({__name__}:explode) failed on a record for topic 'test.public.t': "
                              "boom (errors.tolerance=none)")
