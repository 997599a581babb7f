"""Debezium's ExtractChangedRecordState (io.debezium.transforms.ExtractChangedRecordState, 3.6): an event with
both `before` and `after` (an update under REPLICA IDENTITY FULL) gets headers listing the fields whose values
changed and those that did not, in `after`'s field order.

Debezium compares the Java values with Objects.equals; the JSON forms compare the same way, except for a byte
array, which Java compares by identity: a `bytes` field without a logical type always counts as changed (measured
with Debezium 3.6.3). Which fields those are is worked out once per table version.
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
        self._plans: dict[int, tuple[Schema, list[tuple[str, bool]]]] = {}

    def _plan(self, vs: Schema) -> list[tuple[str, bool]]:
        hit = self._plans.get(id(vs))
        if hit is None or hit[0] is not vs:
            after = S.unfield(S.field(vs, "after") or {})
            # (field, compared by identity): a byte[] is never equal to another.
            hit = self._plans[id(vs)] = (vs, [(f["field"], f.get("type") == "bytes" and "name" not in f)
                                              for f in S.fields(after)])
        return hit[1]

    def _header(self, name: str, schema: Schema, value: Any) -> Header:
        return name, self.codec.encode(schema, value, self.header_schemas) or b"null"

    def __call__(self, r: Record) -> Record:
        vs = r.value_schema
        if r.value is None or vs is None or not str(vs.get("name", "")).endswith(".Envelope") \
                or not isinstance(r.value, dict):
            return r
        after, before = r.value.get("after"), r.value.get("before")
        if after is None or before is None:
            return r
        changed: list[str] = []
        unchanged: list[str] = []
        for name, identity in self._plan(vs):
            a, b = after.get(name), before.get(name)
            if a != b or (identity and a is not None):
                changed.append(name)
            else:
                unchanged.append(name)
        headers = list(r.headers)
        for spec, names in zip(self.names, (changed, unchanged), strict=True):
            if spec is not None:
                headers.append(self._header(spec[0], spec[1], names))
        return r.new(headers=tuple(headers))
