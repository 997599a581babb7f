"""pgcdc's Apicurio ExtJsonConverter records and registered schemas against Apicurio Registry's own
ExtJsonConverter (apicurio-registry-utils-converter 3.0.9), on every record Debezium 3.6.3 wrote in
tests/data/debezium (the type zoo in every handling mode, snapshot and streaming, operations, transaction
metadata): the record bytes the real class wrote and the schema text the registry then held under the content id
it names, recorded into tests/data/apicurio_json by tests/conformance/jvm/ApicurioExtJson.java against a running
Apicurio Registry 3.0.9 (see tests/data/apicurio_json/README.md). pgcdc's side is what its ConvertingSink hands
the converter: the `schema` and `payload` text of JsonConverter's bytes (the envelope's, equal to Debezium's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgcdc.converters.apicurio_json import record_head, registered_text
from pgcdc.converters.sink import split_json

DATA = Path(__file__).parent.parent / "data"
RECORDED = DATA / "apicurio_json"
FILES = sorted(p.relative_to(RECORDED) for p in RECORDED.rglob("*.jsonl") if p.parent.name != "options")


def raw_members(line: str) -> dict[str, str]:
    """The top-level members of one oracle line as the exact text Java wrote (json.loads would respell 1.0E20)."""
    decoder, members, i = json.JSONDecoder(), {}, 1
    while line[i] != "}":
        name, i = decoder.raw_decode(line, i)
        start = i + 1
        _, i = decoder.raw_decode(line, start)
        members[name] = line[start:i]
        i += 1 if line[i] == "," else 0
    return members


def differences(debezium_file: Path, recorded_file: Path) -> tuple[int, list[str]]:
    lines = [raw_members(line) for line in debezium_file.read_text().split("\n") if line.strip()]
    lines = [m for m in lines if not json.loads(m["topic"]).startswith("__debezium-heartbeat")]
    theirs = [json.loads(line) for line in recorded_file.read_text().split("\n") if line.strip()]
    assert len(lines) == len(theirs)
    problems: list[str] = []
    ids: dict[tuple[str, str, bytes], int] = {}
    for i, (rec, their) in enumerate(zip(lines, theirs)):
        for side in ("key", "value"):
            if rec[side] == "null":
                if their[side] is not None:
                    problems.append(f"{recorded_file.name} record {i} {side}: null here, not in Apicurio's")
                continue
            schema, payload = split_json(rec[side].encode())
            record: Any = their[side]
            content_id = json.loads(record)["schemaId"]
            # One content id per artifact and schema text, as the registry hands out (pgcdc asks once per pair).
            known = ids.setdefault((json.loads(rec["topic"]), side, schema), content_id)
            if known != content_id:
                problems.append(f"{recorded_file.name} record {i} {side}: id {content_id}, earlier {known}")
            text = registered_text(schema).decode()
            if text != their[f"{side}_schema"]:
                problems.append(f"{recorded_file.name} record {i} {side} schema:\n  ours   {text[:300]}"
                                f"\n  theirs {their[side + '_schema'][:300]}")
            ours = record_head(content_id) + payload + b"}"
            if ours != record.encode():
                problems.append(f"{recorded_file.name} record {i} {side}:\n  ours   {ours.decode()[:300]}\n"
                                f"  theirs {record[:300]}")
    return len(lines), problems


@pytest.mark.parametrize("name", FILES, ids=str)
def test_records_and_schemas_equal_apicurio_ext_json(name: Path) -> None:
    count, problems = differences(DATA / "debezium" / name, RECORDED / name)
    print(f"{name}: {count} records, {len(problems)} differing")
    assert count
    assert not problems, "\n".join(problems[:10])


def test_id_options_change_nothing() -> None:
    """use-id=globalId, headers.enabled=true and the 8-byte id handler: Apicurio's class wrote the same records
    (content id in `schemaId`, no headers), so pgcdc accepts them and writes the same."""
    count, problems = differences(DATA / "debezium" / "ops.jsonl", RECORDED / "options" / "ops.jsonl")
    assert count and not problems, "\n".join(problems[:10])
