"""Kafka Connect's topic creation (KIP-158, `topic.creation.*`) on Apache Kafka: each topic pgcdc writes to is
created on its first record with its group's partitions, replication factor and configs, unless it exists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from pgcdc.local import KafkaBroker, PostgresCluster
from tests.harness import Running, make_config, read_topic, wait_for


def _topics(bootstrap: str) -> dict[str, int]:
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=20)
    return {name: len(t.partitions) for name, t in md.topics.items()}


def _config(bootstrap: str, topic: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until its answer came
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    entries = admin.describe_configs([res])[res].result(20)
    return {k: e.value for k, e in entries.items()}


def _creation(db: str) -> dict[str, str]:
    return {
        "topic.creation.default.partitions": "2", "topic.creation.default.replication.factor": "-1",
        "topic.creation.default.cleanup.policy": "compact",
        "topic.creation.groups": "orders,never",
        "topic.creation.orders.include": rf"{db}\.public\.orders.*",
        "topic.creation.orders.exclude": rf"{db}\.public\.orders_skip",
        "topic.creation.orders.partitions": "3", "topic.creation.orders.compression.type": "zstd",
        "topic.creation.never.partitions": "5",  # no include: matches nothing
    }


def _workload(pg: PostgresCluster, db: str) -> None:
    for t in ("customers", "orders", "orders_skip", "items"):
        pg.execute(f"INSERT INTO {t} VALUES (1), (2)", db)


def test_topics_are_created_with_their_groups_settings(pg: PostgresCluster, dbname: str, broker: KafkaBroker) -> None:
    bootstrap = broker.bootstrap_servers
    pg.execute(";".join(f"CREATE TABLE {t} (id int PRIMARY KEY)" for t in ("customers", "orders", "orders_skip",
                                                                        "items")), dbname)
    # A topic that exists already (the broker's auto-creation would give it 1 partition too): left as it is.
    existing = f"{dbname}.public.items"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(existing, 4, 1)])[existing].result(20)
    config = make_config(pg, dbname, bootstrap, **{"topic.prefix": dbname, **_creation(dbname)})
    with Running(config):
        _workload(pg, dbname)
        wait_for(lambda: all(len(read_topic(bootstrap, f"{dbname}.public.{t}")) == 2 for t in
                             ("customers", "orders", "orders_skip", "items")), 60, "two records in each topic")
    topics = _topics(bootstrap)
    assert topics[f"{dbname}.public.customers"] == 2  # the default group (the broker's num.partitions is 1)
    assert topics[f"{dbname}.public.orders"] == 3
    assert topics[f"{dbname}.public.orders_skip"] == 2  # excluded from `orders`: the default group
    assert topics[existing] == 4
    assert _config(bootstrap, f"{dbname}.public.customers")["cleanup.policy"] == "compact"
    orders = _config(bootstrap, f"{dbname}.public.orders")
    # A group's configs are its own: the default group's cleanup.policy is not inherited (as Kafka Connect).
    assert (orders["compression.type"], orders["cleanup.policy"]) == ("zstd", "delete")
    assert _config(bootstrap, existing)["cleanup.policy"] == "delete"


@pytest.fixture(scope="module")
def strict_broker() -> Iterator[KafkaBroker]:
    """A broker that creates no topic on its own, as many production clusters are set up."""
    with KafkaBroker(settings={"auto.create.topics.enable": "false"}) as b:
        yield b


def test_a_broker_without_auto_creation_takes_the_records(pg: PostgresCluster, dbname: str,
                                                          strict_broker: KafkaBroker) -> None:
    bootstrap = strict_broker.bootstrap_servers
    pg.execute(";".join(f"CREATE TABLE {t} (id int PRIMARY KEY)" for t in ("customers", "orders", "orders_skip",
                                                                        "items")), dbname)
    config = make_config(pg, dbname, bootstrap, **{"topic.prefix": dbname, "heartbeat.interval.ms": "500",
                                                   **_creation(dbname)})
    with Running(config):
        _workload(pg, dbname)
        wait_for(lambda: all(len(read_topic(bootstrap, f"{dbname}.public.{t}")) == 2 for t in
                             ("customers", "orders", "orders_skip", "items")), 60, "two records in each topic")
        wait_for(lambda: f"__debezium-heartbeat.{dbname}" in _topics(bootstrap), 30, "the heartbeat topic")
    topics = _topics(bootstrap)
    assert topics[f"{dbname}.public.orders"] == 3 and topics[f"__debezium-heartbeat.{dbname}"] == 2
