"""Debezium's ExtractChangedRecordState (io.debezium.transforms.ExtractChangedRecordState, 3.6): every change
event gets headers listing the fields whose values changed and those that did not, in `after`'s field order;
both lists are filled only when the event has `before` and `after` (an update under REPLICA IDENTITY FULL) and
are empty otherwise (measured with Debezium 3.6.3: inserts and deletes carry the two empty headers too).

Debezium compares the values with Objects.equals (bytes as ByteBuffers, by content): the JSON forms compare
the same way. The field names are read once per table version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgcdc.transforms import Header, Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec

OPTIONS = ("header.changed.name", "header.unchanged.name")


class ExtractChangedRecordState:
    def __init__(self, where: str, opts: Mapping[str, str], header_schemas: bool) -> None:
        # A blank name configures a schema but adds no header (Strings.isNullOrBlank).
        self.names = [(n, {"type": "array", "items": S.OPTIONAL_STRING, "optional": True, "name": n})
                      if n is not None and n.strip() else None
                      for n in (opts.get("header.changed.name"), opts.get("header.unchanged.name"))]
        self.codec = Codec()
        self.header_schemas = header_schemas
        self._plans: dict[int, tuple[Schema, list[str]]] = {}
        # Debezium gives a delete and its tombstone one headers object, and this transform adds to it in place:
        # the tombstone after a delete carries the delete's added headers (measured with Debezium 3.6.3).
        self._delete_headers: tuple[str, Any, tuple[Header, ...]] | None = None

    def _plan(self, vs: Schema) -> list[str]:
        hit = self._plans.get(id(vs))
        if hit is None or hit[0] is not vs:
            hit = self._plans[id(vs)] = (vs, [f["field"] for f in S.fields(S.unfield(S.field(vs, "after") or {}))])
        return hit[1]

    def _header(self, name: str, schema: Schema, value: Any) -> Header:
        return name, self.codec.encode(schema, value, self.header_schemas) or b"null"

    def __call__(self, r: Record) -> Record:
        shared, self._delete_headers = self._delete_headers, None
        if r.value is None:
            if shared is not None and shared[0] == r.topic and shared[1] == r.key:
                return r.new(headers=r.headers + shared[2])
            return r
        vs = r.value_schema
        if vs is None or not str(vs.get("name", "")).endswith(".Envelope") \
                or not isinstance(r.value, dict):
            return r
        after, before = r.value.get("after"), r.value.get("before")
        changed: list[str] = []
        unchanged: list[str] = []
        if after is not None and before is not None:
            for name in self._plan(vs):
                (changed if after.get(name) != before.get(name) else unchanged).append(name)
        added = tuple(self._header(spec[0], spec[1], names)
                      for spec, names in zip(self.names, (changed, unchanged), strict=True) if spec is not None)
        if r.value.get("op") == "d":
            self._delete_headers = (r.topic, r.key, added)
        return r.new(headers=r.headers + added)
