"""Confluent's JsonSchemaConverter against a real schema registry (Apicurio Registry, serving Confluent's API):
each record's id names, in the registry, the JSON Schema text pgcdc derived (schemaType JSON), the payload after
the id is the record's JSON, a column added mid-stream registers a new version, and the subject strategies name
the subjects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from pgcdc.local import ApicurioRegistry, PostgresCluster, TansuBroker
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.integration.test_schema_registry import get, records_under_strategy

JSONSCHEMA = "io.confluent.connect.json.JsonSchemaConverter"


def jsonschema_config(pg: PostgresCluster, dbname: str, broker: TansuBroker, url: str, **props: str) -> Any:
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "key.converter": JSONSCHEMA, "value.converter": JSONSCHEMA,
        "converter.schema.registry.url": url, **props})


def decode(url: str, data: bytes) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(the schema the registry holds under the record's id, the record's JSON, that id), read by a client that
    has seen none of pgcdc's calls."""
    assert data[0] == 0
    schema_id = int.from_bytes(data[1:5], "big")
    registered = SchemaRegistryClient({"url": url}).get_schema(schema_id)
    assert registered.schema_type == "JSON"
    return json.loads(registered.schema_str), json.loads(data[5:]), schema_id


def test_records_read_back_and_evolution_registers_each_version(pg: PostgresCluster, dbname: str,
                                                                broker: TansuBroker,
                                                                registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text, n numeric(5,2), a int[], s smallint)", dbname)
    topic = f"{dbname}.public.t"
    with Running(jsonschema_config(pg, dbname, broker, registry.url)):
        pg.execute("INSERT INTO t VALUES (1, 'a', 1.25, '{1,2}', -3)", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w text", dbname)
        pg.execute("INSERT INTO t VALUES (2, '', 0, '{}', 0, 'x')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 2, 90,
                 "2 JSON Schema records")
    records = read_raw(broker.bootstrap_servers, topic)
    keys = [decode(registry.url, k) for k, _ in records if k is not None]
    values = sorted((decode(registry.url, v) for _, v in records if v is not None), key=lambda d: d[1]["after"]["id"])
    assert [k[1] for k in keys] == [{"id": 1}, {"id": 2}]
    assert keys[0][0]["title"] == f"{topic}.Key" and keys[0][0]["properties"]["id"]["connect.type"] == "int32"
    assert [v[1]["after"] for v in values] == [
        {"id": 1, "v": "a", "n": "fQ==", "a": [1, 2], "s": -3},
        {"id": 2, "v": "", "n": "AA==", "a": [], "s": 0, "w": "x"}]
    first, second = values[0][0], values[1][0]
    after = second["properties"]["after"]["oneOf"][1]["properties"]
    assert "w" not in first["properties"]["after"]["oneOf"][1]["properties"] and "w" in after
    assert after["n"]["oneOf"][1] == {"type": "number", "title": "org.apache.kafka.connect.data.Decimal",
                                      "connect.version": 1, "connect.parameters": {"scale": "2",
                                                                                   "connect.decimal.precision": "5"},
                                      "connect.type": "bytes"}
    assert values[0][2] != values[1][2]
    assert get(f"{registry.url}/subjects/{topic}-value/versions") == [1, 2]
    assert get(f"{registry.url}/subjects/{topic}-key/versions") == [1]
    assert get(f"{registry.url}/subjects/{topic}-value/versions/latest")["schemaType"] == "JSON"


@pytest.mark.parametrize("strategy", ["RecordNameStrategy", "TopicRecordNameStrategy"])
def test_subject_strategies(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
                            strategy: str) -> None:
    records = records_under_strategy(pg, dbname, broker, registry, strategy, jsonschema_config)
    value = records[0][1]
    assert len(records) == 1 and value is not None
    assert decode(registry.url, value)[1]["after"] == {"id": 1, "v": "a"}  # found by id, whatever the subject
