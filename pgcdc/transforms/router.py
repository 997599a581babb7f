"""Debezium's ByLogicalTableRouter (io.debezium.transforms.ByLogicalTableRouter, 3.6): several physical tables'
records routed to one logical topic, the key extended with the physical table's identifier so keys stay unique,
key/envelope/row schemas renamed after the new topic (built once per input schema)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pgcdc.errors import ConfigError
from pgcdc.transforms import Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.kafka_connect import java_replacement

OPTIONS = ("topic.regex", "topic.replacement", "key.enforce.uniqueness", "key.field.regex", "key.field.name",
           "key.field.replacement", "schema.name.adjustment.mode", "logical.table.cache.size")


def _renamed(schema: Schema, name: str, fields: list[Schema] | None = None) -> Schema:
    """copySchemaExcludingName + name(): version, doc, parameters, optional and (by default) the fields kept."""
    out: dict[str, Any] = {"type": "struct", "fields": S.fields(schema) if fields is None else fields,
                           "optional": bool(schema.get("optional")), "name": name}
    for k in ("version", "doc", "parameters"):
        if k in schema:
            out[k] = schema[k]
    return out


class ByLogicalTableRouter:
    def __init__(self, where: str, opts: Mapping[str, str]) -> None:
        def regex(name: str) -> re.Pattern[str]:
            try:
                return re.compile(opts[name])
            except re.error as exc:
                raise ConfigError(f"{where}.{name}: not a valid regular expression {opts[name]!r}: {exc}") from None
        for name in ("topic.regex", "topic.replacement"):
            if not opts.get(name):
                raise ConfigError(f"{where}.{name}: required")
        self.topic_rx, self.topic_repl = regex("topic.regex"), java_replacement(opts["topic.replacement"])
        unique = opts.get("key.enforce.uniqueness", "true").strip().lower()
        if unique not in ("true", "false"):
            raise ConfigError(f"{where}.key.enforce.uniqueness: expected true or false (got {unique!r})")
        self.unique = unique == "true"
        self.key_field = opts.get("key.field.name", "__dbz__physicalTableIdentifier")
        self.key_rx = regex("key.field.regex") if opts.get("key.field.regex", "").strip() else None
        if self.key_rx is not None and not opts.get("key.field.replacement"):
            raise ConfigError(f"{where}.key.field.replacement: required with key.field.regex")
        self.key_repl = java_replacement(opts.get("key.field.replacement", ""))
        mode = opts.get("schema.name.adjustment.mode", "none").strip().lower()
        if mode != "none":
            raise ConfigError(f"{where}.schema.name.adjustment.mode: {mode!r} is not supported by pgcdc yet "
                              "(accepted: none)")
        try:
            int(opts.get("logical.table.cache.size", "16"))
        except ValueError:
            raise ConfigError(f"{where}.logical.table.cache.size: expected an integer") from None
        self._topics: dict[str, tuple[str | None, str]] = {}
        self._schemas: dict[tuple[int, str, str], tuple[Schema, Schema]] = {}

    def _topic(self, old: str) -> tuple[str | None, str]:
        hit = self._topics.get(old)
        if hit is None:
            new = self.topic_rx.sub(self.topic_repl, old, count=1) if self.topic_rx.fullmatch(old) else None
            ident = old
            if self.key_rx is not None and self.key_rx.fullmatch(old):
                ident = self.key_rx.sub(self.key_repl, old, count=1)
            hit = self._topics[old] = (new, ident)
        return hit

    def _schema(self, schema: Schema, kind: str, topic: str, make: Any) -> Schema:
        key = (id(schema), kind, topic)
        hit = self._schemas.get(key)
        if hit is None or hit[0] is not schema:
            hit = self._schemas[key] = (schema, make())
        return hit[1]

    def __call__(self, r: Record) -> Record:
        new, ident = self._topic(r.topic)
        if not new:  # no match, or an empty topic: the record as it was
            return r
        changes: dict[str, Any] = {"topic": new}
        if r.key is not None:
            ks = r.key_schema
            if ks is None or not isinstance(r.key, dict):
                raise ValueError("Only Struct objects supported for [Updating schema], found: "
                                 + type(r.key).__name__)
            changes["key_schema"] = self._schema(ks, "key", new, lambda: _renamed(
                ks, new + ".Key", [*S.fields(ks), *([S.as_field(self.key_field, S.STRING)] if self.unique else [])]))
            changes["key"] = {**r.key, self.key_field: ident} if self.unique else r.key
        vs = r.value_schema
        if r.value is None or vs is None or not str(vs.get("name", "")).endswith(".Envelope"):
            return r.new(**changes)

        def envelope() -> Schema:
            before = S.unfield(S.field(vs, "before") or {})
            row = _renamed(before, new + ".Value")
            fields = [S.as_field(f["field"], row) if f["field"] in ("before", "after") else f for f in S.fields(vs)]
            return _renamed(vs, new + ".Envelope", fields)
        changes["value_schema"] = self._schema(vs, "envelope", new, envelope)
        return r.new(**changes)
