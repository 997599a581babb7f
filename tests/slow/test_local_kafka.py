"""The Apache Kafka test servers themselves (pgcdc/local/kafka.py): a broker killed with SIGKILL and started again
still has every record it acknowledged; the three-node cluster replicates every topic three times, requires two
replicas in sync for acks=all, and keeps taking writes while one node is down."""

from __future__ import annotations

import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource

from pgcdc.local import KafkaBroker, KafkaCluster
from tests.harness import read_topic


def produce(bootstrap: str, topic: str, n: int, start: int = 0) -> int:
    """n records with acks=all and idempotence; returns how many were acknowledged."""
    acked: list[int] = []
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5})
    for i in range(start, start + n):
        p.produce(topic, key=b"%d" % (i % 7), value=b"%d" % i,
                  on_delivery=lambda err, msg: acked.append(1) if err is None else None)
    assert p.flush(60) == 0
    return len(acked)


def values(bootstrap: str, topic: str) -> list[int]:
    return sorted(int(r["value"]) for r in read_topic(bootstrap, topic))


def test_killed_broker_keeps_what_it_acknowledged() -> None:
    with KafkaBroker() as broker:
        assert produce(broker.bootstrap_servers, "kept", 500) == 500
        broker.kill()
        started = time.monotonic()
        broker.start()
        print(f"broker restarted after SIGKILL in {time.monotonic() - started:.1f} s")
        assert values(broker.bootstrap_servers, "kept") == list(range(500))


def test_cluster_replicates_three_times_and_survives_one_node_down() -> None:
    started = time.monotonic()
    with KafkaCluster() as cluster:
        print(f"cluster of 3 started in {time.monotonic() - started:.1f} s")
        bootstrap = cluster.bootstrap_servers
        assert produce(bootstrap, "replicated", 100) == 100  # auto-created with the cluster's defaults
        admin = AdminClient({"bootstrap.servers": bootstrap})
        md = admin.list_topics("replicated", timeout=10).topics["replicated"]
        assert sorted(md.partitions[0].replicas) == [1, 2, 3]
        res = ConfigResource(ConfigResource.Type.TOPIC, "replicated")
        config = admin.describe_configs([res])[res].result(30)
        assert config["min.insync.replicas"].value == "2"

        leader = cluster.leader("replicated")
        cluster.broker(leader).kill()
        assert produce(bootstrap, "replicated", 100, start=100) == 100  # two replicas left: acks=all still works
        assert cluster.leader("replicated") != leader
        cluster.start_broker(leader)
        assert values(bootstrap, "replicated") == list(range(200))
