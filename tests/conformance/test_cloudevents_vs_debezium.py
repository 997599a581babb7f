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

import base64
import io
import json
import time
from pathlib import Path
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from pgcdc.converters.avro_schema import writer_schema
from pgcdc.converters.cloudevents import event_time
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.local import PostgresCluster
from tests.conformance.compare import SNAPSHOT_FIELDS, Num
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_avro_vs_debezium import RawSink
from tests.conformance.test_debezium_streaming import SCENARIOS, slot_active
from tests.conformance.test_zoo_vs_debezium import MODES as ZOO_MODES
from tests.conformance.test_zoo_vs_debezium import ROWS as ZOO_ROWS
from tests.conformance.test_zoo_vs_debezium import SETUP as ZOO_SETUP
from tests.harness import Running, make_config, wait_for

CE = "io.debezium.converters.CloudEventsConverter"
URL = "http://registry.invalid"
MASKED_ATTRIBUTES = ("id", "time", *(f"iodebezium{f.replace('_', '')}" for f in SNAPSHOT_FIELDS))
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


def run_both_ce(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                workload: list[str], options: dict[str, str], snapshot: bool = False) -> tuple[list[Any], list[Any]]:
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
        key_conv, value_conv = make_converters(config, lambda: False)
        registry = SchemaRegistryClient.new_client({"url": f"mock://ce-{dbname}"})
        for conv in (key_conv, value_conv):  # the registry named in `dataschema`, served by the mock client
            if getattr(conv, "avro", None) is not None:
                conv.avro.client = registry  # type: ignore[union-attr]
        sink = ConvertingSink(RawSink(ours_path), key_conv, value_conv)
        with Running(config, sink=sink):
            for stmt in workload:
                pg.execute(stmt, dbname)
            last, stable_since = -1, time.monotonic()
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                n = len(_lines(theirs_path))
                if n != last:
                    last, stable_since = n, time.monotonic()
                elif n and time.monotonic() - stable_since > 4 and len(_lines(ours_path)) >= n:
                    break
                time.sleep(0.2)
    finally:
        stop_oracle(oracle, theirs_path)
    ours, theirs = _lines(ours_path), _lines(theirs_path)
    their_schemas: dict[int, str] = {}
    for rec in theirs:
        their_schemas.update({int(k): v for k, v in rec.pop("schemas").items()})
        rec["registry"] = their_schemas
    for rec in ours:
        rec["registry"] = _OurRegistry(registry)
    return ours, theirs


class _OurRegistry:
    def __init__(self, client: Any) -> None:
        self.client = client

    def __getitem__(self, schema_id: int) -> str:
        return str(self.client.get_schema(schema_id).schema_str)


def _avro(data: bytes, registry: Any) -> tuple[str, Any]:
    """(schema text, datum) of Confluent wire bytes; the bytes must be what the datum encodes to."""
    assert data[0] == 0, f"magic byte {data[0]}"
    text = registry[int.from_bytes(data[1:5], "big")]
    parsed = fastavro.parse_schema(writer_schema(text))
    datum = fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed, None)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    assert out.getvalue() == data[5:], "Avro bytes that are not what their datum encodes to"
    return text, datum


def normalized(data: str | None, options: dict[str, str], registry: Any, snapshot: bool) -> Any:
    """A record's value with registry ids replaced by schema texts and, in a snapshot, the slot-dependent
    attributes masked after checking `id` and `time` against the record's own attributes."""
    if data is None:
        return None
    raw = bytes.fromhex(data)
    if options.get("serializer.type") == "avro":
        text, event = _avro(raw, registry)
        event = {"schema": text, **event}
    else:
        event = json.loads(raw, parse_float=Num, parse_int=Num)
    if options.get("data.serializer.type") == "avro":
        data_bytes = event["data"] if isinstance(event["data"], bytes) else base64.b64decode(event["data"])
        event["data"] = _avro(data_bytes, registry)
        base, _, schema_id = event["dataschema"].rpartition("/")
        event["dataschema"] = (base, registry[int(schema_id)])
    if "iodebeziumname" in event:
        e = event
        assert e["id"] == f"name:{e['iodebeziumname']};lsn:{e['iodebeziumlsn'] or 'null'};txId:" \
                          f"{e['iodebeziumtxId'] or 'null'};sequence:{e['iodebeziumsequence'] or 'null'}", e["id"]
        assert e["time"] == event_time(int(e["iodebeziumtsms"])), e["time"]
        if snapshot and e.get("iodebeziumop") == "r":
            for k in MASKED_ATTRIBUTES:
                e[k] = "<masked>"
    elif snapshot:
        event["id"] = event["time"] = "<masked>"
    return event if (snapshot or options.get("serializer.type") == "avro" or
                     options.get("data.serializer.type") == "avro") else raw.decode()


