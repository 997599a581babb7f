"""pgcdc's Avro schemas and bytes against Apicurio Registry's own AvroData (apicurio-registry-utils-converter
3.0.9), on every record Debezium 3.6.3 wrote in tests/data/debezium (the type zoo in every handling mode,
snapshot and streaming, operations, transaction metadata): the schema text Apicurio's AvroConverter registers
and the Avro binary its serializer writes after the id, recorded into tests/data/apicurio by
tests/conformance/jvm/ApicurioAvroData.java (run in its own JVM: see tests/data/apicurio/README.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest

from pgcdc.converters.avro_schema import avro_schema_text, datum_function, writer_schema

DATA = Path(__file__).parent.parent / "data"
FILES = sorted(p.relative_to(DATA / "apicurio") for p in (DATA / "apicurio").rglob("*.jsonl"))


def _ours(side: dict[str, Any]) -> tuple[str, str] | str:
    """(schema text, Avro binary hex) pgcdc writes for one key or value, or the reason it refuses the schema."""
    try:
        text = avro_schema_text(side["schema"])
    except ValueError as exc:
        return str(exc)
    datum = (datum_function(side["schema"]) or (lambda v: v))(side["payload"])
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer_schema(text)), datum)
    return text, out.getvalue().hex()


def differences(name: Path) -> tuple[int, list[str]]:
    debezium = [json.loads(line) for line in (DATA / "debezium" / name).read_text().split("\n") if line.strip()]
    debezium = [r for r in debezium if not r["topic"].startswith("__debezium-heartbeat")]
    apicurio = [json.loads(line) for line in (DATA / "apicurio" / name).read_text().split("\n") if line.strip()]
    assert len(debezium) == len(apicurio)
    problems = []
    for i, (rec, theirs) in enumerate(zip(debezium, apicurio)):
        for side in ("key", "value"):
            if rec[side] is None:
                if theirs[side] is not None:
                    problems.append(f"{name} record {i} {side}: null here, not in Apicurio's")
                continue
            expected = theirs.get(f"{side}_error") or (theirs[f"{side}_schema"], theirs[side])
            got = _ours(rec[side])
            if got != expected:
                problems.append(f"{name} record {i} {side}:\n  ours   {str(got)[:400]}\n  theirs {str(expected)[:400]}")
    return len(debezium), problems


@pytest.mark.parametrize("name", FILES, ids=str)
def test_schema_and_bytes_equal_apicurio_avro_data(name: Path) -> None:
    count, problems = differences(name)
    print(f"{name}: {count} records, {len(problems)} differing")
    assert count
    assert not problems, "\n".join(problems[:10])
