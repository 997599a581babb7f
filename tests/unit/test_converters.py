"""Converter settings as Kafka Connect and Debezium's engine read them, and the converting sink: schemas
prepared and registered once per version, records held (not written) while the registry is unreachable."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import orjson
import pytest

from pgcdc.config import build_config
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.errors import ConfigError, SinkError
from pgcdc.pgtypes import Modes

BASE = {"topic.prefix": "dbserver1", "database.hostname": "127.0.0.1", "database.user": "u",
        "database.dbname": "inventory", "bootstrap.servers": "127.0.0.1:9092"}
AVRO = "io.confluent.connect.avro.AvroConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
DBZ = "io.debezium.converters."
KC = "org.apache.kafka.connect.converters."
REG = {"value.converter": AVRO, "value.converter.schema.registry.url": "mock://unit"}
PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
PROTO_REG = {"value.converter": PROTOBUF, "value.converter.schema.registry.url": "mock://unit"}
APICURIO = "io.apicurio.registry.utils.converter.AvroConverter"
AREG = {"value.converter": APICURIO, "value.converter.apicurio.registry.url": "http://127.0.0.1:1/apis/registry/v2"}
EXT_JSON = "io.apicurio.registry.utils.converter.ExtJsonConverter"
EREG = {**AREG, "value.converter": EXT_JSON}

GOOD = [  # (properties, (key schemas.enable, value schemas.enable), (key class, value class))
    ({}, (True, True), ("JsonConverter", "JsonConverter")),
    ({"converter.schemas.enable": "false"}, (False, False), ("JsonConverter", "JsonConverter")),
    ({"value.converter.schemas.enable": "false"}, (True, False), ("JsonConverter", "JsonConverter")),
    ({"key.converter.schemas.enable": False}, (False, True), ("JsonConverter", "JsonConverter")),
    # the engine's converter.* wins over the per-side option, as Debezium's engine applies it
    ({"key.converter.schemas.enable": "true", "converter.schemas.enable": "false"}, (False, False),
     ("JsonConverter", "JsonConverter")),
    (REG, (True, True), ("JsonConverter", "AvroConverter")),
    ({**REG, "converter.schemas.enable": "false"}, (False, True), ("JsonConverter", "AvroConverter")),
    ({"key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": "mock://u",
      "converter.auto.register.schemas": "true"}, (True, True), ("AvroConverter", "AvroConverter")),
    ({**REG, "value.converter.value.subject.name.strategy":
      "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, (True, True), ("JsonConverter", "AvroConverter")),
    ({**AREG, "converter.apicurio.registry.auto-register": "true", "converter.apicurio.registry.find-latest": "true",
      "value.converter.apicurio.registry.use-id": "globalId"}, (True, True), ("JsonConverter", "AvroConverter")),
    ({"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}, (True, True),
     ("JsonConverter", "ByteArrayConverter")),
    ({"header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter"}, (True, True),
     ("JsonConverter", "JsonConverter")),
    ({"key.converter": PROTOBUF, "value.converter": PROTOBUF, "converter.schema.registry.url": "mock://u",
      "converter.wrapper.for.raw.primitives": "true"}, (True, True), ("ProtobufConverter", "ProtobufConverter")),
    ({"key.converter": PROTOBUF, "value.converter": PROTOBUF, "converter.schema.registry.url": "mock://u",
      **{f"converter.{name}": "true" for name in ("wrapper.for.nullables", "optional.for.nullables",
                                                  "enhanced.protobuf.schema.support", "scrub.invalid.names",
                                                  "optional.for.proto2", "reference.lookup.only")}},
     (True, True), ("ProtobufConverter", "ProtobufConverter")),
    ({"key.converter": STRING, "value.converter": STRING, "converter.converter.encoding": "ISO-8859-1"},
     (True, True), ("StringConverter", "StringConverter")),
    ({"value.converter": DBZ + "BinaryDataConverter", "value.converter.delegate.converter.type": STRING},
     (True, True), ("JsonConverter", "BinaryDataConverter")),
    ({"value.converter": DBZ + "ByteArrayConverter", "value.converter.delegate.converter.type": JSON,
      "value.converter.delegate.converter.type.schemas.enable": "false"}, (True, True),
     ("JsonConverter", "ByteArrayConverter")),
    *[({"key.converter": KC + name, "header.converter": KC + name}, (True, True), (name, "JsonConverter"))
      for name in ("DoubleConverter", "FloatConverter", "IntegerConverter", "LongConverter", "ShortConverter",
                   "BooleanConverter")],
]


@pytest.mark.parametrize("props, schemas, classes", GOOD)
def test_converter_settings(props: dict[str, Any], schemas: tuple[bool, bool], classes: tuple[str, str]) -> None:
    c = build_config({**BASE, **props})
    assert (c.key_converter_schemas_enable, c.value_converter_schemas_enable) == schemas
    specs = c.converter_specs
    assert (specs["key"].cls.rsplit(".", 1)[1], specs["value"].cls.rsplit(".", 1)[1]) == classes


BAD = [
    ({"value.converter": "com.example.Nope"}, "value.converter: unknown converter class 'com.example.Nope'"),
    ({"value.converter.bogus": "1"}, "value.converter.bogus: unknown option 'bogus' of "
                                     "org.apache.kafka.connect.json.JsonConverter"),
    ({"converter.bogus": "1"}, "converter.bogus: unknown option 'bogus' of the configured converters"),
    ({"value.converter.schemas.enable": "maybe"}, "value.converter.schemas.enable: must be true or false"),
    ({"value.converter": AVRO}, "value.converter.schema.registry.url: required by " + AVRO),
    ({**REG, "value.converter.bearer.auth.credentials.source": "SASL_OAUTHBEARER_INHERIT"},
     "value.converter.bearer.auth.credentials.source: only static_token is supported yet"),
    ({**REG, "value.converter.schema.registry.ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
     "value.converter.schema.registry.ssl.cipher.suites: is not supported yet"),
    ({**REG, "value.converter.value.subject.name.strategy": "x.Y"}, "unknown subject name strategy"),
    ({"header.converter": AVRO}, "header.converter: " + AVRO + " cannot be a header converter"),
    ({"header.converter": "io.debezium.converters.CloudEventsConverter"},
     "header.converter: io.debezium.converters.CloudEventsConverter cannot be a header converter"),
    ({"value.converter": PROTOBUF}, "value.converter.schema.registry.url: required by " + PROTOBUF),
    *[({**PROTO_REG, f"value.converter.{name}": value}, f"value.converter.{name}: only {only} is supported yet")
      for name, value, only in (("skip.known.types", "false", "true"),
                                ("normalize.schemas", "true", "false"))],
    *[({**PROTO_REG, f"value.converter.{name}": "yes"}, f"value.converter.{name}: must be true or false")
      for name in ("wrapper.for.nullables", "optional.for.nullables", "enhanced.protobuf.schema.support",
                   "scrub.invalid.names", "optional.for.proto2", "reference.lookup.only")],
    ({**PROTO_REG, "value.converter.use.latest.version": "true", "value.converter.auto.register.schemas": "false"},
     f"value.converter.use.latest.version: true is not supported yet with auto.register.schemas=false by {PROTOBUF}"),
    ({**REG, "value.converter.scrub.invalid.names": "true", "value.converter.use.latest.version": "true",
      "value.converter.auto.register.schemas": "false"},
     "value.converter.scrub.invalid.names: true is not supported yet with use.latest.version=true and "
     "auto.register.schemas=false"),
    ({**REG, "value.converter.connect.meta.data": "no"}, "value.converter.connect.meta.data: must be true or false"),
    ({**PROTO_REG, "value.converter.schema.registry.ssl.cipher.suites": "x"},
     "value.converter.schema.registry.ssl.cipher.suites: is not supported yet by " + PROTOBUF),
    ({**PROTO_REG, "value.converter.connect.meta.data": "true"}, "unknown option 'connect.meta.data' of " + PROTOBUF),
    *[({"value.converter": cls}, f"value.converter: {cls} is not supported yet") for cls in (
        "io.apicurio.registry.utils.converter.ProtobufConverter",)],
    ({"value.converter": "io.apicurio.registry.utils.converter.JsonConverter"},
     "value.converter: io.apicurio.registry.utils.converter.JsonConverter: no such class in Apicurio Registry's "
     "converters (3.0.9 to 3.3.1); its JSON converter is " + EXT_JSON),
    ({"value.converter": DBZ + "BinaryDataConverter", "value.converter.delegate.converter.type": EXT_JSON},
     "value.converter.delegate.converter.type: " + EXT_JSON + " is not supported yet as a delegate"),
    ({"value.converter": STRING, "value.converter.converter.encoding": "klingon"},
     "value.converter.converter.encoding: unknown character encoding (got 'klingon')"),
    ({"value.converter": DBZ + "BinaryDataConverter", "value.converter.delegate.converter.type": "x.Nope"},
     "value.converter.delegate.converter.type: not a converter class pgcdc can delegate to (got 'x.Nope')"),
    ({"value.converter": DBZ + "BinaryDataConverter", "value.converter.delegate.converter.type": JSON,
      "value.converter.delegate.converter.type.bogus": "1"},
     "value.converter.delegate.converter.type.bogus: unknown option 'bogus' of " + JSON),
    ({"value.converter": DBZ + "BinaryDataConverter", "value.converter.delegate.converter.type": AVRO},
     "value.converter.delegate.converter.type.schema.registry.url: required by " + AVRO),
    ({"value.converter": KC + "IntegerConverter", "value.converter.schemas.enable": "true"},
     "value.converter.schemas.enable: unknown option 'schemas.enable' of " + KC + "IntegerConverter"),
    ({"header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
      "key.converter.schemas.enable": "false"}, "header.converter: org.apache.kafka.connect.storage."
                                                "SimpleHeaderConverter writes the __debezium.newkey/oldkey"),
    ({"value.converter": APICURIO}, "value.converter.apicurio.registry.url: required by " + APICURIO),
    ({**AREG, "value.converter.apicurio.registry.headers.value.contentId.name": "id"},
     "value.converter.apicurio.registry.headers.value.contentId.name: is not supported yet by " + APICURIO),
    ({**AREG, "value.converter.apicurio.registry.auth.client.id": "c"},
     "value.converter.apicurio.registry.auth.client.id: is not supported yet by " + APICURIO),
    ({**AREG, "value.converter.apicurio.registry.use-id": "contentid"},
     "value.converter.apicurio.registry.use-id: use contentId or globalId (got 'contentid')"),
    ({**AREG, "value.converter.apicurio.registry.artifact-resolver-strategy": "io.apicurio.registry.serde.avro."
      "strategy.RecordIdStrategy"}, "value.converter.apicurio.registry.artifact-resolver-strategy: only "),
    ({"value.converter": EXT_JSON}, "value.converter.apicurio.registry.url: required by " + EXT_JSON),
    ({**EREG, "value.converter.decimal.format": "NUMERIC"},
     "value.converter.decimal.format: NUMERIC is not supported yet by ExtJsonConverter (Connect decimals are "
     "written as base64 bytes); "
     "decimal.handling.mode=string writes them as text, double as JSON numbers (got 'NUMERIC')"),
    ({**EREG, "value.converter.apicurio.registry.avro.encoding": "JSON"},
     "value.converter.apicurio.registry.avro.encoding: unknown option 'apicurio.registry.avro.encoding' of "
     + EXT_JSON),
    ({**EREG, "value.converter.apicurio.registry.artifact.version": "3"},
     "value.converter.apicurio.registry.artifact.version: is not supported yet by " + EXT_JSON),
]


@pytest.mark.parametrize("props, message", BAD)
def test_bad_converter_settings_are_one_line(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config({**BASE, **props})
    assert message in str(err.value) and "\n" not in str(err.value)


class ListSink:
    def __init__(self) -> None:
        self.records: list[tuple[str, bytes | None, bytes | None]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append((topic, key, value))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _events(columns: list[tuple[str, str]]) -> TableEvents:
    specs = [ColumnSpec(name, t, t, -1, name == "id") for name, t in columns]
    return TableEvents("public", "t", specs, ["id"], EnvelopeSettings("dbserver1", Modes()))


SOURCE = {"version": "3.6.3.Final", "connector": "postgresql", "name": "dbserver1", "ts_ms": 1, "snapshot": "false",
          "db": "inventory", "sequence": None, "ts_us": 1, "ts_ns": 1, "schema": "public", "table": "t", "txId": 1,
          "lsn": 1, "xmin": None, "origin": None, "origin_lsn": None}


def _send(sink: ConvertingSink, t: TableEvents, values: list[str]) -> None:
    after = t.row(values, 0)
    sink.send(t.topic, t.key(after), t.value({"before": None, "after": after, "source": SOURCE,
                                              "transaction": None, "op": "c", "ts_ms": 1, "ts_us": 1, "ts_ns": 1}))


def test_a_schema_version_is_registered_once() -> None:
    config = build_config({**BASE, "key.converter": AVRO, "value.converter": AVRO,
                           "converter.schema.registry.url": "mock://once"})
    key, value, _ = make_converters(config, lambda: False)
    assert key is not None and value is not None
    inner = ListSink()
    sink = ConvertingSink(inner, key, value)
    v1 = _events([("id", "int4"), ("v", "text")])
    for i in range(50):
        _send(sink, v1, [str(i), "x"])
    assert (key.registrations, value.registrations) == (1, 1)  # type: ignore[attr-defined]
    v2 = _events([("id", "int4"), ("v", "text"), ("added", "int8")])  # a column added mid-stream
    for i in range(50):
        _send(sink, v2, [str(i), "y", "7"])
    assert (key.registrations, value.registrations) == (1, 2)  # type: ignore[attr-defined]
    client = value.client  # type: ignore[attr-defined]
    assert sorted(client.get_versions("dbserver1.public.t-value")) == [1, 2]
    ids = {rec[2][1:5] for rec in inner.records if rec[2] is not None}
    assert len(ids) == 2 and all(rec[2] is not None and rec[2][0] == 0 for rec in inner.records)
    second = orjson.loads(client.get_latest_version("dbserver1.public.t-value").schema.schema_str)
    assert [f["name"] for f in second["fields"][0]["type"][1]["fields"]] == ["id", "v", "added"]


def test_interleaved_schema_versions_each_write_with_their_own() -> None:
    # The sink reuses the last record's prepared schema when a record starts with the same schema JSON: records
    # of two versions taking turns (and a schema that is a prefix of the other's fields) each keep their own.
    import io

    import fastavro

    config = build_config({**BASE, **REG, "value.converter.schema.registry.url": "mock://turns"})
    _, value, _ = make_converters(config, lambda: False)
    assert value is not None
    inner = ListSink()
    sink = ConvertingSink(inner, None, value)
    v1 = _events([("id", "int4"), ("v", "text")])
    v2 = _events([("id", "int4"), ("v", "text"), ("added", "int8")])
    for i in range(6):
        if i % 3 == 2:
            _send(sink, v2, [str(i), f"v{i}", str(i * 10)])
        else:
            _send(sink, v1, [str(i), f"v{i}"])
    client = value.client  # type: ignore[attr-defined]
    rows = []
    for rec in inner.records:
        schema = client.get_schema(int.from_bytes(rec[2][1:5], "big")).schema_str
        rows.append(fastavro.schemaless_reader(io.BytesIO(rec[2][5:]), fastavro.parse_schema(orjson.loads(schema)),
                                               None)["after"])
    assert rows == [{"id": 0, "v": "v0"}, {"id": 1, "v": "v1"}, {"id": 2, "v": "v2", "added": 20},
                    {"id": 3, "v": "v3"}, {"id": 4, "v": "v4"}, {"id": 5, "v": "v5", "added": 50}]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_registry_holds_records(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    config = build_config({**BASE, **REG, "value.converter.schema.registry.url": url})
    stop = threading.Event()
    _, value, _ = make_converters(config, stop.is_set)
    inner = ListSink()
    sink = ConvertingSink(inner, None, value)
    errors: list[BaseException] = []

    def send() -> None:
        try:
            _send(sink, _events([("id", "int4")]), ["1"])
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=send)
    with caplog.at_level(logging.WARNING, logger="pgcdc.converters.avro"):
        thread.start()
        deadline = time.monotonic() + 30
        while not any("records wait" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert thread.is_alive() and inner.records == []  # held: nothing written without its schema id
        stop.set()
        thread.join(60)
    line = next(r.getMessage() for r in caplog.records if "records wait" in r.getMessage())
    assert line.startswith(f"schema registry {url}: subject dbserver1.public.t-value: ") and "\n" not in line
    assert len(errors) == 1 and isinstance(errors[0], SinkError) and inner.records == []


def test_use_latest_version_writes_with_the_latest_schema() -> None:
    """use.latest.version: the record goes out under the subject's latest id, encoded with that schema."""
    register = build_config({**BASE, **REG, "value.converter.schema.registry.url": "mock://latest"})
    _, first, _ = make_converters(register, lambda: False)
    assert first is not None
    inner = ListSink()
    _send(ConvertingSink(inner, None, first), _events([("id", "int4"), ("v", "text")]), ["1", "x"])
    latest = build_config({**BASE, **REG, "value.converter.schema.registry.url": "mock://latest",
                           "value.converter.use.latest.version": "true",
                           "value.converter.auto.register.schemas": "false",
                           "value.converter.latest.compatibility.strict": "false"})
    _, value, _ = make_converters(latest, lambda: False)
    assert value is not None
    value.client = first.client  # type: ignore[attr-defined]  # the mock registry lives in its client
    _send(ConvertingSink(inner, None, value), _events([("id", "int4"), ("v", "text")]), ["2", "y"])
    assert inner.records[0][2] is not None and inner.records[1][2] is not None
    assert inner.records[1][2][:5] == inner.records[0][2][:5]
    assert first.registrations == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", [AVRO, PROTOBUF])
