"""Apicurio's AvroConverter against the real Apicurio Registry 3: each record's id is looked up through
Apicurio's own v3 API (`/ids/contentIds/{id}` or `/ids/globalIds/{id}`), not through the API pgcdc registered
with, and the record decoded with the schema text found there; the artifact is `<topic>-value` in the default
group, its nested records artifacts of their own (`<topic>.Value`: one version per table shape)."""

from __future__ import annotations

import io
import json
import urllib.request
from typing import Any

import fastavro

import pytest

from confluent_kafka import Consumer, KafkaError, TopicPartition

from pgcdc.converters.apicurio import registry_base
from pgcdc.converters.avro_schema import writer_schema
from pgcdc.errors import ConfigError
from pgcdc.local import ApicurioRegistry, PostgresCluster, TansuBroker
from pgcdc.runner import Connector
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_kafka import read_raw

CONV = "io.apicurio.registry.utils.converter.AvroConverter"
P = "converter.apicurio.registry."


def v3(registry: ApicurioRegistry) -> str:
    return f"{registry_base(registry.url)}/apis/registry/v3"


def fetch(url: str, raw: bool = False, auth: str | None = None) -> Any:
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", auth)
    with urllib.request.urlopen(request, timeout=10) as resp:
        body = resp.read()
    return body.decode() if raw else json.loads(body)


def parsed(registry: ApicurioRegistry, kind: str, schema_id: int, auth: str | None = None) -> Any:
    """The schema registered under an id, its references (registered as artifacts of their own, as Apicurio's
    serde registers nested records) parsed first, as Apicurio's deserializer resolves them."""
    named: dict[str, Any] = {}

    def parse(text: str, refs: list[dict[str, Any]]) -> Any:
        for ref in refs:
            at = f"{v3(registry)}/groups/default/artifacts/{ref['artifactId']}/versions/{ref['version']}"
            parse(fetch(f"{at}/content", True, auth), fetch(f"{at}/references", False, auth))
        return fastavro.parse_schema(writer_schema(text), named)

    return parse(fetch(f"{v3(registry)}/ids/{kind}/{schema_id}", True, auth),
                 fetch(f"{v3(registry)}/ids/{kind}/{schema_id}/references", False, auth))


def decode(registry: ApicurioRegistry, data: bytes, width: int, kind: str) -> tuple[int, Any]:
    """(id, datum) of a record framed with a `width`-byte id of `kind` (contentIds or globalIds)."""
    assert data[0] == 0
    schema_id = int.from_bytes(data[1:1 + width], "big")
    return schema_id, fastavro.schemaless_reader(io.BytesIO(data[1 + width:]), parsed(registry, kind, schema_id), None)


def config(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry, **props: str) -> Any:
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "key.converter": CONV, "value.converter": CONV,
        P + "url": f"{registry_base(registry.url)}/apis/registry/v2", P + "auto-register": "true", **props})


def run(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
        **props: str) -> list[tuple[bytes | None, bytes | None]]:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry, **props)):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w int", dbname)
        pg.execute("INSERT INTO t VALUES (2, 'b', 7)", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 2, 90, "2 Avro records")
    return read_raw(broker.bootstrap_servers, topic)


def test_content_ids_in_four_bytes_by_default(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                              registry: ApicurioRegistry) -> None:
    """The event's schema names its `<topic>.Value` record, an artifact of its own: a new table shape is a new
    version of that artifact only, and the event's text, hence its id, is the one Apicurio's serde cached (by
    text) for the first shape (measured: tests/data/apicurio_avro/schema_change)."""
    records = run(pg, dbname, broker, registry)
    values = [v for _, v in records if v is not None]
    first = decode(registry, values[0], 4, "contentIds")
    assert first[1]["after"] == {"id": 1, "v": "a"}
    assert [v[:5] for v in values] == [values[0][:5]] * 2
    keys = {decode(registry, k, 4, "contentIds")[1]["id"] for k, _ in records if k is not None}
    assert keys == {1, 2}
    base = f"{v3(registry)}/groups/default/artifacts/{dbname}.public.t"
    assert [v["contentId"] for v in fetch(f"{base}-value/versions")["versions"]] == [first[0]]
    assert len(fetch(f"{base}.Value/versions")["versions"]) == 2


def test_global_ids_in_eight_bytes(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                   registry: ApicurioRegistry) -> None:
    records = run(pg, dbname, broker, registry, **{P + "use-id": "globalId",
                                                   P + "id-handler": "io.apicurio.registry.serde.Legacy8ByteIdHandler"})
    values = [v for _, v in records if v is not None]
    first = decode(registry, values[0], 8, "globalIds")
    assert first[1]["after"] == {"id": 1, "v": "a"}
    assert [v[:9] for v in values] == [values[0][:9]] * 2
    versions = fetch(f"{v3(registry)}/groups/default/artifacts/{dbname}.public.t-value/versions")["versions"]
    assert [v["globalId"] for v in versions] == [first[0]]