def ce_differences(ours: list[Any], theirs: list[Any], options: dict[str, str], snapshot: bool) -> list[str]:
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        where = f"record {i} ({b['topic']})"
        if a["topic"] != b["topic"]:
            problems.append(f"{where}: topic {a['topic']} != {b['topic']}")
            continue
        for side in ("key", "value"):
            x = normalized(a[side], options, a["registry"], snapshot)
            y = normalized(b[side], options, b["registry"], snapshot)
            if x != y:
                problems.append(f"{where}: {side}\n  ours   {x}\n  theirs {y}")
    return problems


def assert_same_ce(label: str, ours: list[Any], theirs: list[Any], options: dict[str, str],
                   snapshot: bool = False) -> None:
    problems = ce_differences(ours, theirs, options, snapshot)
    events = sum(1 for r in theirs if r["value"] is not None)
    print(f"cloudevents {label}: {len(theirs)} Debezium records ({events} events), {len(ours)} pgcdc records, "
          f"{len(problems)} differences")
    assert events, "Debezium wrote no event"
    assert not problems, "\n".join(problems[:20])


# Every record kind: inserts, updates, key changes, deletes and their tombstones, truncates, logical-decoding
# messages, transaction metadata (BEGIN/END records), heartbeats; then the type zoo in every handling mode.
KINDS_PROPS = {"provide.transaction.metadata": "true", "heartbeat.interval.ms": "500"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_cloudevents_record_kinds_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, fmt: str) -> None:
    setup, props, workload = SCENARIOS["ops"]
    ours, theirs = run_both_ce(pg, dbname, tmp_path, setup, {**props, **KINDS_PROPS}, workload, FORMATS[fmt])
    # Heartbeats come at each connector's own pace: compared by kind (null key and value), then left out.
    beats = [[r for r in rs if r["topic"].startswith("__debezium-heartbeat")] for rs in (ours, theirs)]
    assert beats[1] and beats[0], "no heartbeat records"
    assert all(r["key"] is None and r["value"] is None for rs in beats for r in rs)
    ours, theirs = ([r for r in rs if not r["topic"].startswith("__debezium-heartbeat")] for rs in (ours, theirs))
    assert_same_ce(f"kinds {fmt}", ours, theirs, FORMATS[fmt])


@pytest.mark.parametrize("options", [{"extension.attributes.enable": "false"},
                                     {"schema.cloudevents.name": "my.Events", "serializer.type": "avro",
                                      "data.serializer.type": "avro", "avro.schema.registry.url": f"{URL}, {URL}2",
                                      "extension.attributes.enable": "false"}], ids=["no_extensions", "named"])
def test_cloudevents_options_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                            options: dict[str, str]) -> None:
    setup, props, workload = SCENARIOS["txmeta"]
    ours, theirs = run_both_ce(pg, dbname, tmp_path, setup, props, workload, options)
    assert_same_ce("options", ours, theirs, options)


@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
@pytest.mark.parametrize("mode", sorted(ZOO_MODES))
@pytest.mark.parametrize("fmt", ["json_json", "avro_avro"])
def test_cloudevents_zoo_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, fmt: str, mode: str,
                                          phase: str) -> None:
    if phase == "snapshot":
        inserts = [row for row in ZOO_ROWS if row.startswith("INSERT")]
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ";".join([ZOO_SETUP, *inserts]), ZOO_MODES[mode], [],
                                   FORMATS[fmt], snapshot=True)
    else:
        ours, theirs = run_both_ce(pg, dbname, tmp_path, ZOO_SETUP, ZOO_MODES[mode], ZOO_ROWS, FORMATS[fmt])
    assert_same_ce(f"zoo {fmt} {mode} {phase}", ours, theirs, FORMATS[fmt], snapshot=phase == "snapshot")
