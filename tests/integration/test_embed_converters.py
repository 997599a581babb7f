"""The embedding API's Event view on Protobuf and CloudEvents records, against a real PostgreSQL and a real
schema registry (Apicurio Registry): the typed values are those of the JSON path, and the bytes are the
converter's, which a consumer of their own decodes to the same change."""

from __future__ import annotations

import base64
import io
from typing import Any

import fastavro
import orjson
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.converters.apicurio import registry_base
from pgcdc.converters.avro_schema import writer_schema
from pgcdc.embed import Engine, Event
from pgcdc.embed.values import decoder
from pgcdc.local import ApicurioRegistry, PostgresCluster
from tests.integration.test_apicurio_converter import fetch
from tests.integration.test_embed import props, take
from tests.integration.test_embed_transformed import TABLE, WORKLOAD, _view
from tests.integration.test_protobuf_registry import PROTOBUF, decode

CE = "io.debezium.converters.CloudEventsConverter"


def _two_engines(pg: PostgresCluster, dbname: str, extra: dict[str, str], n: int
                 ) -> tuple[list[Event], list[Event], Engine]:
    """WORKLOAD through an engine with `extra` (converters) and one with JsonConverter; the first engine too."""
    common = {"topic.prefix": dbname}  # topics named after the database: the registry outlives the test
    with Engine(props(pg, dbname, **common, **extra)) as converted, \
            Engine(props(pg, dbname, **common, **{"slot.name": f"j_{dbname}",
                                                  "publication.name": f"jp_{dbname}"})) as plain:
        for stmt in WORKLOAD:
            pg.execute(stmt, dbname)
        return take(converted, n), take(plain, n), converted


def test_protobuf_records_have_the_json_paths_typed_values(pg: PostgresCluster, dbname: str,
                                                           registry: ApicurioRegistry) -> None:
    pg.execute(TABLE, dbname)
    extra = {"key.converter": PROTOBUF, "value.converter": PROTOBUF, "converter.schema.registry.url": registry.url}
    ours, json_path, engine = _two_engines(pg, dbname, extra, 5)
    assert [e.op for e in ours] == ["c", "c", "u", "d", None] and ours[-1].kind == "tombstone"
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    # The bytes are Protobuf in Confluent's wire format: read with the protobuf runtime (confluent-kafka's
    # ProtobufDeserializer) and the message class of the schema text the registry holds under each record's id.
    forms: dict[str, Any] = {}
    for conv in engine.connector.converters[:2]:
        forms.update({text: form.message_class for text, form in conv.forms.items()})  # type: ignore[union-attr]
    changes = ours[:4]
    read = decode(registry.url, ours[0].topic, [(e.key, e.value) for e in changes], forms)
    for e, (key, value, _) in zip(changes, read, strict=True):
        row = e.after if e.op != "d" else e.before
        assert row is not None and key == {"id": row["id"]} == e.key_values
        # proto3 leaves int64 as JSON strings in MessageToDict, and fields at their default value off the wire.
        assert value["op"] == e.op and int(value["source"]["lsn"]) == e.lsn
        assert value["after" if e.op != "d" else "before"]["id"] == row["id"]


@pytest.mark.parametrize(("events", "data"), [("json", "json"), ("json", "avro"), ("avro", "avro")])
def test_cloudevents_records_have_the_json_paths_typed_values_and_their_attributes(
        pg: PostgresCluster, dbname: str, registry: ApicurioRegistry, events: str, data: str) -> None:
    pg.execute(TABLE, dbname)
    extra = {"value.converter": CE, "value.converter.serializer.type": events,
             "value.converter.data.serializer.type": data, "value.converter.avro.schema.registry.url": registry.url}
    ours, json_path, _ = _two_engines(pg, dbname, extra, 5)
    assert [e.op for e in ours] == ["c", "c", "u", "d", None] and ours[-1].kind == "tombstone"
    # What happened and the rows: those of the JSON path (the envelope, whose before/after are the event's data).
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    assert ours[-1].cloudevent is None and all(e.cloudevent is None for e in json_path)
    client = SchemaRegistryClient({"url": registry.url})
    read_avro = AvroDeserializer(client)
    topic = ours[0].topic
    for e in ours[:4]:
        assert e.value is not None and e.cloudevent is not None
        # The attributes are the record's: as a consumer of their own reads the bytes.
        if events == "json":
            event = orjson.loads(e.value)
        else:
            event = read_avro(e.value, SerializationContext(topic, MessageField.VALUE))
        raw_data = event.pop("data")
        assert e.cloudevent == event
        assert (e.cloudevent["id"] == f"name:{dbname};lsn:{e.lsn};txId:{e.source['txId']};"
                                      f"sequence:{e.source['sequence']}")
        assert e.cloudevent["source"] == f"/debezium/postgresql/{dbname}" and e.cloudevent["specversion"] == "1.0"
        assert e.cloudevent["type"] == "io.debezium.connector.postgresql.DataChangeEvent"
        assert (e.cloudevent["iodebeziumop"], e.cloudevent["iodebeziumlsn"]) == (e.op, str(e.lsn))
        assert e.cloudevent["datacontenttype"] == f"application/{data}"
        assert e.cloudevent["time"].endswith("Z") and ("dataschema" in e.cloudevent) == (data == "avro")
        # The event's data holds the rows the view gives.
        if data == "json":
            assert decoder(raw_data["schema"])(raw_data["payload"]) == {"before": e.before, "after": e.after}
        else:
            wire = raw_data if isinstance(raw_data, bytes) else base64.b64decode(raw_data)
            inner = read_avro(wire, SerializationContext(f"{topic}-data", MessageField.VALUE))
            for field in ("before", "after"):
                row = getattr(e, field)
                assert (inner[field] or {}).get("id") == (row or {}).get("id")
                assert inner[field] is None or inner[field]["amount"] == row["amount"]


def test_cloudevents_with_apicurio_8_byte_ids_have_their_attributes(pg: PostgresCluster, dbname: str,
                                                                    registry: ApicurioRegistry) -> None:
    """Avro events through Apicurio's converter with 8-byte global ids: the view reads the attributes with the
    schema written under the record's 9-byte header, as a consumer reads them with the schema the registry holds
    under that global id."""
    pg.execute(TABLE, dbname)
    v3 = f"{registry_base(registry.url)}/apis/registry/v3"
    a = "value.converter.avro.apicurio.registry."
    extra = {"value.converter": CE, "value.converter.serializer.type": "avro",
             "value.converter.data.serializer.type": "avro", a + "url": v3, a + "auto-register": "true",
             a + "use-id": "globalId", a + "id-handler": "io.apicurio.registry.serde.Legacy8ByteIdHandler"}
    ours, json_path, _ = _two_engines(pg, dbname, extra, 5)
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    for e in ours[:4]:
        assert e.value is not None and e.value[0] == 0 and e.cloudevent is not None
        text = fetch(f"{v3}/ids/globalIds/{int.from_bytes(e.value[1:9], 'big')}", raw=True)
        event = fastavro.schemaless_reader(io.BytesIO(e.value[9:]), fastavro.parse_schema(writer_schema(text)), None)
        assert isinstance(event, dict)
        event.pop("data")
        assert e.cloudevent == event
        # Debezium reads the `dataschema` id as the 4 bytes after the magic byte: the 8-byte id's high half
        assert event["dataschema"] == f"{v3}/schemas/ids/0" and event["iodebeziumop"] == e.op
