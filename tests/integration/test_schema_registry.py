"""Confluent's AvroConverter against a real schema registry (Apicurio Registry, serving Confluent's API): each
record decoded by confluent-kafka's AvroDeserializer with a client of its own, so every id must resolve on the
server; columns added, dropped and retyped mid-stream each register a version; a registry that goes away holds
the stream (nothing written, nothing confirmed) until it is back; basic auth (wrong credentials end the start
with one line, nothing created); the three subject strategies."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.local import ApicurioRegistry, PostgresCluster, TansuBroker
from pgcdc.errors import ConfigError, SinkError
from pgcdc.lsn import parse_lsn
from pgcdc.runner import Connector
from tests.harness import Running, make_config, wait_for, wal_end
from tests.integration.test_avro_kafka import read_raw

AVRO = "io.confluent.connect.avro.AvroConverter"
STRATEGY = "io.confluent.kafka.serializers.subject."


def avro_config(pg: PostgresCluster, dbname: str, broker: TansuBroker, url: str, **props: str) -> Any:
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "key.converter": AVRO, "value.converter": AVRO,
        "converter.schema.registry.url": url, **props})


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def decode(url: str, topic: str, records: list[tuple[bytes | None, bytes | None]],
           conf: dict[str, str] | None = None) -> list[tuple[Any, Any, int]]:
    """(key, value, value schema id) of each record, through a client that has seen none of pgcdc's calls."""
    client = SchemaRegistryClient({"url": url, **(conf or {})})
    keys, values = AvroDeserializer(client), AvroDeserializer(client)
    out = []
    for k, v in records:
        assert k is not None and v is not None and k[0] == 0 and v[0] == 0
        out.append((keys(k, SerializationContext(topic, MessageField.KEY)),
                    values(v, SerializationContext(topic, MessageField.VALUE)), int.from_bytes(v[1:5], "big")))
    return out


def after_fields(text: str) -> list[tuple[str, Any]]:
    """(name, type) of the row record's fields in a registered envelope schema (defined at `before`, named by
    `after`)."""
    after = next(f for f in json.loads(text)["fields"] if f["name"] == "before")
    record = next(t for t in after["type"] if isinstance(t, dict))
    return [(f["name"], f["type"]) for f in record["fields"]]


def test_evolution_registers_each_version(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                          registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text, n bigint)", dbname)
    topic = f"{dbname}.public.t"
    with Running(avro_config(pg, dbname, broker, registry.url)):
        pg.execute("INSERT INTO t VALUES (1, 'a', 1)", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w text", dbname)
        pg.execute("INSERT INTO t VALUES (2, 'b', 2, 'x')", dbname)
        pg.execute("ALTER TABLE t DROP COLUMN v", dbname)
        pg.execute("INSERT INTO t VALUES (3, 3, 'y')", dbname)
        pg.execute("ALTER TABLE t ALTER COLUMN n TYPE text", dbname)
        pg.execute("INSERT INTO t VALUES (4, 'four', 'z')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 4, 90, "4 Avro records")
    decoded = decode(registry.url, topic, read_raw(broker.bootstrap_servers, topic))
    assert sorted((d[1]["after"] for d in decoded), key=lambda a: a["id"]) == [
        {"id": 1, "v": "a", "n": 1}, {"id": 2, "v": "b", "n": 2, "w": "x"}, {"id": 3, "n": 3, "w": "y"},
        {"id": 4, "n": "four", "w": "z"}]
    # The registry holds one key version and four value versions, in the order the table changed; each id a
    # record carries is the id of one of them, and the text the registry returns for it is the one registered.
    subjects = sorted(s for s in get(f"{registry.url}/subjects") if s.startswith(topic))
    assert subjects == [f"{topic}-key", f"{topic}-value"]
    assert get(f"{registry.url}/subjects/{topic}-key/versions") == [1]
    assert get(f"{registry.url}/subjects/{topic}-value/versions") == [1, 2, 3, 4]
    versions = [get(f"{registry.url}/subjects/{topic}-value/versions/{n}") for n in (1, 2, 3, 4)]
    ids = {d[1]["after"]["id"]: d[2] for d in decoded}
    assert [v["id"] for v in versions] == [ids[1], ids[2], ids[3], ids[4]]
    assert len(set(ids.values())) == 4
    for v in versions:
        assert v["schemaType"] == "AVRO" and get(f"{registry.url}/schemas/ids/{v['id']}")["schema"] == v["schema"]
        assert json.loads(v["schema"])["connect.name"] == f"{topic}.Envelope"
    n_type = [dict(after_fields(v["schema"]))["n"] for v in versions]
    assert [[f[0] for f in after_fields(v["schema"])] for v in versions] == [
        ["id", "v", "n"], ["id", "v", "n", "w"], ["id", "n", "w"], ["id", "n", "w"]]
    assert n_type == [["null", "long"]] * 3 + [["null", "string"]]


def test_registry_down_holds_the_stream_until_it_is_back(pg: PostgresCluster, dbname: str,
                                                         broker: TansuBroker) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    slot = f"slot_{dbname}"
    with ApicurioRegistry() as reg:
        with Running(avro_config(pg, dbname, broker, reg.url)):
            pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
            wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60,
                     "the first record")
            reg.kill()
            # A new schema version needs the registry: the record and every one after it wait. The position is
            # taken after the ALTER: before PostgreSQL 15 its (empty) transaction arrives too and may be confirmed.
            pg.execute("ALTER TABLE t ADD COLUMN n int", dbname)
            before = wal_end(pg)
            pg.execute("INSERT INTO t VALUES (2, 'b', 2)", dbname)
            pg.execute("INSERT INTO t VALUES (3, 'c', 3)", dbname)
            time.sleep(8)  # several retries of the registration
            assert len(read_raw(broker.bootstrap_servers, topic, 30)) == 1
            confirmed = parse_lsn(pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                             f"WHERE slot_name = '{slot}'")[0][0])
            assert confirmed <= before
            reg.start()
            wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 3, 120, "3 records")
        decoded = decode(reg.url, topic, read_raw(broker.bootstrap_servers, topic))
        assert sorted((d[1]["after"] for d in decoded), key=lambda a: a["id"]) == [
            {"id": 1, "v": "a"}, {"id": 2, "v": "b", "n": 2}, {"id": 3, "v": "c", "n": 3}]
        assert get(f"{reg.url}/subjects/{topic}-value/versions") == [1, 2]


