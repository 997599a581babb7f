"""CloudEventsConverter with `avro.apicurio.registry.url` against Debezium's CloudEventsConverter delegating to
Apicurio's own AvroConverter (Debezium 3.6.3, apicurio-registry-utils-converter 3.0.9), on Debezium's records in
tests/data/debezium (column types with NaN, ±Infinity, empty strings and bytes, nulls, extreme integers and
dates; operations with deletes, tombstones and truncates; transaction metadata) and a table of floats (-0.0, NaN,
the infinities, the largest and smallest values, in arrays too, with empty and null values), geometric and PostGIS
types (structs, arrays of structs), recorded into
tests/data/apicurio_cloudevents by tests/conformance/jvm/ApicurioCloudEvents.java against a fresh Apicurio
Registry 3.0.9 (see its README.md). pgcdc converts the same records, in the same order, on a fresh registry of its
own, one converter pair per file as the harness has, so the registry hands out the same ids when pgcdc registers
what Apicurio's serializer registered (Apicurio 3.0.9 spends a content id on a text it already holds). Setups:
JSON or Avro events, 4- or 8-byte ids and ids in headers, TopicIdStrategy or SimpleTopicIdStrategy, one explicit
`artifact.artifact-id`; and a table changing shape mid-stream (Debezium's records of a column added, one dropped,
then the first shape again): Apicurio's converter keeps writing the first shape's schema, leaves an added column
out and throws on the record after the drop; a restarted converter then writes the new shape. Where the harness
recorded a throw, pgcdc must fail with one line naming the topic, and then converts the same record with new
converters, as the harness did.

What is compared: each record's key and value bytes, the `dataschema` URL's registry address excepted (each
registry has its own port): JSON events as text, Avro events decoded with their schema, the address replaced, and
encoded again (after checking that this gives Debezium's bytes back); the schema text of every content id; every
artifact with its versions' content and global ids.
"""

from __future__ import annotations

import io
import json
import urllib.request
from pathlib import Path
from typing import Any

import fastavro
import pytest

from pgcdc.config import build_config
from pgcdc.converters.apicurio import registry_base
from pgcdc.converters.avro_schema import writer_schema
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.errors import SinkError
from pgcdc.local import ApicurioRegistry
from tests.unit.test_apicurio_ext_json import raw_members
from tests.unit.test_cloudevents import BASE, CE, ListSink

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = DATA / "apicurio_cloudevents"
# under tests/data/debezium; floats.jsonl (-0.0, NaN, the infinities, float extremes, empty values, in arrays too) was
# recorded for these tests
FILES = ("types_basic.jsonl", "types/extreme_connect.jsonl", "ops.jsonl", "../apicurio_cloudevents/inputs/floats.jsonl",
         "types/types_geometric.jsonl", "types/types_postgis.jsonl", "txmeta.jsonl")
_AVRO = {"serializer.type": "avro", "data.serializer.type": "avro"}
# a table changing shape between its records (a column added, one dropped, then its first shape again)
SHAPE = ("../apicurio_cloudevents/inputs/shape.jsonl",)
FORMATS = {"json_avro": {"data.serializer.type": "avro"}, "avro_avro": _AVRO,
           "avro_avro_ids": {**_AVRO, "avro.apicurio.registry.use-id": "globalId",
                             "avro.apicurio.registry.id-handler": "io.apicurio.registry.serde.Legacy8ByteIdHandler",
                             "avro.apicurio.registry.headers.enabled": "true"},
           "avro_avro_simple": {**_AVRO, "avro.apicurio.registry.artifact-resolver-strategy":
                                "io.apicurio.registry.serde.strategy.SimpleTopicIdStrategy"},
           "avro_avro_artifact": {**_AVRO, "avro.apicurio.registry.artifact.artifact-id": "cdc-events"},
           "shape_avro_avro": _AVRO, "shape_json_avro": {"data.serializer.type": "avro"}}


