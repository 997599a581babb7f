"""pgcdc's JsonSchemaConverter against Confluent's own (io.confluent.connect.json.JsonSchemaConverter 7.0.16,
built from its source), on every record Debezium 3.6.3 wrote in tests/data/debezium (the type zoo in every
handling mode, snapshot and streaming, operations, transaction metadata): the JSON Schema text it registers and
the bytes it writes after the magic byte and id, recorded into tests/data/confluent_jsonschema by
tests/conformance/jvm/ConfluentJsonSchemaData.java (see that folder's README.md); likewise on the records of
tests/data/transforms (keys and values single message transforms reshaped: unwrapped rows, hoisted and
extracted fields, casts, primitives, arrays). pgcdc's input is what it gets in
production: the record's JsonConverter bytes, here as Debezium's JsonConverter wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from pgcdc.converters.jsonschema import JsonSchemaConverter, PreparedJsonSchema
from pgcdc.converters.settings import converter_specs
from pgcdc.converters.sink import split_json

DATA = Path(__file__).parent.parent / "data"
FILES = sorted(p.relative_to(DATA / "confluent_jsonschema") for p in (DATA / "confluent_jsonschema").rglob("*.jsonl"))
_DECODER = json.JSONDecoder()
CLASS = "io.confluent.connect.json.JsonSchemaConverter"


def _raw_member(line: str, name: str) -> bytes | None:
    """The JSON text of a top-level member of an oracle line, as Java wrote it (the key and value come before
    the headers, so the first `"<name>":` is the member's)."""
    start = line.index(f'"{name}":') + len(name) + 3
    _, end = _DECODER.raw_decode(line, start)
    text = line[start:end]
    return None if text == "null" else text.encode()


def _converter(options: dict[str, str] | None = None) -> JsonSchemaConverter:
    props = {"value.converter.schema.registry.url": "mock://jsonschema-test",
             **{f"value.converter.{k}": v for k, v in (options or {}).items()}}
    return JsonSchemaConverter(converter_specs({"value": CLASS}, props)["value"])


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().split("\n") if line.strip()]


# options/<set>/<file>: the same records through a converter configured with these options.
OPTION_SETS = {"additional_properties_false": {"object.additional.properties": "false"}}


def _source(name: Path) -> tuple[Path, dict[str, str]]:
    """The Debezium records a recorded file was made from (tests/data/debezium, or tests/data/transforms: the
    records single message transforms made, every shape of key and value) and the converter's options."""
    if name.parts[0] == "options":
        return DATA / "debezium" / Path(*name.parts[2:]), OPTION_SETS[name.parts[1]]
    return (DATA / name if name.parts[0] == "transforms" else DATA / "debezium" / name), {}


def differences(name: Path) -> tuple[int, list[str]]:
    source, options = _source(name)
    debezium = [line for line in _lines(source)
                if not json.loads(line)["topic"].startswith("__debezium-heartbeat")]
    confluent = [json.loads(line) for line in _lines(DATA / "confluent_jsonschema" / name)]
    assert len(debezium) == len(confluent)
    conv = _converter(options)
    problems, count = [], 0
    for i, (line, theirs) in enumerate(zip(debezium, confluent)):
        topic = json.loads(line)["topic"]
        for side in ("key", "value"):
            data = _raw_member(line, side)
            if data is None:
                assert theirs[side] is None
                continue
            count += 1
            schema, payload = split_json(data)
            prepared = PreparedJsonSchema(conv, orjson.loads(schema))
            wire = prepared(topic, payload)
            if wire is None:  # a null value: no bytes
                got: tuple[str | None, str | None] = (None, None)
            else:
                assert wire[:1] == b"\x00"
                got = (prepared.text, wire[5:].decode())
            expected = (theirs[f"{side}_schema"], theirs[side])
            if got != expected:
                problems.append(f"{name} record {i} {side}:\n  ours   {str(got)[:400]}\n  theirs {str(expected)[:400]}")
    return count, problems


@pytest.mark.parametrize("name", FILES, ids=str)
def test_schema_text_and_payload_equal_confluents(name: Path) -> None:
    count, problems = differences(name)
    print(f"{name}: {count} keys and values, {len(problems)} differing")
    assert count
    assert not problems, "\n".join(problems[:10])


def test_records_go_out_under_the_id_the_registry_gave_the_subject() -> None:
    conv = _converter()
    line = _lines(DATA / "debezium" / "types_basic.jsonl")[0]
    schema, payload = split_json(_raw_member(line, "value") or b"")
    prepared = conv.prepare(orjson.loads(schema))
    wire = prepared("dbserver1.public.t_types", payload)
    assert wire is not None
    registered = conv.client.get_latest_version("dbserver1.public.t_types-value")
    assert wire[:5] == b"\x00" + registered.schema_id.to_bytes(4, "big")
    assert registered.schema.schema_type == "JSON" and registered.schema.schema_str == prepared.text
    assert prepared("dbserver1.public.t_types", b"null") is None


@pytest.mark.parametrize("option, value, message", [
    ("decimal.format", "NUMERIC", "NUMERIC is not supported yet"),
    ("decimal.format", "hex", r"must be one of \(case insensitive\): BASE64, NUMERIC"),
    ("json.fail.invalid.schema", "true", "only false"),
    ("json.indent.output", "true", "only false"),
    ("object.additional.properties", "maybe", "must be true or false"),
])
def test_options_it_cannot_follow_are_refused_naming_the_property(option: str, value: str, message: str) -> None:
    from pgcdc.errors import ConfigError

    with pytest.raises(ConfigError, match=f"value.converter.{option}.*{message}"):
        _converter({option: value})


def test_additional_properties_false_closes_every_object() -> None:
    line = _lines(DATA / "debezium" / "types_basic.jsonl")[0]
    schema, _ = split_json(_raw_member(line, "key") or b"")
    text = _converter({"object.additional.properties": "false"}).prepare(orjson.loads(schema)).text
    assert text.startswith('{"type":"object","additionalProperties":false,"title":')
