"""Debezium's CloudEventsConverter (Debezium 3.6.3 SourceRecords converted in the JVM, as a Kafka Connect worker
with `key.converter` and `value.converter` set to it would) and pgcdc's, record by record, for keys and values:
JSON events with JSON data (schemas on and off), JSON events with Avro data, Avro events with Avro data (the
registry's schemas through Confluent's MockSchemaRegistryClient on Debezium's side and confluent-kafka's mock
client on pgcdc's, both named `http://registry.invalid` in `dataschema`).

What is compared: the topic; key and value bytes. JSON events are compared as bytes, except in a snapshot.
Both connectors read the same WAL while streaming, so `id` (lsn, txId, sequence) and `time` (source ts_ms)
are equal there. A snapshot reads each connector's own slot's snapshot: the attributes made of
compare.SNAPSHOT_FIELDS (`id`, `time`, `iodebeziumtsms`/`tsus`/`tsns`, `iodebeziumlsn`, `iodebeziumtxId`,
`iodebeziumsequence`) are masked, and on each side `id` and `time` are checked against that side's own
attributes (`name:<name>;lsn:<lsn>;txId:<txId>;sequence:<sequence>`, `time` the ts_ms in UTC); the rest of the
JSON text must be equal. Avro bytes: the registered schema texts equal, the event decoded with its schema (its
`data` likewise) and the masked datums equal, each side's bytes first checked to be what their datum encodes to.
A `dataschema` URL is compared with its id replaced by the schema text it names.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.local import PostgresCluster
from tests.conformance.cloudevents_compare import OurRegistry, assert_same_ce
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_avro_vs_debezium import RawSink
from tests.conformance.test_debezium_streaming import SCENARIOS, run_workload, slot_active
from tests.conformance.test_zoo_vs_debezium import MODES as ZOO_MODES
from tests.conformance.test_zoo_vs_debezium import ROWS as ZOO_ROWS
from tests.conformance.test_zoo_vs_debezium import SETUP as ZOO_SETUP
from tests.harness import Running, make_config, wait_for

CE = "io.debezium.converters.CloudEventsConverter"
URL = "http://registry.invalid"
DATA = Path(__file__).resolve().parents[1] / "data" / "cloudevents"
FORMATS: dict[str, dict[str, str]] = {
    "json_json": {},
    "json_json_noschemas": {"json.schemas.enable": "false"},
    "json_avro": {"data.serializer.type": "avro", "avro.schema.registry.url": URL},
    "avro_avro": {"serializer.type": "avro", "data.serializer.type": "avro", "avro.schema.registry.url": URL},
}


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().split("\n")[:-1] if line.strip()]


class InputTee(ConvertingSink):
    """A ConvertingSink (the runner adds none around it) that also writes each record it gets, the envelope's
    JSON, to a file."""

    def __init__(self, sink: Any, key: Any, value: Any, path: Path) -> None:
        super().__init__(sink, key, value)
        object.__setattr__(self, "out", open(path, "w"))

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.out.write(json.dumps({"topic": topic, "key": key and key.decode(), "value": value and value.decode(),
                                   "headers": [[k, v.decode()] for k, v in headers or ()]}) + "\n")
        self.out.flush()
        super().send(topic, key, value, headers, partition)

    def close(self) -> None:
        self.out.close()
        super().close()


def _changes(path: Path) -> int:
    return sum(1 for r in _lines(path) if not r["topic"].startswith("__debezium-heartbeat"))


def run_both_ce(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                workload: list[str], options: dict[str, str], snapshot: bool = False,
                label: str | None = None) -> tuple[list[Any], list[Any]]:
    """Both connectors on the workload; with PGCDC_RECORD_CLOUDEVENTS=1 and a label, pgcdc's converter input and
    Debezium's output are recorded under tests/data/cloudevents for the unit tests."""
    record = bool(os.environ.get("PGCDC_RECORD_CLOUDEVENTS")) and label is not None
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial" if snapshot else "no_data", **props}
    oracle = start_oracle({"name": "oracle", "cloudevents": options, "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{
            **common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}", "publication.name": f"pgcdcpub_{dbname}",
            "key.converter": CE, "value.converter": CE, **{f"converter.{k}": v for k, v in options.items()}})
        key_conv, value_conv, _ = make_converters(config, lambda: False)
        registry = SchemaRegistryClient.new_client({"url": f"mock://ce-{dbname}"})
        for conv in (key_conv, value_conv):  # the registry named in `dataschema`, served by the mock client
            if getattr(conv, "avro", None) is not None:
                conv.avro.client = registry  # type: ignore[union-attr]
        sink = (InputTee(RawSink(ours_path), key_conv, value_conv, tmp_path / "input.jsonl") if record
                else ConvertingSink(RawSink(ours_path), key_conv, value_conv))
        with Running(config, sink=sink):
            run_workload(pg, dbname, workload, lambda: _changes(theirs_path), lambda: _changes(ours_path))
    finally:
        stop_oracle(oracle, theirs_path)
    if record:
        DATA.mkdir(parents=True, exist_ok=True)
        (DATA / f"{label}.input.jsonl").write_text((tmp_path / "input.jsonl").read_text())
        (DATA / f"{label}.debezium.jsonl").write_text(theirs_path.read_text())
        (DATA / f"{label}.json").write_text(json.dumps({"options": options, "snapshot": snapshot}, indent=1) + "\n")
    ours, theirs = _lines(ours_path), _lines(theirs_path)
    their_schemas: dict[int, str] = {}
    for rec in theirs:
        their_schemas.update({int(k): v for k, v in rec.pop("schemas").items()})
        rec["registry"] = their_schemas
    for rec in ours:
        rec["registry"] = OurRegistry(registry)
    return ours, theirs


