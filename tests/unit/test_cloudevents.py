"""CloudEventsConverter on recorded records: the envelope JSON pgcdc's converter received in a conformance run
(tests/conformance/test_cloudevents_vs_debezium.py with PGCDC_RECORD_CLOUDEVENTS=1) converted again, compared
with what Debezium 3.6.3's CloudEventsConverter wrote in that run, as the conformance test compares them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from pgcdc.config import build_config
from pgcdc.converters.cloudevents import event_time, extension_name
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.errors import ConfigError, ConversionError
from tests.conformance.cloudevents_compare import OurRegistry, ce_differences

DATA = Path(__file__).resolve().parents[1] / "data" / "cloudevents"
CE = "io.debezium.converters.CloudEventsConverter"
BASE = {"topic.prefix": "dbserver1", "database.hostname": "127.0.0.1", "database.user": "u",
        "database.dbname": "inventory", "bootstrap.servers": "127.0.0.1:9092"}
LABELS = sorted(p.name[:-len(".json")] for p in DATA.glob("*.json"))
HEARTBEATS = "__debezium-heartbeat"


class ListSink:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append({"topic": topic, "key": key and key.hex(), "value": value and value.hex()})

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _converters(options: dict[str, str], scope: str) -> tuple[Any, Any, Any]:
    config = build_config({**BASE, "key.converter": CE, "value.converter": CE,
                           **{f"converter.{k}": v for k, v in options.items()}})
    key, value, _ = make_converters(config, lambda: False)
    registry = SchemaRegistryClient.new_client({"url": f"mock://{scope}"})
    for conv in (key, value):
        if conv.avro is not None:  # type: ignore[union-attr]
            conv.avro.client = registry  # type: ignore[union-attr]
    return key, value, registry


def test_recordings_exist() -> None:
    assert len(LABELS) >= 8, LABELS


@pytest.mark.parametrize("label", LABELS)
def test_recorded_cloudevents_match_debezium(label: str) -> None:
    meta = json.loads((DATA / f"{label}.json").read_text())
    key, value, registry = _converters(meta["options"], f"unit-{label}")
    out = ListSink()
    sink = ConvertingSink(out, key, value)
    for line in (DATA / f"{label}.input.jsonl").read_text().splitlines():
        rec = json.loads(line)
        headers = [(k, v.encode()) for k, v in rec.get("headers", ())]
        sink.send(rec["topic"], rec["key"] and rec["key"].encode(), rec["value"] and rec["value"].encode(), headers)
    theirs, schemas = [], {}
    for line in (DATA / f"{label}.debezium.jsonl").read_text().splitlines():
        rec = json.loads(line)
        schemas.update({int(k): v for k, v in rec.pop("schemas").items()})
        theirs.append({**rec, "registry": schemas})
    ours = [{**r, "registry": OurRegistry(registry)} for r in out.records]
    # Heartbeats, each connector's own: a null record on both sides, then left out.
    assert all(r["key"] is None and r["value"] is None for r in ours + theirs if r["topic"].startswith(HEARTBEATS))
    ours, theirs = ([r for r in rs if not r["topic"].startswith(HEARTBEATS)] for rs in (ours, theirs))
    assert any(r["value"] is not None for r in theirs)
    problems = ce_differences(ours, theirs, meta["options"], meta["snapshot"])
    assert not problems, "\n".join(problems[:10])


def test_avro_schemas_are_registered_once_per_version() -> None:
    label = "kinds_avro_avro"
    meta = json.loads((DATA / f"{label}.json").read_text())
    _, value, registry = _converters(meta["options"], "unit-once")
    sink = ConvertingSink(ListSink(), None, value)
    lines = (DATA / f"{label}.input.jsonl").read_text().splitlines()
    for line in lines * 3:
        rec = json.loads(line)
        sink.send(rec["topic"], None, rec["value"] and rec["value"].encode())
    subjects = registry.get_subjects()
    # the data under `<topic>-data-value`, the event under `<topic>-value`: one registration each per schema
    assert value.avro.registrations == len(subjects) and subjects  # type: ignore[attr-defined]
    assert {s for s in subjects if s.endswith("-data-value")}
    assert {s for s in subjects if not s.endswith("-data-value")}


@pytest.mark.parametrize(("ms", "text"), [(0, "1970-01-01T00:00:00.000Z"), (1795631690014, "2026-11-25T18:34:50.014Z"),
                                          (-1, "1969-12-31T23:59:59.999Z")])
def test_event_time(ms: int, text: str) -> None:
    assert event_time(ms) == text


def test_extension_names() -> None:
    assert [extension_name(n) for n in ("ts_ms", "txId", "origin_lsn", "txtotal_order")] == [
        "iodebeziumtsms", "iodebeziumtxId", "iodebeziumoriginlsn", "iodebeziumtxtotalorder"]


@pytest.mark.parametrize(("props", "message"), [
    ({"value.converter.serializer.type": "avro", "value.converter.avro.schema.registry.url": "http://r"},
     "value.converter.data.serializer.type: cannot use 'application/json' data content type within Avro events"),
    ({"value.converter.data.serializer.type": "avro"},
     "value.converter.avro.schema.registry.url: required by io.debezium.converters.CloudEventsConverter with Avro"),
    ({"value.converter.serializer.type": "xml"}, "value.converter.serializer.type: only json or avro"),
    ({"value.converter.json.nope": "1"}, "value.converter.json.nope: unknown option 'json.nope'"),
    ({"value.converter.metadata.source": "headers"}, "global metadata source can't be 'headers'"),
    ({"value.converter.metadata.source": "value,id:nowhere"}, "field source 'nowhere' of 'id' is not valid"),
    ({"value.converter.metadata.source": "value,op:generate"}, "field 'op' is not allowed to set a custom source"),
    ({"value.converter.opentelemetry.tracing.attributes.enable": "true"},
     "value.converter.opentelemetry.tracing.attributes.enable: only false"),
])
def test_bad_cloudevents_settings_are_one_line(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_config({**BASE, "value.converter": CE, **props})
    assert message in str(err.value) and "\n" not in str(err.value)


A = "value.converter.avro.apicurio.registry."
APICURIO_CE = {"value.converter": CE, "value.converter.data.serializer.type": "avro", A + "url": "http://r",
               A + "auto-register": "true"}


@pytest.mark.parametrize(("props", "message"), [
    ({A + "auto-register": "false"}, A + "auto-register: only true is supported yet with " + CE),
    ({A + "auto-register": "maybe"}, A + "auto-register: must be true or false (got 'maybe')"),
    ({A + "url": "http://r,http://s"}, A + "url: one URL only"),
    ({A + "url": " "}, A + "url: must name Apicurio Registry's URL"),
    ({A + "use-id": "id"}, A + "use-id: use contentId or globalId (got 'id')"),
    ({A + "id-handler": "x.Handler"}, A + "id-handler: use io.apicurio.registry.serde.Default4ByteIdHandler or "),
    ({A + "artifact-resolver-strategy": "x.S"}, A + "artifact-resolver-strategy: only "),
    ({A + "nope": "1"}, A + "nope: unknown option 'avro.apicurio.registry.nope'"),
    ({A + "fallback.artifact-id": "a"}, A + "fallback.artifact-id: is not supported yet by " + CE),
    # Apicurio's converter is the one configured: Confluent's options are not its
    ({"value.converter.avro.schema.registry.url": "http://c"}, "value.converter.avro.schema.registry.url: unknown "),
])
def test_bad_apicurio_cloudevents_settings_are_one_line(props: dict[str, str], message: str) -> None:
    """CloudEventsConverter with `avro.apicurio.registry.url`: the `avro.*` options are Apicurio's converter's,
    checked by its table (pgcdc/converters/settings.py)."""
    build_config({**BASE, **APICURIO_CE})  # accepted as it is
    with pytest.raises(ConfigError) as err:
        build_config({**BASE, **APICURIO_CE, **props})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_missing_metadata_header_stops_with_one_line() -> None:
    """metadata.source=header with the id read from headers too (Debezium: `Header `id` was not provided`)."""
    config = build_config({**BASE, "value.converter": CE, "value.converter.metadata.source": "header"})
    _, value, _ = make_converters(config, lambda: False)
    record = next(json.loads(line) for line in (DATA / "kinds_json_json.input.jsonl").read_text().splitlines()
                  if json.loads(line)["topic"] == "dbserver1.public.items")
    payload = json.loads(record["value"])["payload"]
    headers = [(name, json.dumps({"schema": None, "payload": payload[name]}).encode()) for name in ("source", "op")]
    sink = ConvertingSink(ListSink(), None, value)
    with pytest.raises(ConversionError) as err:
        sink.send(record["topic"], None, record["value"].encode(), headers)
    assert "header `id` was not provided" in str(err.value) and "\n" not in str(err.value)
    sink.send(record["topic"], None, record["value"].encode(), headers[:1])  # no `op` header: not an event
    assert sink.sink.records[-1]["value"] is None  # type: ignore[attr-defined]
