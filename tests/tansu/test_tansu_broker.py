"""pgcdc against Tansu, the broker `pgcdc demo` starts (pip-only, no JVM): offsets stored in a Tansu topic are
read back after a restart, although Tansu does not compact (the offset store takes the last record of its key)
and answers high-watermark requests wrongly for multi-record batches (readers go to partition EOF instead)."""

from __future__ import annotations

from pgcdc.local import PostgresCluster, TansuBroker
from tests.harness import Running, make_config, read_topic, wait_for
from tests.integration.test_durability import ids_in, kafka_config


def test_restarts_resume_from_offsets_stored_in_tansu(pg: PostgresCluster, dbname: str,
                                                      tansu: TansuBroker) -> None:
    pg.execute("CREATE TABLE r (id int PRIMARY KEY)", dbname)
    config = make_config(pg, dbname, tansu.bootstrap_servers, **kafka_config(pg, dbname, tansu))  # type: ignore[arg-type]
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
    assert sorted(ids_in(tansu, topic)) == list(range(1, 151))  # each row once: every start resumed after it
    # The positions were stored in Tansu (not only confirmed to the slot): Connect's key of this connector.
    stored = read_topic(tansu.bootstrap_servers, f"offsets_{dbname}")
    assert stored and all(r["key"][0] == f"dur_{dbname}" for r in stored), stored[:2]