def test_use_latest_version_with_auto_register_registers(cls: str) -> None:
    """Confluent's serializers register first when auto.register.schemas is true (the default), so
    use.latest.version=true on a subject nothing is registered under yet writes the record's own schema (measured
    with both converters: tests/conformance, the `use.latest.version` option scenarios)."""
    config = build_config({**BASE, "value.converter": cls, "value.converter.schema.registry.url": f"mock://fresh-{cls}",
                           "value.converter.use.latest.version": "true"})
    _, value, _ = make_converters(config, lambda: True)  # stopping: a registry error would end the send at once
    assert value is not None
    inner = ListSink()
    _send(ConvertingSink(inner, None, value), _events([("id", "int4"), ("v", "text")]), ["1", "x"])
    assert inner.records[0][2] is not None and inner.records[0][2][:1] == b"\x00"
    assert value.client.get_latest_version("dbserver1.public.t-value")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name, scrubbed", [
    # Measured against Confluent's converter 7.0.16 (tests/conformance/test_avro_vs_debezium.py, scrub scenarios)
    ("c🎉", "c_F0_9F_8E_89"), ("1st", "x1st"), ("a-b", "a_b"), ("a b", "a_b"), ("é", "_C3_A9"), ("_ok", "_ok"),
    ("x.y", "x_y"), ("ab%", "ab_25"), ("Ü2", "_C3_9C2"), ("9", "x9"), ("t~", "t_7E"), ("ok", "ok")])
