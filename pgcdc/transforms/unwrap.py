"""Debezium's ExtractNewRecordState (io.debezium.transforms.ExtractNewRecordState, 3.6), on JSON-form records.

Follows AbstractExtractNewRecordState / DefaultDeleteHandlingStrategy: add.headers first (tombstones get only
`op` = "d"), tombstones kept only by rewrite-with-tombstone, truncates dropped, deletes per
delete.tombstone.handling.mode, then route.by.field, add.fields and drop.fields.header.name. Output schemas are
built once per input schema and operation and reused (Debezium's schemaUpdateCache).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from pgcdc.errors import ConfigError
from pgcdc.transforms import Header, Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec

MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
OPTIONS = ("delete.tombstone.handling.mode", "route.by.field", "add.fields.prefix", "add.fields",
           "add.headers.prefix", "add.headers", "replace.null.with.default", "drop.fields.header.name",
           "drop.fields.from.key", "drop.fields.keep.schema.compatible")
# Names Debezium 3.x no longer reads (it ignores them silently); refused so a 1.x/2.x config is not half-applied.
REMOVED = {
    "drop.tombstones": "use delete.tombstone.handling.mode",
    "delete.handling.mode": "use delete.tombstone.handling.mode",
    "add.source.fields": "use add.fields",
    "operation.header": "use add.headers=op",
}
_TX_FIELDS = ("id", "data_collection_order", "total_order")
_TOP_FIELDS = ("op", "ts_ms", "ts_us", "ts_ns")


def _bool(where: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise ConfigError(f"{where}: expected true or false (got {value!r})")
    return v == "true"


class FieldRef:
    """AbstractExtractNewRecordState.FieldReference: `[struct.]field[:newName]`."""

    __slots__ = ("field", "new", "struct")

    def __init__(self, prefix: str, spec: str) -> None:
        parts = spec.split(":")
        splits = parts[0].split(".")
        self.field = splits[0] if len(splits) == 1 else splits[1]
        if len(splits) == 1:
            self.struct: str | None = ("transaction" if self.field in _TX_FIELDS
                                       else None if self.field in _TOP_FIELDS else "source")
        else:
            self.struct = splits[0]
        if len(parts) == 1:
            self.new = prefix + (self.field if len(splits) == 1 else f"{self.struct}_{self.field}")
        elif len(parts) == 2:
            self.new = prefix + parts[1]
        else:
            raise ValueError(f"Unexpected field name: {spec}")

    def schema(self, envelope: Schema) -> Schema | None:
        parent = S.unfield(S.field(envelope, self.struct) or {}) if self.struct is not None else envelope
        f = S.field(parent, self.field)
        if f is None:
            f = S.field(envelope, self.field)  # added by an earlier transform, in the main payload
            if f is None:
                return None
        return S.basics_optional(f)

    def value(self, envelope: Schema, payload: dict[str, Any]) -> Any:
        parent = payload.get(self.struct) if self.struct is not None else payload
        if parent is None:
            return None
        if self.struct is not None and S.field(S.unfield(S.field(envelope, self.struct) or {}), self.field) is None:
            return payload.get(self.field)
        value = parent.get(self.field)
        # Debezium reads these with getWithoutDefault: a field it left null (source.snapshot while streaming) is
        # null here, though the envelope's JSON shows the schema's default in its place.
        if value is not None and value == self._default(envelope):
            return None
        return value

    def _default(self, envelope: Schema) -> Any:
        f = S.field(S.unfield(S.field(envelope, self.struct) or {}), self.field) if self.struct else \
            S.field(envelope, self.field)
        return None if f is None else f.get("default")


def _refs(prefix: str, spec: str) -> list[FieldRef]:
    return [FieldRef(prefix, s.strip()) for s in spec.split(",")] if spec else []


class ExtractNewRecordState:
    def __init__(self, where: str, opts: Mapping[str, str], header_schemas: bool) -> None:
        for name, hint in REMOVED.items():
            if name in opts:
                raise ConfigError(f"{where}.{name}: removed in Debezium 3.x (which ignores it); {hint}")
        mode = opts.get("delete.tombstone.handling.mode", "tombstone").strip().lower()
        if mode not in MODES:
            raise ConfigError(f"{where}.delete.tombstone.handling.mode: expected one of {', '.join(MODES)} "
                              f"(got {opts['delete.tombstone.handling.mode']!r})")
        self.mode = mode
        self.rewrite = mode in ("rewrite", "rewrite-with-tombstone")
        self.route = opts.get("route.by.field", "") or None
        try:
            self.fields = _refs(opts.get("add.fields.prefix", "__"), opts.get("add.fields", ""))
            self.headers = _refs(opts.get("add.headers.prefix", "__"), opts.get("add.headers", ""))
        except ValueError as exc:
            raise ConfigError(f"{where}.add.fields: {exc}") from None
        self.replace_null = _bool(f"{where}.replace.null.with.default", opts.get("replace.null.with.default", "true"))
        self.drop_header = opts.get("drop.fields.header.name", "") or None
        self.drop_from_key = _bool(f"{where}.drop.fields.from.key", opts.get("drop.fields.from.key", "false"))
        self.keep_compatible = _bool(f"{where}.drop.fields.keep.schema.compatible",
                                     opts.get("drop.fields.keep.schema.compatible", "true"))
        self.header_schemas = header_schemas
        self.codec = Codec()
        # Debezium gives a delete and its tombstone one shared headers object, and this transform adds its
        # headers to that object in place: the tombstone after a delete carries the delete's added headers too.
        self._delete_headers: tuple[str, Any, tuple[Header, ...]] | None = None
        self._fast = not self.headers and self.route is None and self.drop_header is None
        self._plans: dict[int, tuple[Schema, bool, Schema | None, list[FieldRef]]] = {}
        self._cache: dict[tuple[int, str, str], tuple[Schema, Any]] = {}

    # -- headers ------------------------------------------------------------------------------------------
    def _header(self, name: str, schema: Schema, value: Any) -> Header:
        return name, self.codec.encode(schema, value, self.header_schemas) or b"null"

    def _added_headers(self, r: Record) -> tuple[Header, ...]:
        out = []
        for ref in self.headers:
            if r.value is None:
                if ref.field == "op":
                    out.append(self._header(ref.new, S.STRING, "d"))  # headers.addString: a required string
                continue
            vs = r.value_schema
            assert vs is not None
            sch = self._cached(vs, "h", ref.new, lambda ref=ref, vs=vs: ref.schema(vs))
            if sch is not None:
                out.append(self._header(ref.new, sch, ref.value(vs, r.value)))
        return tuple(out)

    def _cached(self, schema: Schema, kind: str, extra: str, make: Any) -> Any:
        key = (id(schema), kind, extra)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not schema:
            hit = self._cache[key] = (schema, make())
        return hit[1]

    # -- the transform --------------------------------------------------------------------------------------
    def _plan(self, vs: Schema) -> tuple[Schema, bool, Schema | None, list[FieldRef]]:
        """Per envelope schema: is it one, and an insert's or update's output schema and the fields to add."""
        valid = isinstance(vs.get("name"), str) and vs["name"].endswith(".Envelope") and vs.get("type") == "struct"
        if not valid:
            plan: tuple[Schema, bool, Schema | None, list[FieldRef]] = (vs, False, None, [])
        else:
            sch = self._after_schema(vs)
            if self.rewrite:
                sch, _ = self._deleted(sch, {}, "false")
            kept = [(ref, s) for ref in self.fields if (s := ref.schema(vs)) is not None]
            out = S.copy_basics(sch, [*S.fields(sch), *(S.as_field(ref.new, s) for ref, s in kept)])
            plan = (vs, True, out, [ref for ref, _ in kept])
        self._plans[id(vs)] = plan
        return plan

    def __call__(self, r: Record) -> Record | None:
        vs = r.value_schema
        if self._fast and vs is not None and type(r.value) is dict:
            # Inserts and updates without headers, routing or dropped fields: one cached plan per table version.
            plan = self._plans.get(id(vs))
            if plan is None or plan[0] is not vs:
                plan = self._plan(vs)
            after = r.value.get("after")
            if plan[1] and after is not None:
                env = r.value
                if self.rewrite:
                    after = {**after, "__deleted": "false"}
                if plan[3]:
                    after = {**after, **{ref.new: ref.value(vs, env) for ref in plan[3]}}
                return r.new(value_schema=plan[2], value=after)
        tombstone = r.value is None
        valid = vs is not None and isinstance(vs.get("name"), str) and vs["name"].endswith(".Envelope") \
            and isinstance(r.value, dict)
        if (valid or tombstone) and self.headers:
            added = self._added_headers(r)
            shared = self._delete_headers
            self._delete_headers = None
            if tombstone and shared is not None and shared[0] == r.topic and shared[1] == r.key:
                added = shared[2] + added
            elif valid and r.value.get("op") == "d":
                self._delete_headers = (r.topic, r.key, added)
            r = r.new(headers=r.headers + added)
        if tombstone:
            return r if self.mode == "rewrite-with-tombstone" else None
        if not valid:
            return r
        assert vs is not None
        env = r.value
        after, before = env.get("after"), env.get("before")
        if after is None and before is None:
            return None  # a truncate
        op = env.get("op") or ""
        if after is None:
            out = self._delete(r, vs, before)
            if out is None:
                return None
            if self.route is not None:
                out = _topic(out, _route(before, self.route, self._before_schema(vs)))
            if self.drop_header is not None:
                out = self._drop_fields(out)
            if out.value is not None:
                out = self._add_fields(r, out, op)
        else:
            sch = self._after_schema(vs)
            if self.rewrite:
                sch, value = self._deleted(sch, after, "false")
            else:
                value = after
            out = r.new(value_schema=sch, value=value)
            if self.route is not None:
                out = _topic(out, _route(value, self.route, sch))
            out = self._add_fields(r, out, op)
            if self.drop_header is not None:
                out = self._drop_fields(out)
        return out

    def _after_schema(self, vs: Schema) -> Schema:
        sch: Schema = self._cached(vs, "after", "", lambda: S.unfield(S.field(vs, "after") or {}))
        return sch

    def _before_schema(self, vs: Schema) -> Schema:
        sch: Schema = self._cached(vs, "before", "", lambda: S.unfield(S.field(vs, "before") or {}))
        return sch

    def _delete(self, r: Record, vs: Schema, before: dict[str, Any]) -> Record | None:
        mode = self.mode
        if mode == "drop":
            return None
        if mode == "tombstone":
            # ExtractField on `after`: its schema stays, the value is null (a JDBC sink reads it as a delete).
            return r.new(value_schema=self._after_schema(vs), value=None)
        if mode == "delete-to-tombstone":
            return r.new(value_schema=None, value=None)
        sch = self._before_schema(vs)
        sch, value = self._deleted(sch, before, "true")
        return r.new(value_schema=sch, value=value)

    def _deleted(self, sch: Schema, value: dict[str, Any], flag: str) -> tuple[Schema, dict[str, Any]]:
        """InsertField.Value with static.field=__deleted (an optional string), as the rewrite modes add it."""
        out = self._cached(sch, "deleted", "", lambda: S.copy_basics(
            sch, [*S.fields(sch), S.as_field("__deleted", S.OPTIONAL_STRING)]))
        return out, {**value, "__deleted": flag}

    def _add_fields(self, original: Record, r: Record, op: str) -> Record:
        # Called with nothing to add too: Debezium rebuilds the value then as well (the schema copy drops
        # `optional`, as SchemaUtil.copySchemaBasics does).
        env_schema, env = original.value_schema, original.value
        assert env_schema is not None and r.value_schema is not None

        def make() -> tuple[Schema, list[FieldRef]]:
            present = [(ref, ref.schema(env_schema)) for ref in self.fields]
            kept = [(ref, s) for ref, s in present if s is not None]
            return (S.copy_basics(r.value_schema, [*S.fields(r.value_schema),  # type: ignore[arg-type]
                                                   *(S.as_field(ref.new, s) for ref, s in kept)]),
                    [ref for ref, _ in kept])
        sch, refs = self._cached(r.value_schema, "add", str(id(env_schema)), make)
        value = r.value
        if refs:
            value = {**value, **{ref.new: ref.value(env_schema, env) for ref in refs}}
        return r.new(value_schema=sch, value=value)

    def _drop_fields(self, r: Record) -> Record:
        raw = next((b for n, b in r.headers if n == self.drop_header), None)
        if raw is None:
            return r
        names = orjson.loads(raw)
        if isinstance(names, dict) and "payload" in names:
            names = names["payload"]
        if not names:
            return r
        if self.drop_from_key and r.key is not None and r.key_schema is not None:
            ks, k = _exclude(r.key_schema, r.key, self._droppable(r.key_schema, names))
            r = r.new(key_schema=ks, key=k)
        if r.value_schema is not None:
            vs, v = _exclude(r.value_schema, r.value, self._droppable(r.value_schema, names))
            r = r.new(value_schema=vs, value=v)
        return r

    def _droppable(self, schema: Schema, names: list[str]) -> list[str]:
        if not self.keep_compatible:
            return names
        return [f["field"] for f in S.fields(schema) if f.get("optional") and f["field"] in names]


def _exclude(schema: Schema, value: Any, names: list[str]) -> tuple[Schema, Any]:
    """ReplaceField with `exclude`."""
    if not names:
        return schema, value
    sch = S.copy_basics(schema, [f for f in S.fields(schema) if f["field"] not in names])
    if value is None:
        return sch, None
    return sch, {k: v for k, v in value.items() if k not in names}


def _route(row: dict[str, Any], name: str, schema: Schema) -> Any:
    """Struct.getString(route.by.field): a field the row's schema lacks fails the record."""
    if S.field(schema, name) is None:
        raise ValueError(f"{name} is not a valid field name")
    return row.get(name)


def _topic(r: Record, name: Any) -> Record:
    return r if not isinstance(name, str) or not name.strip() else r.new(topic=name)
