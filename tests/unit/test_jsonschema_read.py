"""The Connect schema read back from the JSON Schema texts Confluent's JsonSchemaConverter registered
(tests/data/confluent_jsonschema, recorded from Confluent's own converter on Debezium 3.6.3's records) equals the
Connect schema each record carried (tests/data/debezium, tests/data/transforms), defaults aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgcdc.converters.jsonschema_read import connect_schema
from tests.unit.test_confluent_jsonschema import FILES, _lines, _source

DATA = Path(__file__).parent.parent / "data"


def _without_defaults(s: Any) -> Any:
    if isinstance(s, dict):
        return {k: _without_defaults(v) for k, v in s.items() if k != "default"}
    if isinstance(s, list):
        return [_without_defaults(x) for x in s]
    return s


@pytest.mark.parametrize("name", [f for f in FILES if f.parts[0] != "options"], ids=str)
def test_connect_schema_read_back_from_confluents_text(name: Path) -> None:
    source, _ = _source(name)
    debezium = [json.loads(line) for line in _lines(source)
                if not json.loads(line)["topic"].startswith("__debezium-heartbeat")]
    confluent = [json.loads(line) for line in _lines(DATA / "confluent_jsonschema" / name)]
    compared, problems = 0, []
    for i, (record, theirs) in enumerate(zip(debezium, confluent, strict=True)):
        for side in ("key", "value"):
            text = theirs.get(f"{side}_schema")
            if text is None or not isinstance(record[side], dict) or "schema" not in record[side]:
                continue
            compared += 1
            got = connect_schema(json.loads(text))
            want = _without_defaults(record[side]["schema"])
            if got != want:
                problems.append(f"record {i} {side}:\n  read {json.dumps(got)[:300]}\n  was  {json.dumps(want)[:300]}")
    print(f"{name}: {compared} schemas read back, {len(problems)} differing")
    assert compared
    assert not problems, "\n".join(problems[:5])


def test_a_schema_no_connect_schema_stands_behind_is_refused() -> None:
    with pytest.raises(ValueError, match="oneOf other than null"):
        connect_schema({"oneOf": [{"type": "string"}, {"type": "integer"}]})