def test_scrubbed_names(name: str, scrubbed: str) -> None:
    from pgcdc.converters.avro_schema import scrub_name

    assert scrub_name(name) == scrubbed


def test_avro_options_shape_the_schema_and_keep_the_bytes() -> None:
    """connect.meta.data=false drops every connect.* property; scrub.invalid.names=true writes scrubbed names
    (namespace part by part) while the records, keyed by Connect's names, encode to the same bytes."""
    import io

    import fastavro

    from pgcdc.converters.avro_schema import avro_schema_text, names_schema_text, writer_schema

    specs = [ColumnSpec(name, kind, kind, -1, name == "id") for name, kind in (("id", "int4"), ("a-b", "int2"),
                                                                              ("c🎉", "text"))]
    t = TableEvents("1s", "my-table", specs, ["id"], EnvelopeSettings("dbserver1", Modes()))
    schema = orjson.loads(t.value({"before": None, "after": None, "source": SOURCE, "transaction": None, "op": "c",
                                   "ts_ms": 1, "ts_us": 1, "ts_ns": 1}))["schema"]
    plain = avro_schema_text(schema, meta=False, scrub=True)
    assert "connect." not in plain and '"a_b"' in plain
    scrubbed = orjson.loads(avro_schema_text(schema, scrub=True))
    value = scrubbed["fields"][0]["type"][1]
    assert [f["name"] for f in value["fields"]] == ["id", "a_b", "c_F0_9F_8E_89"]
    assert scrubbed["namespace"] == "dbserver1.x1s.my_table"
    assert value["connect.name"] == "dbserver1.1s.my-table.Value"  # connect.name keeps Connect's name
    names = names_schema_text(schema)
    row = {"id": 1, "a-b": -2, "c🎉": "🎉"}
    datum = {"before": None, "after": row, "source": SOURCE, "transaction": None, "op": "c", "ts_ms": 1,
             "ts_us": 1, "ts_ns": 1}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer_schema(names)), datum)
    back = fastavro.schemaless_reader(io.BytesIO(out.getvalue()), fastavro.parse_schema(
        writer_schema(orjson.dumps(scrubbed).decode())), None)
    assert back["after"] == {"id": 1, "a_b": -2, "c_F0_9F_8E_89": "🎉"}
