"""Apicurio's ExtJsonConverter against the real Apicurio Registry 3: each record names a content id, looked up
through Apicurio's v3 API (`/ids/contentIds/{id}`), which must hold the record's Connect schema as a KCONNECT
version of `<topic>-key`/`<topic>-value` in the default group, one version per table shape."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import pytest

from pgcdc.errors import ConfigError, SinkError
from pgcdc.lsn import parse_lsn
from pgcdc.local import ApicurioRegistry, PostgresCluster, TansuBroker
from pgcdc.runner import Connector
from tests.harness import Running, make_config, wait_for, wal_end
from tests.integration.test_apicurio_converter import fetch, v3
from tests.integration.test_apicurio_converter import read_with_headers
from tests.integration.test_avro_kafka import read_raw

CONV = "io.apicurio.registry.utils.converter.ExtJsonConverter"
P = "converter.apicurio.registry."


def config(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry, **props: str) -> Any:
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": dbname, "key.converter": CONV, "value.converter": CONV,
        P + "url": v3(registry), P + "auto-register": "true", **props})


def versions(registry: ApicurioRegistry, artifact: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = fetch(f"{v3(registry)}/groups/default/artifacts/{artifact}/versions")["versions"]
    return found


def decode(registry: ApicurioRegistry, data: bytes) -> tuple[int, dict[str, Any], Any]:
    """(content id, the Connect schema registered under it, the payload) of one record."""
    record = json.loads(data)
    assert list(record) == ["schemaId", "payload"]
    schema = json.loads(fetch(f"{v3(registry)}/ids/contentIds/{record['schemaId']}", raw=True))
    return record["schemaId"], schema, record["payload"]


@pytest.mark.parametrize("id_options", [{}, {P + "use-id": "globalId", P + "headers.enabled": "true"}],
                         ids=["defaults", "globalId-headers"])
def test_content_ids_in_the_record(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                   id_options: dict[str, str]) -> None:
    """The record names the content id of its schema's version, also with use-id=globalId and headers.enabled
    (which Apicurio's ExtJsonConverter reads but does not use); no Kafka headers are added. A registry of its
    own, so that the ids below are known to differ."""
    with ApicurioRegistry() as registry:
        check_content_ids(pg, dbname, broker, registry, id_options)


def check_content_ids(pg: PostgresCluster, dbname: str, broker: TansuBroker, registry: ApicurioRegistry,
                      id_options: dict[str, str]) -> None:
    # The key's schema registered first under another artifact (global id 1, content id 1): the key's version
    # then shares its content id but has a global id of its own.
    key_schema = ('{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,'
                  f'"name":"{dbname}.public.t.Key"}}')
    fetch_post(f"{v3(registry)}/groups/default/artifacts", {
        "artifactId": f"{dbname}-decoy", "artifactType": "KCONNECT",
        "firstVersion": {"content": {"content": key_schema, "contentType": "application/json"}}})
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry, **id_options)):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        pg.execute("ALTER TABLE t ADD COLUMN w int", dbname)
        pg.execute("INSERT INTO t VALUES (2, 'b', 7)", dbname)
        pg.execute("DELETE FROM t WHERE id = 1", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 4, 90, "4 records")
    records = read_with_headers(broker.bootstrap_servers, topic)
    assert all(not name.startswith("apicurio.") for _, _, headers in records for name, _ in headers)
    values = [decode(registry, v) for _, v, _ in records if v is not None]
    assert [(p["op"], p["after"]) for _, _, p in values] == [
        ("c", {"id": 1, "v": "a"}), ("c", {"id": 2, "v": "b", "w": 7}), ("d", None)]
    assert [len(s["fields"][1]["fields"]) for _, s, _ in values] == [2, 3, 3]
    registered = versions(registry, f"{topic}-value")
    assert sorted(v["contentId"] for v in registered) == sorted({i for i, _, _ in values})
    assert all(v["artifactType"] == "KCONNECT" for v in registered)
    keys = [decode(registry, k) for k, _, _ in records]
    assert [p for _, _, p in keys] == [{"id": 1}, {"id": 2}, {"id": 1}, {"id": 1}]
    assert json.dumps(keys[0][1], separators=(",", ":")) == key_schema
    [key_version] = versions(registry, f"{topic}-key")
    assert {i for i, _, _ in keys} == {key_version["contentId"]} != {key_version["globalId"]}
    assert [v for _, v, _ in records][-1] is None  # the tombstone stays a tombstone


def fetch_post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


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
    values = [decode(registry, v) for _, v in read_raw(broker.bootstrap_servers, topic) if v]
    assert [p["after"] for _, _, p in values] == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert values[0][0] == values[1][0]
    assert len(versions(registry, f"{topic}-value")) == 1


def test_find_latest_takes_the_latest_version_as_it_is(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                                       registry: ApicurioRegistry) -> None:
    """find-latest=true writes the artifact's latest version's content id whatever that version holds: the
    payload is JsonConverter's either way (Apicurio's converter never reads the registered schema to write)."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    made = fetch_post(f"{v3(registry)}/groups/default/artifacts", {
        "artifactId": f"{topic}-value", "artifactType": "KCONNECT", "firstVersion": {"content": {
            "content": "{\"type\":\"string\",\"optional\":false}", "contentType": "application/json"}}})
    with Running(config(pg, dbname, broker, registry, **{P + "auto-register": "false", P + "find-latest": "true",
                                                         "key.converter": "org.apache.kafka.connect.json."
                                                                          "JsonConverter"})):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
    value = read_raw(broker.bootstrap_servers, topic)[0][1]
    assert value is not None
    record = json.loads(value)
    assert record["schemaId"] == made["version"]["contentId"]
    assert record["payload"]["after"] == {"id": 1, "v": "a"}


def test_basic_auth(pg: PostgresCluster, dbname: str, broker: TansuBroker) -> None:
    """`apicurio.registry.auth.username`/`password` as HTTP basic auth on the v3 API; wrong or missing
    credentials end the start with one line naming the option, before any slot exists."""
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
        assert value is not None
        record = json.loads(value)
        request = urllib.request.Request(f"{v3(reg)}/ids/contentIds/{record['schemaId']}")
        request.add_header("Authorization", "Basic cGdjZGM6czNjcmV0")  # pgcdc:s3cret
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert json.loads(resp.read())["name"] == f"{dbname}.public.t.Envelope"
        assert record["payload"]["after"] == {"id": 1, "v": "a"}


def test_an_unregistered_schema_holds_the_stream(pg: PostgresCluster, dbname: str, broker: TansuBroker,
                                                 registry: ApicurioRegistry) -> None:
    """auto-register=false and find-latest=false: a schema version nobody registered is not found by content
    (Apicurio's converter fails the record there); pgcdc holds the stream at that record, nothing after it is
    written or confirmed, and a stop ends the wait with one line naming the artifact."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    with Running(config(pg, dbname, broker, registry)):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 60, "1 record")
    running = Running(config(pg, dbname, broker, registry, **{P + "auto-register": "false"}))
    with pytest.raises(SinkError, match=f"artifact {topic}-value: Could not resolve artifact reference by content"), \
            running:
        pg.execute("INSERT INTO t VALUES (2, 'b')", dbname)  # its schema is registered: found, written
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
    values = [decode(registry, v) for _, v in read_raw(broker.bootstrap_servers, topic) if v]
    assert [p["after"] for _, _, p in values] == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert len(versions(registry, f"{topic}-value")) == 1
