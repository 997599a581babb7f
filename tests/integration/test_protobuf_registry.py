"""Confluent's ProtobufConverter against a real schema registry (Apicurio Registry, serving Confluent's API): the
schema text Apicurio keeps under each record's id is the one pgcdc registered, each record is read by
confluent-kafka's ProtobufDeserializer, columns added mid-stream register a new version, and the subject
strategies name the subjects."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf.json_format import MessageToDict

from pgcdc.local import ApicurioRegistry, PostgresCluster, TansuBroker
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.integration.test_schema_registry import get, records_under_strategy

PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"


def protobuf_config(pg: PostgresCluster, dbname: str, broker: TansuBroker, url: str, **props: str) -> Any:
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "key.converter": PROTOBUF, "value.converter": PROTOBUF,
        "converter.schema.registry.url": url, **props})


def decode(url: str, topic: str, records: list[tuple[bytes | None, bytes | None]],
           schemas: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """(key, value, value schema id) of each record: the message class is the one pgcdc derives for the schema
    text the registry holds under the record's id (a client that has seen none of pgcdc's calls), and
    confluent-kafka's ProtobufDeserializer reads the framing and the message with it."""
    client = SchemaRegistryClient({"url": url})
    out = []
    for k, v in records:
        assert k is not None and v is not None
        pair = []
        for data, field in ((k, MessageField.KEY), (v, MessageField.VALUE)):
            assert data[0] == 0 and data[5] == 0  # magic byte; message index [0]
            text = client.get_schema(int.from_bytes(data[1:5], "big")).schema_str
            cls = schemas[text]
            message = ProtobufDeserializer(cls, {"use.deprecated.format": False})(
                data, SerializationContext(topic, field))
            pair.append(MessageToDict(message, preserving_proto_field_name=True))
        out.append((pair[0], pair[1], int.from_bytes(v[1:5], "big")))
    return out


def test_records_read_back_and_evolution_registers_each_version(pg: PostgresCluster, dbname: str,
                                                                broker: TansuBroker,
                                                                registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text, n numeric(5,2), a int[], s smallint)", dbname)
    topic = f"{dbname}.public.t"
    seen: dict[str, Any] = {}
    with Running(protobuf_config(pg, dbname, broker, registry.url)) as running:
        pg.execute("INSERT INTO t VALUES (1, 'a', 1.25, '{1,2}', -3)", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w text", dbname)
        pg.execute("INSERT INTO t VALUES (2, '', 0, '{}', 0, 'x')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 2, 90, "2 Protobuf records")
        for conv in running.connector.converters[:2]:
            seen.update({text: form.message_class for text, form in conv.forms.items()})  # type: ignore[union-attr]
    decoded = sorted(decode(registry.url, topic, read_raw(broker.bootstrap_servers, topic), seen),
                     key=lambda d: d[0].get("id", 0))
    assert [d[0] for d in decoded] == [{"id": 1}, {"id": 2}]
    # proto3: fields at their default value (0, "", empty list) are not on the wire, and read back absent.
    assert [d[1]["after"] for d in decoded] == [
        {"id": 1, "v": "a", "n": {"value": "fQ==", "precision": 3, "scale": 2}, "a": [1, 2], "s": -3},
        {"id": 2, "n": {"value": "AA==", "precision": 1, "scale": 2}, "w": "x"}]
    assert decoded[0][2] != decoded[1][2]
    assert get(f"{registry.url}/subjects/{topic}-value/versions") == [1, 2]
    assert get(f"{registry.url}/subjects/{topic}-key/versions") == [1]
    latest = get(f"{registry.url}/subjects/{topic}-value/versions/latest")
    assert latest["schemaType"] == "PROTOBUF" and latest["schema"] in seen
    assert 'import "confluent/type/decimal.proto";' in latest["schema"]


@pytest.mark.parametrize("strategy", ["RecordNameStrategy", "TopicRecordNameStrategy"])
def test_subject_strategies(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
                            strategy: str) -> None:
    records = records_under_strategy(pg, dbname, broker, registry, strategy, protobuf_config)
    assert len(records) == 1 and records[0][1] is not None and records[0][1][:1] == b"\x00"
