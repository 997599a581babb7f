"""CloudEventsConverter with Avro events and Avro data against a real schema registry (Apicurio Registry through
Confluent's API) and Apache Kafka: every event and its `data` decode with a client that has seen none of pgcdc's
calls, the event under `<topic>-value`, the data under `<topic>-data-value`, and `dataschema` is a URL the
registry answers with the data's schema."""

from __future__ import annotations

from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.local import ApicurioRegistry, PostgresCluster
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.integration.test_schema_registry import get

CE = "io.debezium.converters.CloudEventsConverter"


def test_avro_cloudevents_through_a_real_registry(pg: PostgresCluster, dbname: str, broker: Any,
                                                  registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "value.converter": CE, "value.converter.serializer.type": "avro",
        "value.converter.data.serializer.type": "avro", "value.converter.avro.schema.registry.url": registry.url})
    with Running(config):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w int", dbname)
        pg.execute("UPDATE t SET w = 7", dbname)
        pg.execute("DELETE FROM t", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 4, 90, "4 records")
    records = read_raw(broker.bootstrap_servers, topic)
    client = SchemaRegistryClient({"url": registry.url})
    events, data = AvroDeserializer(client), AvroDeserializer(client)
    decoded = []
    for _, value in records:
        if value is None:  # the delete's tombstone
            continue
        event = events(value, SerializationContext(topic, MessageField.VALUE))
        inner = data(event["data"], SerializationContext(f"{topic}-data", MessageField.VALUE))
        schema_id = int.from_bytes(event["data"][1:5], "big")
        assert event["dataschema"] == f"{registry.url}/schemas/ids/{schema_id}"
        assert get(event["dataschema"])["schema"] == client.get_schema(schema_id).schema_str
        decoded.append((event["iodebeziumop"], event["type"], inner["before"], inner["after"]))
    assert decoded == [("c", "io.debezium.connector.postgresql.DataChangeEvent", None, {"id": 1, "v": "a"}),
                       ("u", "io.debezium.connector.postgresql.DataChangeEvent", None, {"id": 1, "v": "a", "w": 7}),
                       ("d", "io.debezium.connector.postgresql.DataChangeEvent", {"id": 1, "v": None, "w": None},
                        None)]
    subjects = sorted(s for s in get(f"{registry.url}/subjects") if s.startswith(topic))
    assert subjects == [f"{topic}-data-value", f"{topic}-value"]
    assert get(f"{registry.url}/subjects/{topic}-data-value/versions") == [1, 2]  # the column added mid-stream
    assert get(f"{registry.url}/subjects/{topic}-value/versions") == [1]  # the event's schema did not change
