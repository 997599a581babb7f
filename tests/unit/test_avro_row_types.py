"""The row's schema an Avro events writer compiles (converters/avro_events.py `_row_types`): `before`'s record,
given the namespace it inherits from the envelope, where `after` names it; spavro's reading otherwise. Either
way spavro writes the same bytes for a row as its writer of the whole envelope's `before` and `after`."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
import spavro.schema
from spavro.fast_binary import get_writer

from pgcdc.converters.avro_events import _row_types

POINT = {"type": "record", "name": "Point", "namespace": "io.debezium.data.geometry",
         "fields": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}


def _envelope(record: dict[str, Any], after: str, **top: str) -> dict[str, Any]:
    return {"type": "record", **top, "fields": [{"name": "before", "type": ["null", record]},
                                                {"name": "after", "type": ["null", after]}]}


ROW = {"type": "record", "name": "Value", "fields": [
    {"name": "id", "type": "long"}, {"name": "p", "type": ["null", POINT]},
    {"name": "q", "type": ["null", "io.debezium.data.geometry.Point"]}, {"name": "s", "type": ["null", "string"]}]}
DOCS = {
    "inherited namespace": _envelope(ROW, "Value", name="Envelope", namespace="dbserver1.public.t"),
    "dotted envelope name": _envelope(ROW, "dbserver1.public.t.Value", name="dbserver1.public.t.Envelope"),
    "own namespace": _envelope({**ROW, "namespace": "n"}, "n.Value", name="Envelope", namespace="m"),
    "dotted record name": _envelope({**ROW, "name": "a.b.Value"}, "a.b.Value", name="Envelope", namespace="m"),
}
DATUMS = [{"id": 1, "p": {"x": 1.5, "y": -0.0}, "q": None, "s": "é"}, {"id": -2**63, "p": None,
                                                                        "q": {"x": 0.0, "y": 2.0}, "s": None}]


@pytest.mark.parametrize("name", DOCS)
def test_the_row_schema_writes_what_the_envelope_writes(name: str) -> None:
    doc = DOCS[name]
    before, after = _row_types(doc)
    fields = {f.name: f.type for f in spavro.schema.parse(orjson.dumps(doc).decode()).fields}
    for datum in [None, *DATUMS]:
        expected = _bytes(get_writer(fields["before"].to_json()), datum)
        assert _bytes(get_writer(before), datum) == expected == _bytes(get_writer(after), datum)
    if name != "dotted record name":
        assert before == after and before[1]["namespace"] in ("dbserver1.public.t", "n")


def _bytes(write: Any, datum: Any) -> bytes:
    out = io.BytesIO()
    write(out, datum)
    return out.getvalue()