# Every record kind: inserts, updates, key changes, deletes and their tombstones, truncates, logical-decoding
# messages, transaction metadata (BEGIN/END records), heartbeats; then the type zoo in every handling mode.
KINDS_PROPS = {"provide.transaction.metadata": "true", "heartbeat.interval.ms": "500"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_cloudevents_record_kinds_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, fmt: str) -> None:
    setup, props, workload = SCENARIOS["ops"]
    ours, theirs = run_both_ce(pg, dbname, tmp_path, setup, {**props, **KINDS_PROPS}, workload, FORMATS[fmt],
                               label=f"kinds_{fmt}")
    # Heartbeats come at each connector's own pace: compared by kind (null key and value), then left out.
    beats = [[r for r in rs if r["topic"].startswith("__debezium-heartbeat")] for rs in (ours, theirs)]
    assert beats[1] and beats[0], "no heartbeat records"
    assert all(r["key"] is None and r["value"] is None for rs in beats for r in rs)
    ours, theirs = ([r for r in rs if not r["topic"].startswith("__debezium-heartbeat")] for rs in (ours, theirs))
    assert_same_ce(f"kinds {fmt}", ours, theirs, FORMATS[fmt])


AVRO_AVRO = FORMATS["avro_avro"]
# (converter options, connector properties): the event's schema name given, or adjusted from an odd topic.prefix
OPTIONS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "no_extensions": ({"extension.attributes.enable": "false"}, {}),
    "named": ({**AVRO_AVRO, "schema.cloudevents.name": "my.Events", "avro.schema.registry.url": f"{URL}, {URL}2",
               "extension.attributes.enable": "false"}, {}),
    "adjusted_unicode": ({**AVRO_AVRO, "schema.name.adjustment.mode": "avro_unicode"},
                         {"topic.prefix": "1-srv", "schema.name.adjustment.mode": "avro"}),
    # The converter hands its `avro.*` options to the AvroConverter writing the event and the data.
    "avro_without_connect_meta_data": ({**AVRO_AVRO, "avro.connect.meta.data": "false",
                                        "avro.enhanced.avro.schema.support": "true"}, {}),
}


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_cloudevents_options_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, name: str) -> None:
    setup, props, workload = SCENARIOS["txmeta"]
    options, extra = OPTIONS[name]
    ours, theirs = run_both_ce(pg, dbname, tmp_path, setup, {**props, **extra}, workload, options,
                               label=f"options_{name}")
    assert_same_ce("options", ours, theirs, options)


