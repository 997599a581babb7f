"""pgcdc against Tansu, the broker `pgcdc demo` starts (pip-only, no JVM): offsets stored in a Tansu topic are
read back after a restart, although Tansu does not compact (the offset store takes the last record of its key)
and answers high-watermark requests wrongly for multi-record batches (readers go to partition EOF instead).
With Kafka Connect's `offsets.storage.topic` (KIP-618: the connector's own offsets topic) in a connector JSON the
offsets are kept in that topic, under Kafka Connect's key, and nothing goes to the default offsets topic."""

from __future__ import annotations

import pytest

from pgcdc.config import build_config
from pgcdc.local import PostgresCluster, TansuBroker
from tests.harness import Running, read_topic, wait_for
from tests.integration.test_durability import ids_in, kafka_config


@pytest.mark.parametrize("connect_topic", [False, True], ids=["offset.storage.topic", "offsets.storage.topic"])
def test_restarts_resume_from_offsets_stored_in_tansu(pg: PostgresCluster, dbname: str, tansu: TansuBroker,
                                                      connect_topic: bool) -> None:
    pg.execute("CREATE TABLE r (id int PRIMARY KEY)", dbname)
    props = kafka_config(pg, dbname, tansu)  # type: ignore[arg-type]
    offsets_topic = props["offset.storage.topic"]
    if connect_topic:
        del props["offset.storage.topic"]
        offsets_topic = props["offsets.storage.topic"] = f"connect-offsets-{dbname}"
    config = build_config(props)
    topic = f"{dbname}.public.r"
    for start in (1, 51, 101):
        insert = f"INSERT INTO r SELECT generate_series({start}, {start + 49})"
        if start > 1:
            pg.execute(insert, dbname)  # while pgcdc is stopped
        with Running(config):
            if start == 1:
                pg.execute(insert, dbname)  # the slot is created at the first start
            wait_for(lambda s=start: set(range(1, s + 50)) <= set(ids_in(tansu, topic)), 60,
                     f"rows 1-{start + 49}")
        # The positions were stored in Tansu (not only confirmed to the slot), under Connect's key.
        stored = read_topic(tansu.bootstrap_servers, offsets_topic)
        assert stored and all(r["key"] == [f"dur_{dbname}", {"server": dbname}] and "lsn" in r["value"]
                              for r in stored), stored[:2]
    assert sorted(ids_in(tansu, topic)) == list(range(1, 151))  # each row once: every start resumed after it
    if connect_topic:
        assert read_topic(tansu.bootstrap_servers, "pgcdc-offsets") == []  # nothing went to the default topic
