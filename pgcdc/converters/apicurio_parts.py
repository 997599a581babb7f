"""The schema as Apicurio's 3.0.9 serde registers it: AvroSchemaParser.getSchemaFromData (serde-common-avro) makes
each named record it reaches (a record field, a union's record branch, an array's or map's record items; not
deeper in a union's array) a reference, registered first as an artifact named after the record's full name, its
text the record with its own references written by name (Avro's Schema.toString(known types)); the schema itself
is then registered with that list of references (in field order, repeated as often as they appear). Measured
against Apicurio's AvroConverter, alone and as CloudEventsConverter's delegate (tests/data/apicurio_avro,
tests/data/apicurio_cloudevents).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from pgcdc.converters.avro_schema import _ESCAPE, _Avro, _Builder, _json, _upper


@dataclass(frozen=True, slots=True)
class Part:
    """One schema as Apicurio's serde registers it: its full name, its text, the references it names."""

    name: str
    text: str
    refs: tuple[Part, ...]


def _full(node: _Avro) -> str:
    return f"{node.space}.{node.name}" if node.space else str(node.name)


def _references(node: _Avro) -> list[_Avro]:
    """AvroSchemaParser.handleReferences: the records a record's fields, a union's branches or a collection's
    items name directly."""
    if node.kind == "record":
        return [r for _, f, _ in node.fields for r in ([f] if f.kind == "record" else _references(f))]
    if node.kind == "union":
        return [b for b in node.branches if b.kind == "record"]
    if node.kind in ("array", "map") and node.items is not None and node.items.kind == "record":
        return [node.items]
    return []


def _part(node: _Avro) -> Part:
    refs = _references(node)
    known = {(r.space, r.name) for r in refs}
    text = _ESCAPE.sub(_upper, orjson.dumps(_json(node, known, [None]))).decode()
    return Part(_full(node), text, tuple(_part(r) for r in refs))


def apicurio_part(connect_schema: dict[str, Any]) -> Part:
    """The schema Apicurio's AvroConverter registers for `connect_schema`, with its references."""
    return _part(_Builder().build(connect_schema))
