"""Kafka Connect's HeaderFrom$Key/$Value (org.apache.kafka.connect.transforms.HeaderFrom, 4.x): fields of the key
or value copied or moved into headers, each header with its field's schema, written by the header converter.

As in Kafka Connect, a tombstone (no schema, no value) fails the record ("Only Map objects supported in absence
of schema"), and a listed field the struct lacks fails it too; the moved-out schema is built once per schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Header, Record, Schema, Transform
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec


def _list(value: str) -> list[str]:
    return [x.strip() for x in value.split(",")] if value.strip() else []


def header_from(key: bool) -> Callable[[str, Mapping[str, str], Any], Transform]:
    def make(where: str, opts: Mapping[str, str], ctx: Any) -> Transform:
        for name in ("fields", "headers", "operation"):
            if name not in opts:
                raise ConfigError(f"{where}.{name}: required")
        fields, headers = _list(opts["fields"]), _list(opts["headers"])
        if len(fields) != len(headers):
            raise ConfigError(f"{where}.fields: must have as many elements as {where}.headers")
        op = opts["operation"].strip()
        if op not in ("move", "copy"):
            raise ConfigError(f"{where}.operation: expected move or copy (got {opts['operation']!r})")
        move, what = op == "move", f"header {op}"
        pairs = list(zip(fields, headers, strict=True))
        moved = frozenset(fields)
        codec = Codec()
        cache: dict[int, tuple[Schema, Schema, list[tuple[str, Schema]]]] = {}

        def header(name: str, schema: Schema | None, value: Any) -> Header:
            return name, codec.encode(schema, value, ctx.header_schemas) or b"null"

        def apply(r: Record) -> Record:
            schema, value = (r.key_schema, r.key) if key else (r.value_schema, r.value)
            if schema is None:
                if not isinstance(value, dict):
                    raise ValueError(f"Only Map objects supported in absence of schema for [{what}], found: "
                                     + ("null" if value is None else type(value).__name__))
                added = tuple(header(h, None, value.get(f)) for f, h in pairs)
                out_schema, out = None, ({k: v for k, v in value.items() if k not in moved} if move else value)
            else:
                if not isinstance(value, dict):
                    raise ValueError(f"Only Struct objects supported for [{what}], found: "
                                     + ("null" if value is None else type(value).__name__))
                hit = cache.get(id(schema))
                if hit is None or hit[0] is not schema:
                    subs = []
                    for f, _ in pairs:
                        sub = S.field(schema, f)
                        if sub is None:  # operatingSchema.field(name).schema(): a NullPointerException
                            raise ValueError(f"field {f} is not in the schema")
                        subs.append((f, S.unfield(sub)))
                    kept = S.copy_basics(schema, [x for x in S.fields(schema) if x["field"] not in moved]) \
                        if move else schema
                    hit = cache[id(schema)] = (schema, kept, subs)
                out_schema = hit[1]
                added = tuple(header(h, sub, value.get(f)) for (f, sub), (_, h) in zip(hit[2], pairs, strict=True))
                out = {k: v for k, v in value.items() if k not in moved} if move else value
            changes: dict[str, Any] = {"headers": r.headers + added}
            changes.update({"key_schema": out_schema, "key": out} if key else {"value_schema": out_schema,
                                                                             "value": out})
            return r.new(**changes)
        return apply
    return make
