"""Debezium's outbox EventRouter (io.debezium.transforms.outbox.EventRouter / EventRouterDelegate, 3.6).

An outbox row's insert becomes one event: topic from `route.by.field` through `route.topic.regex` /
`route.topic.replacement`, key the `table.field.event.key` column, value the payload column (expanded from JSON
text with `table.expand.json.payload`) alone, or in a struct with the columns placed in the `envelope`; an `id`
header with the event id, plus the columns placed in a `header`; the partition from a column placed in
`partition`. Deletes are dropped (the insert-then-delete pattern), updates dropped or fatal per
`table.op.invalid.behavior`, tombstones dropped; records without a change-event envelope (transaction metadata,
logical messages) pass through. Lookups by column name happen once per table version.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import orjson

from pgcdc.errors import ConfigError
from pgcdc.transforms import Header, Record, Schema
from pgcdc.transforms import schema as S
from pgcdc.transforms.codec import Codec
from pgcdc.transforms.kafka_connect import java_replacement
from pgcdc.transforms.outbox_json import Expander, NotExpandable

log = logging.getLogger(__name__)

OPTIONS = ("table.field.event.id", "table.field.event.key", "table.field.event.type", "table.field.event.payload",
           "table.field.event.timestamp", "table.fields.additional.placement",
           "table.fields.additional.error.on.missing", "table.field.event.schema.version", "route.by.field",
           "route.topic.regex", "route.topic.replacement", "route.tombstone.on.empty.payload",
           "table.op.invalid.behavior", "table.expand.json.payload", "table.json.payload.null.behavior",
           "field.name.adjustment.mode")
PLACEMENTS = ("header", "envelope", "partition")
# Event timestamp columns: the record timestamp in milliseconds from the column's logical type.
_TS_DIVISORS = {"io.debezium.time.Timestamp": 1, "io.debezium.time.MicroTimestamp": 1_000,
                "io.debezium.time.NanoTimestamp": 1_000_000}
_JAVA_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z])")


def _bool(where: str, value: str) -> bool:
    if value.strip().lower() not in ("true", "false"):
        raise ConfigError(f"{where}: expected true or false (got {value!r})")
    return value.strip().lower() == "true"


def _choice(where: str, value: str, accepted: tuple[str, ...]) -> str:
    v = value.strip().lower()
    if v not in accepted:
        raise ConfigError(f"{where}: expected one of {', '.join(accepted)} (got {value!r})")
    return v


def _invalid(name: str) -> ValueError:
    return ValueError(f"{name} is not a valid field name")  # Struct.get's DataException


class _Plan:
    """What one outbox table version's `after` schema gives: the columns the options name, looked up once."""

    __slots__ = ("after", "envelope_fields", "error", "headers", "id_schema", "key_schema", "partition", "payload",
                 "payload_key", "route", "ts_divisor", "version")

    def __init__(self, router: EventRouter, vs: Schema) -> None:
        self.error: str | None = None
        self.after = after = S.unfield(S.field(vs, "after") or {})
        self.payload = S.field(after, router.payload_field)
        self.payload_key = orjson.dumps(self.payload) if self.payload is not None else b""
        idf = S.field(after, router.id_field)
        self.id_schema = S.unfield(idf) if idf is not None else None
        keyf = S.field(after, router.key_field) if router.key_field else None
        self.key_schema = S.unfield(keyf) if keyf is not None else S.STRING
        self.route = S.field(after, router.route_field)
        self.ts_divisor: int | None = None
        if router.ts_field is not None:
            tsf = S.field(after, router.ts_field)
            if tsf is None:
                self.error = f"Unable to find timestamp field {router.ts_field} in event"
            elif tsf.get("name") not in _TS_DIVISORS:
                self.error = (f"Unsupported field type {tsf.get('name')} for event timestamp" if tsf.get("name")
                              else f"Unsupported field type {tsf['type'].upper()} (without logical schema name) "
                                   "for event timestamp")
            else:
                self.ts_divisor = _TS_DIVISORS[tsf["name"]]
        self.version = S.field(after, router.version_field) if router.version_field else None
        self.headers: list[tuple[str, str, Schema]] = []
        self.envelope_fields: list[tuple[str, str, Schema]] = []
        self.partition: str | None = None
        for placement, column, alias in router.additional:
            f = S.field(after, column)
            if f is None:
                # Debezium 3.6.3 fails the record with table.fields.additional.error.on.missing=false too
                # (measured: Struct.get's "nosuch is not a valid field name").
                self.error = self.error or f"{column} is not a valid field name"
                continue
            if placement == "header":
                self.headers.append((alias, column, S.unfield(f)))
            elif placement == "envelope":
                self.envelope_fields.append((alias, column, S.unfield(f)))
            else:
                if f["type"] != "int32":
                    self.error = self.error or f"Field '{column}' is not of type INT32"
                self.partition = column


