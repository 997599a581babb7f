"""replica.identity.autoset.values on a real PostgreSQL: the identities are set when streaming starts, after the
snapshot (rows read before keep the old identity's events), and a table set to NOTHING by the property is not
refused at the next start. Compared with Debezium in tests/conformance/test_autoset_and_xmin_vs_debezium.py."""

from __future__ import annotations

import logging

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_for


def identity(pg: PostgresCluster, dbname: str, table: str) -> str:
    return str(pg.execute(f"SELECT relreplident::text FROM pg_class WHERE relname = '{table}'", dbname)[0][0])


def test_identities_set_when_streaming_starts(pg: PostgresCluster, dbname: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text); CREATE TABLE n (id int PRIMARY KEY, v text);"
               "CREATE TABLE other (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')", dbname)
    config = make_config(pg, dbname, **{"snapshot.mode": "initial",
                                        "replica.identity.autoset.values": "public.t:FULL,public.n:NOTHING"})
    sink = MemorySink()
    with caplog.at_level(logging.INFO, logger="pgcdc.source.replica_identity"), Running(config, sink=sink):
        assert (identity(pg, dbname, "t"), identity(pg, dbname, "n"), identity(pg, dbname, "other")) == \
            ("f", "n", "d")
        pg.execute("UPDATE t SET v = 'b'; INSERT INTO n VALUES (1, 'x')", dbname)
        wait_for(lambda: len(sink.records) >= 3, 30, "the streamed changes")
    ops = [(r["topic"], r["value"]["payload"]["op"]) for r in sink.records]
    assert ops == [("test.public.t", "r"), ("test.public.t", "u"), ("test.public.n", "c")]
    assert sink.records[1]["value"]["payload"]["before"] == {"id": 1, "v": "a"}
    assert "Replica identity set to FULL for table 'public.t'" in caplog.text
    assert "Replica identity set to NOTHING for table 'public.n'" in caplog.text

    # The next start finds both as asked: nothing to change, and n (NOTHING) is not refused.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pgcdc.source.replica_identity"), Running(config, sink=sink):
        pass
    assert "Replica identity for table 'public.t' is already FULL" in caplog.text
    assert "Replica identity for table 'public.n' is already NOTHING" in caplog.text


def test_a_table_set_to_nothing_otherwise_is_still_refused(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE n (id int PRIMARY KEY); ALTER TABLE n REPLICA IDENTITY NOTHING", dbname)
    config = make_config(pg, dbname, **{"replica.identity.autoset.values": "public.other:FULL"})
    with pytest.raises(RuntimeError, match="REPLICA IDENTITY NOTHING"), Running(config, sink=MemorySink()):
        pass