def test_basic_auth(pg: PostgresCluster, dbname: str, broker: TansuBroker) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with ApicurioRegistry(users={"pgcdc": "s3cret"}) as reg:
        with pytest.raises(Exception, match="401"):
            SchemaRegistryClient({"url": reg.url}).get_subjects()
        wrong = avro_config(pg, dbname, broker, reg.url, **{
            "converter.basic.auth.credentials.source": "USER_INFO", "converter.basic.auth.user.info": "pgcdc:wrong"})
        with pytest.raises(ConfigError, match=r"^key.converter.basic.auth.user.info: the schema registry at .* "
                                              r"refused the credentials \(HTTP 401\)$"):
            Connector(wrong).run()
        assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []
        config = avro_config(pg, dbname, broker, reg.url, **{
            "converter.basic.auth.credentials.source": "USER_INFO", "converter.basic.auth.user.info": "pgcdc:s3cret"})
        with Running(config):
            pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
            wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
        decoded = decode(reg.url, topic, read_raw(broker.bootstrap_servers, topic),
                         {"basic.auth.user.info": "pgcdc:s3cret"})
        assert [d[1]["after"] for d in decoded] == [{"id": 1, "v": "a"}]


def records_under_strategy(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
                           strategy: str, config: Any) -> list[tuple[bytes | None, bytes | None]]:
    """One insert written with `strategy` for keys and values (`config(pg, dbname, broker, url, **props)` names
    the converter); the subjects must be the strategy's; returns the records."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry.url, **{
            "converter.key.subject.name.strategy": STRATEGY + strategy,
            "converter.value.subject.name.strategy": STRATEGY + strategy})):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
    prefix = f"{topic}-" if strategy == "TopicRecordNameStrategy" else ""
    assert sorted(s for s in get(f"{registry.url}/subjects") if dbname in s) == [
        f"{prefix}{topic}.Envelope", f"{prefix}{topic}.Key"]
    return read_raw(broker.bootstrap_servers, topic)


@pytest.mark.parametrize("strategy", ["RecordNameStrategy", "TopicRecordNameStrategy"])
def test_subject_strategies(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
                            strategy: str) -> None:
    records = records_under_strategy(pg, dbname, broker, registry, strategy, avro_config)
    topic = f"{dbname}.public.t"
    # confluent-kafka's deserializer finds the schema by id alone, whatever the subject.
    decoded = decode(registry.url, topic, records)
    assert [d[1]["after"] for d in decoded] == [{"id": 1, "v": "a"}]


def test_without_auto_registration_only_registered_schemas_are_written(
        pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(avro_config(pg, dbname, broker, registry.url)):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
    running = Running(avro_config(pg, dbname, broker, registry.url, **{"converter.auto.register.schemas": "false"}))
    with pytest.raises(SinkError, match=f"subject {topic}-value: .*SR code 40403"), running:
        pg.execute("INSERT INTO t VALUES (2, 'b')", dbname)  # its schema is registered: looked up, written
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 2, 60, "2 records")
        pg.execute("ALTER TABLE t ADD COLUMN n int", dbname)
        # After the ALTER: before PostgreSQL 15 pgoutput sends its (empty) transaction too, which holds no
        # record and may be confirmed.
        before = wal_end(pg)
        pg.execute("INSERT INTO t VALUES (3, 'c', 3)", dbname)  # a version nobody registered: held
        time.sleep(5)
        confirmed = parse_lsn(pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                         f"WHERE slot_name = 'slot_{dbname}'")[0][0])
    assert confirmed <= before
    decoded = sorted(decode(registry.url, topic, read_raw(broker.bootstrap_servers, topic)),
                     key=lambda d: d[0]["id"])  # the topic may have several partitions: order holds per key
    assert [d[1]["after"] for d in decoded] == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert decoded[0][2] == decoded[1][2]
    assert get(f"{registry.url}/subjects/{topic}-value/versions") == [1]