def fetch(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def fetch_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(resp.read().decode())


def artifacts(v3: str) -> dict[str, list[dict[str, Any]]]:
    """Each artifact's versions: version, content and global id, type, content text and references (what the
    harness lists)."""
    out = {}
    for a in fetch(f"{v3}/groups/default/artifacts?limit=1000")["artifacts"]:
        base = f"{v3}/groups/default/artifacts/{a['artifactId']}/versions"
        out[a["artifactId"]] = [{"version": v["version"], "contentId": v["contentId"], "globalId": v["globalId"],
                                 "artifactType": v["artifactType"],
                                 "content": fetch_text(f"{base}/{v['version']}/content"),
                                 "references": fetch(f"{base}/{v['version']}/references")}
                                for v in fetch(f"{base}?limit=1000")["versions"]]
    return out


def _swap(data: bytes, theirs: str, ours: str, schema_text: str | None, frame: int) -> bytes:
    """Debezium's value with its registry address replaced by ours: JSON as text, Avro by its datum."""
    if schema_text is None:
        return data.replace(theirs.encode(), ours.encode())
    parsed = fastavro.parse_schema(writer_schema(schema_text))
    datum = fastavro.schemaless_reader(io.BytesIO(data[frame:]), parsed, None)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    assert out.getvalue() == data[frame:], "Debezium's Avro bytes are not what their datum encodes to"
    assert isinstance(datum, dict)
    datum["dataschema"] = datum["dataschema"].replace(theirs, ours)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    return data[:frame] + out.getvalue()


def records(name: str) -> list[tuple[str, bytes | None, bytes | None]]:
    """A recorded file's Debezium records (heartbeats left out): topic, key and value as JsonConverter bytes."""
    out = []
    for line in (DATA / "debezium" / name).read_text().splitlines():
        rec = raw_members(line)  # the envelope's JsonConverter text, as Debezium's engine wrote it
        topic = json.loads(rec["topic"])
        if not topic.startswith("__debezium-heartbeat"):
            out.append((topic, *(None if rec[s] == "null" else rec[s].encode() for s in ("key", "value"))))
    return out


def send_all(config: Any, name: str, theirs: list[dict[str, Any]], out: Any, problems: list[str]) -> int:
    """Send `name`'s records through new converters into `out` (a sink listing `records`) as the harness did:
    where its line is an error (Apicurio's converter threw), ours must fail with one line naming the topic, and
    the same record goes again through new converters (a restart). Returns the failures; stops at the first
    record that failed on one side only."""
    sent = iter(records(name))
    failures = 0
    for i, their in enumerate(theirs):
        restarted = i == 0 or "error" in theirs[i - 1]
        if i == 0 or not restarted:  # after a failure, the same record again
            record = next(sent)
        if restarted:
            key, value, _ = make_converters(config, lambda: False)
            sink = ConvertingSink(out, key, value)
        try:
            sink.send(*record)
            failed = None
        except SinkError as exc:
            failed = str(exc)
        if ("error" in their) != (failed is not None):
            problems.append(f"{name} record {i}: ours {failed or 'written'}, theirs {their.get('error')}")
            return failures
        if failed:
            assert "\n" not in failed and record[0] in failed, failed
            out.records.append({"key": None, "value": None})  # in the place of the harness's error line
            failures += 1
    assert next(sent, None) is None, name
    return failures


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_records_and_artifacts_equal_debezium_with_apicurio(fmt: str) -> None:
    frame = 9 if "id-handler" in str(FORMATS[fmt]) else 5
    files = SHAPE if fmt.startswith("shape_") else FILES
    last = Path(files[-1]).name.replace(".jsonl", ".artifacts.json")
    recorded = json.loads((RECORDED / fmt / last).read_text())
    # the schema text under each id the records name (a global id with use-id=globalId)
    kind = "globalId" if "globalId" in str(FORMATS[fmt]) else "contentId"
    texts = {v[kind]: v["content"] for vs in recorded.values() for v in vs}
    their_url = (RECORDED / fmt / "url.txt").read_text().strip() + "/apis/registry/v3"
    with ApicurioRegistry() as registry:
        v3 = f"{registry_base(registry.url)}/apis/registry/v3"
        options = {"avro.apicurio.registry.url": v3, "avro.apicurio.registry.auto-register": "true", **FORMATS[fmt]}
        config = build_config({**BASE, "key.converter": CE, "value.converter": CE,
                               **{f"converter.{k}": v for k, v in options.items()}})
        problems: list[str] = []
        count = failures = 0
        for name in files:  # converters of their own per file, as the harness's JVM per file
            theirs = [json.loads(t) for t in (RECORDED / fmt / Path(name).name).read_text().splitlines()]
            out = ListSink()
            failures += send_all(config, name, theirs, out, problems)
            if len(out.records) != len(theirs):  # stopped at a record written on one side and failed on the other
                continue
            for i, (ours, their) in enumerate(zip(out.records, theirs)):
                if "error" in their:
                    continue
                count += their["value"] is not None
                assert ours["key"] is None and their["key"] is None, f"{name} record {i}: a key event"
                if their["value"] is None or ours["value"] is None:
                    if ours["value"] != their["value"]:
                        problems.append(f"{name} record {i}: value {ours['value']} != {their['value']}")
                    continue
                data = bytes.fromhex(their["value"])
                avro_events = "serializer.type" in FORMATS[fmt]
                event_text = texts[int.from_bytes(data[1:frame], "big")] if avro_events else None
                expected = _swap(data, their_url, v3, event_text, frame)
                if bytes.fromhex(ours["value"]) != expected:
                    problems.append(f"{name} record {i}:\n  ours   {bytes.fromhex(ours['value'])[:600]!r}\n"
                                    f"  theirs {expected[:600]!r}")
        found = artifacts(v3)
        for artifact in sorted(set(found) | set(recorded)):
            if found.get(artifact) != recorded.get(artifact):
                problems.append(f"artifact {artifact}:\n  ours   {str(found.get(artifact))[:800]}\n"
                                f"  theirs {str(recorded.get(artifact))[:800]}")
        print(f"{fmt}: {count} events, {failures} failures, {len(recorded)} artifacts, {len(problems)} differences")
        assert not problems, "\n".join(problems[:10])
        assert count and recorded