@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
@pytest.mark.parametrize("mode", sorted(ZOO_MODES))
@pytest.mark.parametrize("fmt", ["json_json", "avro_avro"])
def test_cloudevents_zoo_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, fmt: str, mode: str,
                                          phase: str) -> None:
    if phase == "snapshot":
        inserts = [row for row in ZOO_ROWS if row.startswith("INSERT")]
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ";".join([ZOO_SETUP, *inserts]), ZOO_MODES[mode], [],
                                   FORMATS[fmt], snapshot=True, label=f"zoo_{fmt}_{mode}_{phase}")
    else:
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ZOO_SETUP, ZOO_MODES[mode], ZOO_ROWS, FORMATS[fmt],
                                   label=f"zoo_{fmt}_{mode}_{phase}")
    assert_same_ce(f"zoo {fmt} {mode} {phase}", ours, theirs, FORMATS[fmt], snapshot=phase == "snapshot")


# metadata.source=header: HeaderFrom copies `source`, `op` and `transaction` into headers (JsonConverter's, with
# schemas), ExtractNewRecordState flattens the value, InsertHeader sets `type` (`type:header`).
HEADER_PROPS = {
    "transforms": "meta,unwrap,kind", "transforms.meta.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
    "transforms.meta.fields": "source,op,transaction", "transforms.meta.headers": "source,op,transaction",
    "transforms.meta.operation": "copy", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.kind.type": "org.apache.kafka.connect.transforms.InsertHeader", "transforms.kind.header": "type",
    "transforms.kind.value.literal": "my.Type", "tombstones.on.delete": "false",
}
HEADER_SETUP = "CREATE TABLE h (id int PRIMARY KEY, v text, f float8, n numeric(5,2))"
HEADER_WORKLOAD = ["INSERT INTO h VALUES (1, 'a', 1.5, 2.25), (2, NULL, 1e20, NULL)", "UPDATE h SET v = 'b'",
                   "DELETE FROM h WHERE id = 2", "BEGIN; INSERT INTO h VALUES (3, 'c', -0.5, 1); COMMIT"]


@pytest.mark.parametrize("fmt", ["json_json", "avro_avro"])
def test_cloudevents_metadata_from_headers_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                            fmt: str) -> None:
    options = {**FORMATS[fmt], "metadata.source": "header,id:generate,type:header"}
    ours, theirs = run_both_ce(pg, dbname, tmp_path, HEADER_SETUP, HEADER_PROPS, HEADER_WORKLOAD, options,
                               label=f"headers_{fmt}")
    assert_same_ce(f"headers {fmt}", ours, theirs, options)


@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
@pytest.mark.parametrize("fmt", ["json_avro", "json_json_noschemas"])
def test_cloudevents_zoo_other_formats_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, fmt: str,
                                                      phase: str) -> None:
    """The zoo in one handling mode with the other two formats (the four modes run above with JSON/JSON and
    Avro/Avro)."""
    props = ZOO_MODES["double_hex_map"]
    if phase == "snapshot":
        inserts = [row for row in ZOO_ROWS if row.startswith("INSERT")]
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ";".join([ZOO_SETUP, *inserts]), props, [], FORMATS[fmt],
                                   snapshot=True)
    else:
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ZOO_SETUP, props, ZOO_ROWS, FORMATS[fmt])
    assert_same_ce(f"zoo {fmt} double_hex_map {phase}", ours, theirs, FORMATS[fmt], snapshot=phase == "snapshot")