def test_basic_auth(pg: PostgresCluster, dbname: str, broker: TansuBroker) -> None:
    """`apicurio.registry.auth.username`/`password` as HTTP basic auth; wrong or missing credentials end the start
    with one line naming the option, before any slot exists."""
    with ApicurioRegistry(users={"pgcdc": "s3cret"}) as reg:
        for props, message in (({}, "auth.username: Apicurio Registry at .* asks for credentials \\(HTTP 401\\)$"),
                                ({P + "auth.username": "pgcdc", P + "auth.password": "wrong"},
                                 "auth.password: Apicurio Registry at .* refused the credentials \\(HTTP 401\\)$")):
            with pytest.raises(ConfigError, match="^key.converter.apicurio.registry." + message):
                Connector(config(pg, dbname, broker, reg, **props)).run()
        assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []
        pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
        topic = f"{dbname}.public.t"
        with Running(config(pg, dbname, broker, reg, **{P + "auth.username": "pgcdc", P + "auth.password": "s3cret"})):
            pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
            wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
        value = read_raw(broker.bootstrap_servers, topic)[0][1]
        assert value is not None and value[0] == 0
        schema = parsed(reg, "contentIds", int.from_bytes(value[1:5], "big"), "Basic cGdjZGM6czNjcmV0")  # pgcdc:s3cret
        datum = fastavro.schemaless_reader(io.BytesIO(value[5:]), schema, None)
        assert datum["after"] == {"id": 1, "v": "a"}


@pytest.mark.parametrize("find_latest", ["false", "true"])
def test_without_auto_register_the_registered_version_is_used(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                                              registry: ApicurioRegistry, find_latest: str) -> None:
    """auto-register=false: the schema is found by content (find-latest=false) or the artifact's latest version
    is used (find-latest=true); either way the id is the one the first, registering run wrote."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry)):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
    lookup = {P + "auto-register": "false", P + "find-latest": find_latest}
    with Running(config(pg, dbname, broker, registry, **lookup)):
        pg.execute("INSERT INTO t VALUES (2, 'b')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 2, 60, "2 records")
    values = [decode(registry, v, 4, "contentIds") for _, v in read_raw(broker.bootstrap_servers, topic) if v]
    assert [d["after"] for _, d in values] == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert values[0][0] == values[1][0]
    versions = fetch(f"{v3(registry)}/groups/default/artifacts/{topic}-value/versions")["versions"]
    assert len(versions) == 1


def read_with_headers(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None, list[Any]]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pgcdc-apicurio-reader",
                         "enable.auto.commit": "false", "enable.partition.eof": "true"})
    out: list[tuple[bytes | None, bytes | None, list[Any]]] = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while True:
            msg = consumer.poll(10.0)
            assert msg is not None, "no end of partition"
            if msg.error() and msg.error().code() == KafkaError._PARTITION_EOF:
                return out
            assert not msg.error(), msg.error()
            out.append((msg.key(), msg.value(), msg.headers() or []))
    finally:
        consumer.close()


def test_ids_in_headers(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry) -> None:
    """headers.enabled=true: the record is the Avro binary alone; the key's converter, then the value's, add the
    id (8 bytes) and the encoding to the headers; a tombstone carries the key's only."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry, **{P + "headers.enabled": "true"})):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        pg.execute("DELETE FROM t WHERE id = 1", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 3, 60, "3 records")
    records = read_with_headers(broker.bootstrap_servers, topic)
    # after the record's own headers (Debezium's `__debezium.context.*`), as Kafka Connect adds them
    assert [[name for name, _ in h if not name.startswith("__debezium.")] for _, _, h in records] == [
        ["apicurio.key.contentId", "apicurio.key.encoding", "apicurio.value.contentId", "apicurio.value.encoding"],
        ["apicurio.key.contentId", "apicurio.key.encoding", "apicurio.value.contentId", "apicurio.value.encoding"],
        ["apicurio.key.contentId", "apicurio.key.encoding"]]
    assert all(not name.startswith("__debezium.") for _, _, h in records for name, _ in h[-2:])
    ops = []
    for key, value, headers in records:
        found = dict(headers)
        assert found["apicurio.key.encoding"] == b"BINARY" and len(found["apicurio.key.contentId"]) == 8
        assert key is not None
        key_schema = parsed(registry, "contentIds", int.from_bytes(found["apicurio.key.contentId"], "big"))
        assert fastavro.schemaless_reader(io.BytesIO(key), key_schema, None) == {"id": 1}
        if value is None:
            ops.append(None)
            continue
        value_schema = parsed(registry, "contentIds", int.from_bytes(found["apicurio.value.contentId"], "big"))
        ops.append(fastavro.schemaless_reader(io.BytesIO(value), value_schema, None)["op"])
    assert ops == ["c", "d", None]
