"""`Event`: one record the engine delivers, its bytes and a typed view of it.

A record reaches the application in up to three forms, and the view reads each fact from the form that holds it:
- as captured: the change pgcdc read (Debezium's envelope, before any transform). `kind`, `op` and `source`
  come from it, so a router, a flattening or an outbox transform cannot hide what happened where;
- in its Connect form: the record after the transforms, as JsonConverter writes it with its schema (the input
  of the configured converters). `key_json`/`value_json`/`payload` and the typed values come from it, so the
  view is the same whatever `key.converter`/`value.converter` write (Avro, ByteArray, …): no registry is asked,
  and the values are those of the JSON path by construction;
- as converted: `key`/`value`, the bytes Kafka would get.
Without transforms and converters the three are one. The engine keeps references to bytes it already has; nothing
is parsed until an attribute asks.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

from pgcdc.embed.values import decoder, struct_decoder
from pgcdc.sink import Headers

if TYPE_CHECKING:
    from pgcdc.embed import Engine

_ENVELOPE_FIELDS = frozenset({"before", "after", "op"})


def _payload(v: Any) -> Any:
    return v["payload"] if isinstance(v, dict) and "schema" in v and "payload" in v else v


def _is_envelope(v: Any) -> bool:
    """Whether a Connect-form value is still Debezium's change envelope (no transform reshaped it)."""
    if isinstance(v, dict) and "schema" in v and "payload" in v:
        schema = v["schema"]
        return isinstance(schema, dict) and str(schema.get("name") or "").endswith(".Envelope")
    return isinstance(v, dict) and v.keys() >= _ENVELOPE_FIELDS


class Event:
    """One record as Debezium would have written it to Kafka, and a typed view of it.

    Bytes: `topic`, `key`, `value` (as the configured converters wrote them, None for a tombstone), `headers`,
    `partition`. Connect form (JsonConverter with schema, whatever the converters): `key_json`/`value_json`,
    `payload`. As captured: `kind`, `op`, `source`, `lsn`, `schema`, `table`. Typed (Python values: Decimal,
    datetime, date, time, timedelta, UUID, bytes — decoded through the record's own Connect schema; without
    schemas, the JSON values): `before`/`after`/`key_values`, and `data`/`key_data` whatever the shape.
    CloudEvents records (CloudEventsConverter): `cloudevent`, the event's attributes.
    """

    __slots__ = ("__dict__", "_captured", "_engine", "_form_key", "_form_value", "headers", "key", "kind",
                 "partition", "seq", "topic", "transformed", "value")

    def __init__(self, engine: Engine | None, seq: int, kind: str, topic: str, key: bytes | None,
                 value: bytes | None, headers: Headers | None, partition: int | None, *,
                 connect: tuple[bytes | None, bytes | None] | None = None,
                 captured: bytes | None = None, transformed: bool = False) -> None:
        self._engine = engine
        self.seq = seq
        self.kind = kind  # change | tombstone | transaction | message | heartbeat, as captured
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = list(headers or ())
        self.partition = partition
        # The Connect form when a converter other than JsonConverter wrote `key`/`value`.
        self._form_key, self._form_value = connect if connect is not None else (key, value)
        self.transformed = transformed  # a transform chain ran: `_captured` is the value before it
        self._captured = captured

    def commit(self) -> None:
        """Mark this event, and every event delivered before it, as processed."""
        if self._engine is not None:
            self._engine._commit(self.seq)

    def header(self, name: str) -> Any:
        """The value of header `name` (its JSON payload, without a schema), or None."""
        for n, raw in self.headers:
            if n == name:
                return _payload(orjson.loads(raw))
        return None

    # -- the Connect form -------------------------------------------------------------------------------
    @cached_property
    def key_json(self) -> Any:
        return orjson.loads(self._form_key) if self._form_key is not None else None

    @cached_property
    def value_json(self) -> Any:
        return orjson.loads(self._form_value) if self._form_value is not None else None

    @cached_property
    def payload(self) -> Any:
        """The value without its Connect schema (the envelope for untransformed change events)."""
        return _payload(self.value_json)

    @cached_property
    def cloudevent(self) -> dict[str, Any] | None:
        """The attributes of the CloudEvent that CloudEventsConverter wrote as `value` (`id`, `source`,
        `specversion`, `type`, `time`, `datacontenttype`, `dataschema`, the `iodebezium*` extensions), without
        its `data`; None for any other record (and for the keys, tombstones and metadata records the converter
        writes as null)."""
        read = self._engine._cloudevents if self._engine is not None else None
        return read(self.value) if read is not None and self.value is not None else None

    # -- as captured --------------------------------------------------------------------------------------
    @cached_property
    def _change(self) -> Any:
        """The captured change's envelope payload (the record before the transforms)."""
        if not self.transformed:
            return self.payload
        return _payload(orjson.loads(self._captured)) if self._captured is not None else None

    @property
    def op(self) -> str | None:
        """`c`, `u`, `d`, `r`, `t` for change events (the captured operation); None otherwise."""
        p = self._change
        return p.get("op") if self.kind == "change" and isinstance(p, dict) else None

    @property
    def source(self) -> dict[str, Any]:
        p = self._change
        return (p.get("source") or {}) if isinstance(p, dict) else {}

    @property
    def lsn(self) -> int | None:
        return self.source.get("lsn")

    @property
    def schema(self) -> str | None:
        return self.source.get("schema")

    @property
    def table(self) -> str | None:
        return self.source.get("table")

    # -- typed values -------------------------------------------------------------------------------------
    @cached_property
    def before(self) -> dict[str, Any] | None:
        return self._row("before")

    @cached_property
    def after(self) -> dict[str, Any] | None:
        return self._row("after")

    @cached_property
    def key_values(self) -> dict[str, Any] | None:
        k = self.key_data
        return k if isinstance(k, dict) else None

    @cached_property
    def key_data(self) -> Any:
        """The key decoded through its schema, whatever its shape (a struct, or a primitive after a transform)."""
        return _typed(self.key_json)

    @cached_property
    def data(self) -> Any:
        """The value decoded through its schema, whatever its shape (an envelope, a flattened row, an outbox
        payload, bytes)."""
        return _typed(self.value_json)

    def _row(self, field: str) -> dict[str, Any] | None:
        if self.kind != "change":
            return None
        v = self.value_json
        if not self.transformed or _is_envelope(v):
            if isinstance(v, dict) and "schema" in v:
                for f in v["schema"].get("fields", ()):
                    if f.get("field") == field:
                        return struct_decoder(f)(v["payload"].get(field))
                return None
            return v.get(field) if isinstance(v, dict) else None
        # A reshaped value (ExtractNewRecordState's row with its added fields, an expanded outbox payload): the
        # row stands where the envelope would have had it, `before` for a delete and `after` otherwise.
        if field != ("before" if self.op == "d" else "after"):
            return None
        row = self.data
        return row if isinstance(row, dict) else None

    def __repr__(self) -> str:
        what = self.op or self.kind
        where = f"{self.schema}.{self.table}" if self.table else self.topic
        return f"Event({what} {where} key={self.key_values if self.kind in ('change', 'tombstone') else None})"


def _typed(v: Any) -> Any:
    if isinstance(v, dict) and "schema" in v and "payload" in v:
        return decoder(v["schema"])(v["payload"])
    return v
