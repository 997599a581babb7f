"""Debezium 3.6 properties that change what is captured or emitted, compared with the real Debezium in one run:
publish.via.partition.root (partitioned table, snapshot and streaming), skip.messages.without.change (REPLICA
IDENTITY FULL and DEFAULT, with excluded and truncated columns), extended.headers.enabled=false,
include.schema.comments (COMMENT ON before and while streaming), guardrail.collections.max exceeded with the
default action (warn) and streaming.delay.ms (streaming still happens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgcdc.errors import PgcdcError
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.conformance.compare import assert_same
from tests.conformance.oracle import run_oracle
from tests.conformance.test_debezium_streaming import run_both
from tests.harness import make_config

SETUP = (
    "CREATE TABLE pt (id int, k int, v text, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);"
    "CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10);"
    "CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (10) TO (20);"
    "INSERT INTO pt VALUES (1, 1, 'a'), (2, 15, 'b');"
    "CREATE TABLE g (id int PRIMARY KEY, keep int, noise int, note text);"
    "ALTER TABLE g REPLICA IDENTITY FULL;"
    "CREATE TABLE h (id int PRIMARY KEY, keep int, noise int);"
    "INSERT INTO g VALUES (1, 10, 100, 'abcd'); INSERT INTO h VALUES (1, 10, 100);"
    "COMMENT ON TABLE g IS 'the g table'; COMMENT ON COLUMN g.id IS 'key column';"
    "COMMENT ON COLUMN g.keep IS 'kept column'"
)
WORKLOAD = [
    "INSERT INTO pt VALUES (3, 2, 'c'), (4, 12, 'd')",
    "UPDATE pt SET v = 'cc' WHERE id = 3",
    "UPDATE pt SET k = 13 WHERE id = 3",  # to the other partition
    "DELETE FROM pt WHERE id = 4",
    "UPDATE g SET noise = 101 WHERE id = 1",  # only an excluded column changes
    "UPDATE g SET note = 'abce' WHERE id = 1",  # a change the truncation hides
    "UPDATE g SET keep = 11, noise = 102 WHERE id = 1",
    "UPDATE h SET noise = 101 WHERE id = 1",  # no old row to compare with
    "UPDATE h SET keep = 11 WHERE id = 1",
    "UPDATE g SET id = 2 WHERE id = 1",
    "COMMENT ON COLUMN g.keep IS 'changed comment'",
    "ALTER TABLE g ADD COLUMN extra text",
    "COMMENT ON COLUMN g.extra IS 'new column'",
    "UPDATE g SET extra = 'x' WHERE id = 2",
    "UPDATE g SET noise = 103 WHERE id = 2",
]
PROPS = {
    "publish.via.partition.root": "true",
    "skip.messages.without.change": "true",
    "column.exclude.list": "public.g.noise,public.h.noise",
    "column.truncate.to.3.chars": "public.g.note",
    "extended.headers.enabled": "false",
    "include.schema.comments": "true",
    "guardrail.collections.max": "2",
    "streaming.delay.ms": "1500",
}


def test_effect_properties_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, PROPS, WORKLOAD, snapshot=True)
    assert_same("effect properties", ours, theirs, snapshot=True)
    text = json.dumps(theirs)
    # What Debezium was measured to do: root and partitions snapshotted, streamed changes on the root's topic,
    # no comments anywhere, no context headers, the updates of g that change no captured column dropped.
    assert [r["topic"][10:] for r in theirs if r["value"] and r["value"]["payload"]["op"] == "r"] == [
        "public.g", "public.h", "public.pt", "public.pt", "public.pt_1", "public.pt_2"]
    assert {r["topic"] for r in theirs if r["value"] and r["value"]["payload"]["op"] != "r"} == {
        "dbserver1.public.pt", "dbserver1.public.g", "dbserver1.public.h"}
    assert "comment" not in text and '"doc"' not in text and "__debezium.context" not in text
    assert sum(1 for r in theirs if r["topic"].endswith(".g") and r["value"]
               and r["value"]["payload"]["op"] == "u") == 2
    assert sum(1 for r in theirs if r["topic"].endswith(".h") and r["value"]
               and r["value"]["payload"]["op"] == "u") == 2


def test_guardrail_fail_stops_at_start_like_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """guardrail.collections.limit.action=fail: Debezium stops at start (partitions count as tables); so does
    pgcdc, with the same sentence, before creating the publication or the slot."""
    pg.execute("CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int, k int, PRIMARY KEY (id, k)) PARTITION BY "
               "RANGE (k); CREATE TABLE b_1 PARTITION OF b FOR VALUES FROM (0) TO (10)", dbname)
    props = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", "guardrail.collections.max": "2",
             "guardrail.collections.limit.action": "FAIL"}
    with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
        run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                 "slot.name": f"dbz_{dbname}",
                                                 "publication.name": f"dbzpub_{dbname}"}}, tmp_path / "dbz.jsonl")
    java = "Guardrail limit exceeded: 3 tables/collections configured for capture, but maximum allowed is 2."
    assert java in str(exc.value)
    connector = Connector(make_config(pg, dbname, **{**props, "name": "pgcdc"}), sink=MemorySink())
    with pytest.raises(PgcdcError) as ours:
        connector.run()
    assert str(ours.value) == f"guardrail.collections.max: {java} (guardrail.collections.limit.action=fail)"
    assert pg.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'", dbname) == [(0,)]
    assert pg.execute(f"SELECT count(*) FROM pg_publication WHERE pubname = 'pub_{dbname}'", dbname) == [(0,)]


def test_partitions_without_partition_root_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """The default (publish.via.partition.root=false) with a filtered publication of the root and its partitions:
    streamed changes on each partition's topic, the snapshot of the root and of each partition."""
    props = {"publication.autocreate.mode": "filtered", "table.include.list": "public\\.pt.*"}
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, props, WORKLOAD[:4], snapshot=True)
    assert_same("partitions", ours, theirs, snapshot=True)
    assert [r["topic"][10:] for r in theirs if r["value"] and r["value"]["payload"]["op"] != "r"] == [
        "public.pt_1", "public.pt_2", "public.pt_1", "public.pt_1", "public.pt_2", "public.pt_2"]