class EventRouter:
    def __init__(self, where: str, opts: Mapping[str, str], header_schemas: bool) -> None:
        self.id_field = opts.get("table.field.event.id", "id")
        self.key_field = opts.get("table.field.event.key", "aggregateid")
        self.payload_field = opts.get("table.field.event.payload", "payload")
        self.ts_field = opts.get("table.field.event.timestamp") or None
        self.version_field = opts.get("table.field.event.schema.version") or None
        self.route_field = opts.get("route.by.field", "aggregatetype")
        pattern = opts.get("route.topic.regex", "(?<routedByValue>.*)")
        try:
            # Java's named groups (?<name>...) are Python's (?P<name>...).
            self.topic_rx = re.compile(_JAVA_NAMED_GROUP.sub("(?P<", pattern))
        except re.error as exc:
            raise ConfigError(f"{where}.route.topic.regex: not a valid regular expression {pattern!r}: {exc}") \
                from None
        self.topic_repl = java_replacement(opts.get("route.topic.replacement", "outbox.event.${routedByValue}"))
        self.tombstone_on_empty = _bool(f"{where}.route.tombstone.on.empty.payload",
                                        opts.get("route.tombstone.on.empty.payload", "false"))
        self.invalid = _choice(f"{where}.table.op.invalid.behavior", opts.get("table.op.invalid.behavior", "warn"),
                               ("warn", "error", "fatal"))
        self.expand = _bool(f"{where}.table.expand.json.payload", opts.get("table.expand.json.payload", "false"))
        nulls = _choice(f"{where}.table.json.payload.null.behavior",
                        opts.get("table.json.payload.null.behavior", "ignore"), ("ignore", "optional_bytes"))
        mode = _choice(f"{where}.field.name.adjustment.mode", opts.get("field.name.adjustment.mode", "none"),
                       ("none", "avro", "avro_unicode"))
        self.expander = Expander(nulls == "optional_bytes", mode)
        _bool(f"{where}.table.fields.additional.error.on.missing",
              opts.get("table.fields.additional.error.on.missing", "true"))
        # EventRouterConfigDefinition.parseAdditionalFieldsConfig: `column:placement[:alias]`, split as written.
        self.additional: list[tuple[str, str, str]] = []
        spec = opts.get("table.fields.additional.placement", "")
        for item in spec.split(",") if spec else ():
            parts = item.split(":")
            if len(parts) not in (2, 3) or not parts[0]:
                raise ConfigError(f"{where}.table.fields.additional.placement: expected column:placement[:alias] "
                                  f"(got {item!r})")
            placement = _choice(f"{where}.table.fields.additional.placement", parts[1], PLACEMENTS)
            self.additional.append((placement, parts[0], parts[2] if len(parts) == 3 else parts[0]))
        self.only_payload = not any(p == "envelope" for p, _, _ in self.additional)
        self.codec = Codec()
        self.header_schemas = header_schemas
        self._plans: dict[int, tuple[Schema, _Plan]] = {}
        # Debezium's payloadSchemaCache / versionedValueSchema: the output schema is cached by the payload schema
        # (or by the schema version), so its name keeps the route value of the first event that built it.
        self._value_schemas: dict[Any, Schema] = {}

    def _plan(self, vs: Schema) -> _Plan:
        hit = self._plans.get(id(vs))
        if hit is None or hit[0] is not vs:
            hit = self._plans[id(vs)] = (vs, _Plan(self, vs))
        return hit[1]

    def _header(self, name: str, schema: Schema, value: Any) -> Header:
        return name, self.codec.encode(schema, value, self.header_schemas) or b"null"

    def _value_schema(self, plan: _Plan, vs_name: str, route: str, payload_schema: Schema, payload_key: bytes,
                      version: int | None) -> Schema:
        key = ("v", version) if self.version_field else payload_key
        hit = self._value_schemas.get(key)
        if hit is None:
            last = vs_name.rfind(".")
            name = vs_name[:last + 1] + route + "." + vs_name[last + 1:] if last != -1 else route + "." + vs_name
            out: Schema = {"type": "struct", "fields": [
                S.as_field("payload", payload_schema), *(S.as_field(alias, s) for alias, _, s in plan.envelope_fields)],
                "optional": False, "name": name}
            if version is not None:
                out["version"] = version
            hit = self._value_schemas[key] = out
        return hit

    def __call__(self, r: Record) -> Record | None:
        if r.value is None:
            return None  # a tombstone
        vs = r.value_schema
        if vs is None or not str(vs.get("name", "")).endswith(".Envelope") or not isinstance(r.value, dict):
            return r  # not a change event: transaction metadata, a logical message
        op = r.value.get("op")
        if op == "d":
            return None
        if op == "u":
            if self.invalid == "fatal":
                raise RuntimeError(f"Unexpected update message received {r.key}, fail.")
            (log.warning if self.invalid == "warn" else log.error)(
                "Unexpected update message received %s and ignored", r.key)
            return None
        plan = self._plan(vs)
        row = r.value.get("after")
        if not isinstance(row, dict):
            raise ValueError(f"Only Struct objects supported for [Read Outbox Event], found: {type(row).__name__}")
        if plan.payload is None:
            raise ValueError(f"Unable to find payload field {self.payload_field} in event")
        if plan.error is not None:
            raise ValueError(plan.error)
        timestamp = r.value.get("ts_ms")
        if plan.ts_divisor is not None and row.get(self.ts_field) is not None:
            timestamp = row[self.ts_field] // plan.ts_divisor
        if self.id_field not in row:
            raise _invalid(self.id_field)
        payload = row.get(self.payload_field)
        if plan.id_schema is None:
            raise ValueError(f"Unable to find event-id field {self.id_field} in event")
        headers = [*r.headers, self._header("id", plan.id_schema, row[self.id_field])]
        payload_schema, payload_key = S.unfield(plan.payload), plan.payload_key
        if self.expand and isinstance(payload, str):
            try:
                payload_schema, payload = self.expander.expand(self.payload_field, payload)
                payload_key = orjson.dumps(payload_schema)
            except NotExpandable as exc:
                log.warning("JSON expansion failed: %s", exc)
        if plan.route is None:
            raise _invalid(self.route_field)
        route = row.get(self.route_field)
        version = None
        if self.version_field:
            if plan.version is None:
                raise _invalid(self.version_field)
            version = row.get(self.version_field)
        struct_schema = None if self.only_payload else self._value_schema(
            plan, str(plan.after.get("name", "")), str(route), payload_schema, payload_key, version)
        if struct_schema is not None and payload is not None and struct_schema["fields"][0] != \
                S.as_field("payload", payload_schema):
            # The schema cached for this schema version was built from another payload's schema: Struct.put
            # refuses the value (Debezium 3.6.3 fails the record).
            raise ValueError(f"Invalid Java object for schema \"{struct_schema['fields'][0].get('name')}\" with "
                             f"type {struct_schema['fields'][0]['type'].upper()}: class "
                             f"{'String' if isinstance(payload, str) else 'Struct'} for field: \"payload\"")
        struct: dict[str, Any] = {"payload": payload}
        for alias, column, _ in plan.envelope_fields:
            struct[alias] = row.get(column)
        for alias, column, schema in plan.headers:
            headers.append(self._header(alias, schema, row.get(column)))
        partition = row.get(plan.partition) if plan.partition is not None else None
        empty = payload is None or (isinstance(payload, str) and not payload.strip())
        value_schema: Schema | None
        if empty and self.tombstone_on_empty:
            value_schema, value = None, None
        elif self.only_payload:
            value_schema, value = payload_schema, payload
        else:
            value_schema, value = struct_schema, struct
        if self.key_field and self.key_field not in row:
            raise _invalid(self.key_field)
        key = row.get(self.key_field) if self.key_field else None
        topic = route
        if route is not None and self.topic_rx.fullmatch(route):
            topic = self.topic_rx.sub(self.topic_repl, route, count=1)
        # A null route value gives a null topic in Debezium (which its producer then refuses).
        if topic is None:
            raise ValueError(f"{self.route_field} is null: no topic to route the event to")
        return Record(topic, partition, plan.key_schema, key, value_schema, value, tuple(headers), timestamp)
