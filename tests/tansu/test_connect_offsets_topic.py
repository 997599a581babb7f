"""A connector JSON with Kafka Connect's `offsets.storage.topic` (KIP-618: the connector's own offsets topic) keeps
pgcdc's offsets in that topic, under Kafka Connect's key, and nothing in the default offsets topic; a restart
repeats nothing."""

from __future__ import annotations

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster, TansuBroker
from tests.harness import Running, read_topic, wait_for
from tests.integration.test_durability import ids_in, kafka_config


def test_offsets_storage_topic_holds_the_offsets_and_restarts_resume_from_it(pg: PostgresCluster, dbname: str,
                                                                             tansu: TansuBroker) -> None:
    pg.execute("CREATE TABLE r (id int PRIMARY KEY)", dbname)
    props = {k: v for k, v in kafka_config(pg, dbname, tansu).items() if k != "offset.storage.topic"}  # type: ignore[arg-type]
    offsets_topic = f"connect-offsets-{dbname}"
    config = build_config({**props, "offsets.storage.topic": offsets_topic})
    topic = f"{dbname}.public.r"
    for start in (1, 51):
        insert = f"INSERT INTO r SELECT generate_series({start}, {start + 49})"
        if start > 1:
            pg.execute(insert, dbname)  # while pgcdc is stopped
        with Running(config):
            if start == 1:
                pg.execute(insert, dbname)  # the slot is created at the first start
            wait_for(lambda s=start: set(range(1, s + 50)) <= set(ids_in(tansu, topic)), 60, f"rows 1-{start + 49}")
        stored = read_topic(tansu.bootstrap_servers, offsets_topic)
        assert stored and {tuple(map(str, r["key"][:1])) for r in stored} == {(f"dur_{dbname}",)}, stored
        assert all(r["key"][1] == {"server": dbname} and "lsn" in r["value"] for r in stored), stored
    assert sorted(ids_in(tansu, topic)) == list(range(1, 101))  # each row once
    assert read_topic(tansu.bootstrap_servers, "pgcdc-offsets") == []  # nothing went to the default topic
