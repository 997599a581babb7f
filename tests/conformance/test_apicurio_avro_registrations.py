"""Apicurio's AvroConverter against Apicurio Registry's own (`io.apicurio.registry.utils.converter.AvroConverter`
3.0.9, run by a Kafka Connect worker's calls) on Debezium's records in tests/data/debezium (column types with NaN,
±Infinity, empty strings and bytes, nulls, extreme integers and dates; operations with deletes, tombstones and
truncates; a table of floats with -0.0; geometric and PostGIS structs; transaction metadata), recorded into
tests/data/apicurio_avro by tests/conformance/jvm/ApicurioAvro.java against a fresh Apicurio Registry 3.0.9 per
setup (see its README.md). pgcdc converts the same records in the same order on a fresh registry of its own, one
converter pair per file as the harness has, so the registry hands out the same ids when pgcdc registers what
Apicurio's serializer registered.

Also a table changing shape mid-stream (Debezium's records of a column added, one dropped, then the first shape
again): Apicurio's converter keeps the first shape's schema, leaves the added column out and throws on the record
after the drop; there pgcdc must fail with one line naming the topic, and new converters (a restart, as the
harness's) convert the same record again.

What is compared: each record's key and value bytes (magic byte and id included), the Kafka headers the
converters add, and every artifact with its versions' content and global ids, content text and references.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgcdc.config import build_config
from pgcdc.converters.apicurio import registry_base
from pgcdc.local import ApicurioRegistry
from tests.conformance.test_apicurio_cloudevents import FILES, SHAPE, artifacts, send_all
from tests.unit.test_cloudevents import BASE

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = DATA / "apicurio_avro"
CONV = "io.apicurio.registry.utils.converter.AvroConverter"
SETUPS = {"default": {},
          "ids": {"use-id": "globalId", "id-handler": "io.apicurio.registry.serde.Legacy8ByteIdHandler"},
          "headers": {"headers.enabled": "true"},
          "headers_global": {"headers.enabled": "true", "use-id": "globalId"},
          "simple": {"artifact-resolver-strategy": "io.apicurio.registry.serde.strategy.SimpleTopicIdStrategy"}}
# (folder, setup, files): a table's second shape (a column added) then its first again, made from ops.jsonl's t_pk;
# Debezium's records of a table changing shape (a column added, one dropped, then the first shape again)
RUNS = [*((setup, setup, FILES) for setup in SETUPS),
        ("schema_change/default", "default", ("../apicurio_avro/inputs/schema_change.jsonl",)),
        ("shape/default", "default", SHAPE)]


class HeaderSink:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append({"topic": topic, "key": key and key.hex(), "value": value and value.hex(),
                             "headers": [[name, data.hex()] for name, data in headers or ()]})

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def convert(config: Any, folder: str, name: str, problems: list[str]) -> int:
    """Convert one file's records with a converter pair of their own (as the harness's JVM per file), noting every
    difference from the recorded ones; the number of records."""
    out = HeaderSink()
    theirs = [json.loads(t) for t in (RECORDED / folder / Path(name).name).read_text().splitlines()]
    send_all(config, name, theirs, out, problems)  # restarting the converters where the harness's threw
    if len(out.records) != len(theirs):  # stopped at a record written on one side and failed on the other
        return 0
    for i, (ours, their) in enumerate(zip(out.records, theirs)):
        if "error" in their:
            continue
        for part in ("key", "value", "headers"):
            if ours[part] != their[part]:
                problems.append(f"{name} record {i} {part}:\n  ours   {str(ours[part])[:300]}\n"
                                f"  theirs {str(their[part])[:300]}")
    return sum("error" not in t for t in theirs)


def options(v3: str, **extra: str) -> Any:
    return build_config({**BASE, "key.converter": CONV, "value.converter": CONV,
                         **{f"converter.apicurio.registry.{k}": v for k, v in {"url": v3, **extra}.items()}})


@pytest.mark.parametrize(("folder", "setup", "files"), RUNS, ids=[r[0] for r in RUNS])
def test_records_and_artifacts_equal_apicurio(folder: str, setup: str, files: tuple[str, ...]) -> None:
    recorded = json.loads((RECORDED / folder / Path(files[-1]).name.replace(".jsonl", ".artifacts.json")).read_text())
    with ApicurioRegistry() as registry:
        v3 = f"{registry_base(registry.url)}/apis/registry/v3"
        config = options(v3, **{"auto-register": "true", **SETUPS[setup]})
        problems: list[str] = []
        count = sum(convert(config, folder, name, problems) for name in files)
        found = artifacts(v3)
        for artifact in sorted(set(found) | set(recorded)):
            if found.get(artifact) != recorded.get(artifact):
                problems.append(f"artifact {artifact}:\n  ours   {str(found.get(artifact))[:800]}\n"
                                f"  theirs {str(recorded.get(artifact))[:800]}")
        print(f"{folder}: {count} records, {len(recorded)} artifacts, {len(problems)} differences")
        assert not problems, "\n".join(problems[:10])
        assert count and recorded


def test_find_latest_equals_apicurio() -> None:
    """auto-register=false, find-latest=true after a registering run on the same registry: the records Apicurio's
    converter wrote (tests/data/apicurio_avro/latest: the same as the registering run's)."""
    files = ("types_basic.jsonl", "ops.jsonl")
    recorded = json.loads((RECORDED / "latest/latest/ops.artifacts.json").read_text())
    with ApicurioRegistry() as registry:
        v3 = f"{registry_base(registry.url)}/apis/registry/v3"
        problems: list[str] = []
        for folder, extra in (("latest/register", {"auto-register": "true"}),
                              ("latest/latest", {"auto-register": "false", "find-latest": "true"})):
            count = sum(convert(options(v3, **extra), folder, name, problems) for name in files)
        assert count and artifacts(v3) == recorded
        assert not problems, "\n".join(problems[:10])
