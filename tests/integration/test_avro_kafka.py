"""Avro records through a real broker and a real schema registry: keys and values in Confluent's wire format,
each decoded by confluent-kafka's own AvroDeserializer with the schema its id names; a column added mid-stream
registers one new version (once, not per record); the offsets topic stays Kafka Connect's JSON."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.local import ApicurioRegistry, KafkaBroker, PostgresCluster
from tests.harness import Running, make_config, read_topic, wait_for

AVRO = "io.confluent.connect.avro.AvroConverter"


def read_raw(bootstrap: str, topic: str, timeout: float = 20, *,
             to_end: bool = True) -> list[tuple[bytes | None, bytes | None]]:
    """`topic`'s records (key, value) from the start of every partition to its end; an AssertionError if that
    takes longer than `timeout` s, so a count asserted on is never a partial read's. `to_end=False`: what arrived
    within `timeout` (for polls that wait for a count)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pgcdc-avro-reader",
                         "enable.auto.commit": "false", "enable.partition.eof": "true"})
    out: list[tuple[bytes | None, bytes | None]] = []
    try:
        md = consumer.list_topics(topic, timeout=timeout)
        if topic not in md.topics or md.topics[topic].error:
            return []
        consumer.assign([TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
        remaining = set(md.topics[topic].partitions)
        deadline = time.monotonic() + timeout
        while remaining and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    remaining.discard(msg.partition())
                    continue
                raise AssertionError(str(msg.error()))
            out.append((msg.key(), msg.value()))
    finally:
        consumer.close()
    if remaining and to_end:
        raise AssertionError(f"{topic}: partitions {sorted(remaining)} not read to their end within {timeout} s "
                             f"({len(out)} records read)")
    return out


def test_avro_through_kafka_with_a_column_added(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    offsets_topic = f"offsets_{dbname}"
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "offset.storage": "kafka", "offset.storage.topic": offsets_topic, "key.converter": AVRO,
        "value.converter": AVRO, "converter.schema.registry.url": registry.url})
    running = Running(config)
    topic = "test.public.t"
    with running:
        pg.execute("INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 20) g", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN n bigint", dbname)
        pg.execute("INSERT INTO t VALUES (21, 'added', 7)", dbname)
        pg.execute("UPDATE t SET n = 8 WHERE id = 1", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 22, 60, "22 Avro records")
    key_conv, value_conv, _ = running.connector.converters
    assert key_conv is not None and value_conv is not None
    records = read_raw(broker.bootstrap_servers, topic)
    client = SchemaRegistryClient({"url": registry.url})  # one of the reader's own: pgcdc's closed with it
    values, keys = AvroDeserializer(client), AvroDeserializer(client)
    decoded: list[tuple[Any, Any, bytes]] = []
    for k, v in records:
        assert k is not None and v is not None and k[0] == 0 and v[0] == 0
        decoded.append((keys(k, SerializationContext(topic, MessageField.KEY)),
                        values(v, SerializationContext(topic, MessageField.VALUE)), v[1:5]))
    # The topic may have several partitions: order holds per key, so compare per record kind.
    assert sorted(d[0]["id"] for d in decoded) == [1, *range(1, 22)]
    first = [d for d in decoded if d[1]["op"] == "c" and d[0]["id"] <= 20]
    later = sorted((d for d in decoded if d not in first), key=lambda d: d[1]["op"])
    assert len(first) == 20 and all(d[1]["after"] == {"id": d[0]["id"], "v": f"v{d[0]['id']}"} for d in first)
    assert [d[1]["after"] for d in later] == [{"id": 21, "v": "added", "n": 7}, {"id": 1, "v": "v1", "n": 8}]
    assert len({d[2] for d in first}) == 1 and {d[2] for d in later} == {later[0][2]} != {first[0][2]}
    # One registration per schema version and subject, not per record (the key schema did not change).
    assert (key_conv.registrations, value_conv.registrations) == (1, 2)  # type: ignore[attr-defined]
    stored = read_topic(broker.bootstrap_servers, offsets_topic)
    assert stored and isinstance(stored[-1]["value"], dict) and "lsn" in stored[-1]["value"]


def test_transforms_run_before_the_avro_converter(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                                  registry: ApicurioRegistry) -> None:
    # Kafka Connect's order: the transform chain first, then the converter sees the transformed record and
    # registers the flattened schema under the renamed topic's subject.
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "value.converter": AVRO, "value.converter.schema.registry.url": registry.url,
        "transforms": "unwrap,route",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.add.fields": "op",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "test\\.public\\.(.*)", "transforms.route.replacement": f"flat_{dbname}_$1"})
    topic = f"flat_{dbname}_t"  # the broker and the registry serve the whole session: a name of this test's own
    with Running(config):
        pg.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')", dbname)
        pg.execute("UPDATE t SET v = 'c' WHERE id = 2", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 3, 60,
                 "3 flattened Avro records")
    client = SchemaRegistryClient({"url": registry.url})
    values = AvroDeserializer(client)
    rows = sorted((values(v, SerializationContext(topic, MessageField.VALUE)) for _, v in
                   read_raw(broker.bootstrap_servers, topic)), key=lambda r: (r["id"], r["__op"]))
    assert rows == [{"id": 1, "v": "a", "__op": "c"}, {"id": 2, "v": "b", "__op": "c"},
                    {"id": 2, "v": "c", "__op": "u"}]
    # The registry serves the whole session: the flattened value is registered under the routed topic's subject,
    # the key (JsonConverter) under none.
    subjects = client.get_subjects()
    assert f"{topic}-value" in subjects and f"{topic}-key" not in subjects, subjects
