"""CloudEventsConverter with `avro.apicurio.registry.url` against Debezium's CloudEventsConverter delegating to
Apicurio's own AvroConverter (Debezium 3.6.3, apicurio-registry-utils-converter 3.0.9), on Debezium's records in
tests/data/debezium (column types with NaN, ±Infinity, empty strings and bytes, nulls, extreme integers and
dates; operations with deletes, tombstones and truncates; transaction metadata) and a table of floats (-0.0, NaN,
the infinities, the largest and smallest values, in arrays too, with empty and null values), geometric and PostGIS
types (structs, arrays of structs), recorded into
tests/data/apicurio_cloudevents by tests/conformance/jvm/ApicurioCloudEvents.java against a fresh Apicurio
Registry 3.0.9 (see its README.md). pgcdc converts the same records, in the same order, on a fresh registry of its
own, one converter pair per file as the harness has, so the registry hands out the same ids when pgcdc registers
what Apicurio's serializer registered (Apicurio 3.0.9 spends a content id on a text it already holds).

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
FORMATS = {"json_avro": {"data.serializer.type": "avro"}, "avro_avro": _AVRO,
           "avro_avro_ids": {**_AVRO, "avro.apicurio.registry.use-id": "globalId",
                             "avro.apicurio.registry.id-handler": "io.apicurio.registry.serde.Legacy8ByteIdHandler",
                             "avro.apicurio.registry.headers.enabled": "true"},
           "avro_avro_simple": {**_AVRO, "avro.apicurio.registry.artifact-resolver-strategy":
                                "io.apicurio.registry.serde.strategy.SimpleTopicIdStrategy"}}


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


def replay(sink: Any, name: str) -> None:
    """Send a recorded file's Debezium records (heartbeats left out) to `sink` as their JsonConverter bytes."""
    for line in (DATA / "debezium" / name).read_text().splitlines():
        rec = raw_members(line)  # the envelope's JsonConverter text, as Debezium's engine wrote it
        topic = json.loads(rec["topic"])
        if topic.startswith("__debezium-heartbeat"):
            continue
        sink.send(topic, *(None if rec[s] == "null" else rec[s].encode() for s in ("key", "value")))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_records_and_artifacts_equal_debezium_with_apicurio(fmt: str) -> None:
    frame = 9 if "id-handler" in str(FORMATS[fmt]) else 5
    recorded = json.loads((RECORDED / fmt / "txmeta.artifacts.json").read_text())
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
        count = 0
        for name in FILES:  # converters of their own per file, as the harness's JVM per file
            key, value, _ = make_converters(config, lambda: False)
            out = ListSink()
            sink = ConvertingSink(out, key, value)
            replay(sink, name)
            theirs = [json.loads(t) for t in (RECORDED / fmt / Path(name).name).read_text().splitlines()]
            assert len(out.records) == len(theirs), name
            for i, (ours, their) in enumerate(zip(out.records, theirs)):
                count += their["value"] is not None
                assert ours["key"] is None and their["key"] is None, f"{name} record {i}: a key event"
                if their["value"] is None or ours["value"] is None:
                    if ours["value"] != their["value"]:
                        problems.append(f"{name} record {i}: value {ours['value']} != {their['value']}")
                    continue
                data = bytes.fromhex(their["value"])
                event_text = texts[int.from_bytes(data[1:frame], "big")] if fmt != "json_avro" else None
                expected = _swap(data, their_url, v3, event_text, frame)
                if bytes.fromhex(ours["value"]) != expected:
                    problems.append(f"{name} record {i}:\n  ours   {bytes.fromhex(ours['value'])[:600]!r}\n"
                                    f"  theirs {expected[:600]!r}")
        found = artifacts(v3)
        for artifact in sorted(set(found) | set(recorded)):
            if found.get(artifact) != recorded.get(artifact):
                problems.append(f"artifact {artifact}:\n  ours   {str(found.get(artifact))[:800]}\n"
                                f"  theirs {str(recorded.get(artifact))[:800]}")
        print(f"{fmt}: {count} events, {len(recorded)} artifacts, {len(problems)} differences")
        assert count and recorded
        assert not problems, "\n".join(problems[:10])
