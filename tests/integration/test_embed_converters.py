"""The embedding API's Event view on Protobuf and CloudEvents records, against a real PostgreSQL and a real
schema registry (Apicurio Registry): the typed values are those of the JSON path, and the bytes are the
converter's, which a consumer of their own decodes to the same change."""

from __future__ import annotations

from typing import Any

from pgcdc.embed import Engine, Event
from pgcdc.local import ApicurioRegistry, PostgresCluster
from tests.integration.test_embed import props, take
from tests.integration.test_embed_transformed import TABLE, WORKLOAD, _view
from tests.integration.test_protobuf_registry import PROTOBUF, decode


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
