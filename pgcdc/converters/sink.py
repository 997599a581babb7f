"""The seam between the envelope and a converter other than JsonConverter: a Sink around the real sink.

The envelope writes each record as JsonConverter with schemas would (`{"schema":…,"payload":…}`), on its
templates; this sink splits those bytes, keeps one prepared converter per schema JSON (the bytes are the same
for every record of a schema version, so a comparison with the last record's schema, or else a dict lookup, is
the only per-record cost before the payload is parsed) and hands the converted key and value to the real sink.
Headers are JsonConverter's with their schema (`__debezium.*` headers and those transforms add) until here;
with another header converter each is converted the same way, one prepared converter per header schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

import orjson

from pgcdc.converters import Converter, Prepared, make_converter
from pgcdc.errors import ConversionError, PgcdcError, SinkError
from pgcdc.sink import Headers, Sink

_START = b'{"schema":'
_PAYLOAD = b',"payload":'


def split_json(data: bytes) -> tuple[bytes, bytes]:
    """(schema JSON, payload JSON) of JsonConverter's `{"schema":…,"payload":…}` bytes. A Connect schema's JSON
    has no object member named `payload` (its members are type, fields, name, …), and a quote inside a string
    is always escaped, so the first `,"payload":` is the wrapper's."""
    i = data.find(_PAYLOAD)
    if i < 0 or not data.startswith(_START):
        raise SinkError("a record reached a schema converter without its schema (schemas.enable is off)")
    return data[10:i], data[i + 11:-1]


# A column, table or schema name Avro refuses (Avro's own message, as Confluent's converter fails): what fixes it.
_NAMES_HINT = (" (field.name.adjustment.mode=avro and schema.name.adjustment.mode=avro, or the converter's "
               "scrub.invalid.names=true, make names Avro's)")


class _Side:
    __slots__ = ("converter", "current", "headers", "last", "last_prepared", "name", "prepared", "raw", "side",
                 "text")

    def __init__(self, converter: Converter, side: str) -> None:
        self.converter = converter
        self.side = side
        self.name = type(converter).__name__
        self.prepared: dict[bytes, Prepared] = {}
        # A converter reading the record's headers (CloudEvents metadata from headers) gets them as a third argument.
        self.headers = bool(getattr(converter, "wants_headers", False))
        # A converter writing the payload's JSON as it is (JsonSchemaConverter) gets the bytes, unparsed.
        self.raw = bool(getattr(converter, "raw_payload", False))
        self.current: Any = None  # the last record's prepared schema: its Kafka headers, for a converter writing some
        # `{"schema":<the last record's schema>,"payload":` and its prepared converter: consecutive records mostly
        # share a schema, and a prefix comparison costs less than cutting out and hashing the schema's bytes.
        self.last = b""
        self.last_prepared: Any = None
        # A converter writing JSON itself (Apicurio's ExtJsonConverter) takes the schema and payload text unparsed.
        self.text = bool(getattr(converter, "takes_json", False))

    def written(self, topic: str) -> Headers:
        """The Kafka headers the converter wrote for the last record (Apicurio's ids with headers.enabled)."""
        return self.current.headers(topic) if self.current is not None else ()

    def prepare(self, topic: str, schema: bytes) -> Any:
        """The prepared converter of a schema's JSON: compiled once per schema version (and, on first use per
        subject, registered)."""
        prepared = self.prepared.get(schema)
        if prepared is None:
            try:
                prepared = self.converter.prepare(schema if self.text else orjson.loads(schema))
            except PgcdcError:
                raise
            except Exception as exc:
                hint = _NAMES_HINT if str(exc).startswith(("Illegal character", "Illegal initial character")) else ""
                raise ConversionError(f"{self.side}.converter: topic {topic}: no {self.name} form of its "
                                      f"schema: {exc}{hint}") from None
            self.prepared[schema] = prepared
        return prepared

    def __call__(self, topic: str, data: bytes | None, headers: Headers | None = None) -> bytes | None:
        if data is None:
            self.current = None
            return None
        last = self.last
        if last and data.startswith(last):
            # The schema is one JSON object: a record starting with the last one's schema and `,"payload":` has
            # exactly that schema. orjson reads the payload in place (a memoryview: no copy).
            prepared = self.last_prepared
            payload: bytes | memoryview = memoryview(data)[len(last):-1]
        else:
            schema, payload = split_json(data)
            prepared = self.prepare(topic, schema)
            self.last = _START + schema + _PAYLOAD
            self.last_prepared = prepared
        self.current = prepared
        try:
            if self.raw or self.text:  # JsonSchemaConverter, ExtJsonConverter: the payload's JSON as it is
                return prepared(topic, bytes(payload))
            if self.headers:
                return prepared(topic, orjson.loads(payload), headers)  # type: ignore[call-arg]
            return prepared(topic, orjson.loads(payload))
        except PgcdcError:
            raise
        except Exception as exc:  # a value its own schema does not describe: a bug, named in one line
            raise self.failed(topic, exc) from None

    def failed(self, topic: str, exc: Exception) -> ConversionError:
        return ConversionError(f"{self.side}.converter: topic {topic}: {self.name} cannot write a record: "
                               f"{' '.join(str(exc).split())[:200]}")


def make_converters(config: Any, stopping: Callable[[], bool]
                    ) -> tuple[Converter | None, Converter | None, Converter | None]:
    """(key, value, header) converters of a config, None for a JsonConverter side (the envelope's own
    output)."""
    specs = config.converter_specs
    return tuple(make_converter(specs[side], stopping) if side in specs and specs[side].needs_schema else None
                 for side in ("key", "value", "header"))  # type: ignore[return-value]


class ConvertingSink:
    """Converts keys and/or values, then sends to `sink`. Everything else is the wrapped sink's."""

    def __init__(self, sink: Sink, key: Converter | None, value: Converter | None,
                 header: Converter | None = None) -> None:
        object.__setattr__(self, "sink", sink)
        object.__setattr__(self, "_key", _Side(key, "key") if key is not None else None)
        object.__setattr__(self, "_value", _Side(value, "value") if value is not None else None)
        object.__setattr__(self, "_header", _Side(header, "header") if header is not None else None)
        # Sides whose converter writes Kafka headers (Apicurio's with headers.enabled), in the order Kafka Connect
        # calls them: the key's converter, then the value's, each adding to the record's headers.
        object.__setattr__(self, "_with_headers", tuple(s for s in (self._key, self._value)
                                                         if s is not None and getattr(s.converter, "writes_headers",
                                                                                      False)))

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        # Kafka Connect's order: the record's headers through the header converter, then the key and the value
        # (a converter reading headers sees the converted ones), then the headers those converters add.
        if self._header is not None and headers:
            convert = self._header
            headers = [(name, convert(topic, data)) for name, data in headers]
        if self._key is not None:
            key = self._key(topic, key, headers)
        if self._value is not None:
            value = self._value(topic, value, headers)
        if self._with_headers:
            headers = [*(headers or ()), *(h for side in self._with_headers for h in side.written(topic))]
        self.sink.send(topic, key, value, headers, partition)

    def event_sender(self, topic: str, head: bytes) -> EventSend | None:
        """A sender of `topic`'s streamed change events from their parts (capture/events.py), for the envelope
        whose JsonConverter bytes start with `head` (`{"schema":…,"payload":`); None where the value converter
        has no such writer (only Confluent's AvroConverter has) or a converter writes Kafka headers."""
        side = self._value
        if side is None or self._with_headers or not (head.startswith(_START) and head.endswith(_PAYLOAD)):
            return None
        prepared = side.prepare(topic, head[len(_START):-len(_PAYLOAD)])
        events = getattr(prepared, "events", None)
        writer = events() if events is not None else None
        return EventSend(self, topic, writer, prepared) if writer is not None else None

    def flush(self) -> None:
        self.sink.flush()

    def close(self) -> None:
        self.sink.close()

    def __getattr__(self, name: str) -> Any:  # all_acknowledged, acknowledged, … of the wrapped sink
        return getattr(self.sink, name)

    def __setattr__(self, name: str, value: Any) -> None:  # keepalive, set by the runner
        setattr(self.sink, name, value)


class EventSend:
    """One table version's change events, written by the value converter's writer from their parts (its
    `transaction(source, token)` once per transaction) and sent with the key and headers converted as `send`
    does."""

    __slots__ = ("convert_key", "header", "key", "key_prefix", "key_row", "prepared", "sink", "topic", "txn",
                 "writer")

    def __init__(self, sink: ConvertingSink, topic: str, writer: Any, prepared: Any) -> None:
        self.topic = topic
        self.writer = writer
        self.prepared = prepared
        self.key = sink._key
        self.header = sink._header
        # the wrapped sink, its `send` looked up per record as ConvertingSink.send does (a wrapper may replace
        # it: benchmarks/formats.py's size sample does after its first records)
        self.sink = sink.sink
        self.txn: Any = None  # the token of the transaction the writer last wrote a source block for
        self.convert_key: Callable[[bytes | None, Headers], bytes | None] = self._first_key
        # The key's writer from its fields (`keyed`), once the first key has been converted: None where keys are
        # not written so (another key converter; a key of other than plain values)
        self.key_row: Callable[[dict[str, Any]], bytes] | None = None
        self.key_prefix = b""  # with `key_row`: the key's JsonConverter bytes up to its payload

    def transaction(self, source: dict[str, Any], token: Any) -> None:
        self.writer.transaction(source, token)
        self.txn = token

    def begin(self, commit_us: int, xid: Any, others: Any, source: Callable[[], dict[str, Any]], token: Any) -> None:
        """As `transaction`, from the transaction's numbers (avro_events.py `AvroEvents.begin`)."""
        self.writer.begin(commit_us, xid, others, source, token)
        self.txn = token

    def native(self, fields: Collection[str]) -> None:
        """The capture's rows hold `fields` as the writer takes them (envelope/native.py)."""
        self.writer.native(fields)

    def __call__(self, key: bytes | None, headers: Headers, op: str, before: Any, after: Any, sequence: str,
                 lsn: int, now_ns: int) -> None:
        if headers or self.key is None:
            key, headers = self._converted(key, headers)
        else:  # `_converted`'s common case, without its call
            key = self.convert_key(key, headers)
        self.sink.send(self.topic, key, self._value(op, before, after, sequence, lsn, now_ns), headers, None)

    def keyed(self, fields: dict[str, Any], headers: Headers, op: str, before: Any, after: Any, sequence: str,
              lsn: int, now_ns: int) -> bool:
        """As `self(…)` for a key given as its fields (JsonConverter's payload of it, `key_row` set): the bytes
        `self` writes from that payload's JSON. False, nothing sent: the writer refused a value (then `self`,
        given the key's JSON, converts it or names the error)."""
        try:
            key = self.key_row(fields)  # type: ignore[misc]
        except Exception:
            return False
        if self.header is not None and headers:
            convert = self.header
            headers = [(name, convert(self.topic, data)) for name, data in headers]
        self.sink.send(self.topic, key, self._value(op, before, after, sequence, lsn, now_ns), headers, None)
        return True

    def _value(self, op: str, before: Any, after: Any, sequence: str, lsn: int, now_ns: int) -> bytes:
        try:
            value: bytes = self.writer(op, before, after, sequence, lsn, now_ns)
            return value
        except PgcdcError:
            raise
        except Exception as exc:
            raise self._failed(exc) from None

    def read(self, key: bytes | dict[str, Any] | None, headers: Headers, after: dict[str, Any],
             source: dict[str, Any], marker: str) -> None:
        """A snapshot record: its row (as the snapshot converted it), its key (JsonConverter's bytes, or its
        fields once `key_row` is set: capture/snapshot_records.py), and the snapshot's `source` block for its
        `marker`."""
        if type(key) is dict:
            key, headers = self._key_fields(key, headers)
        else:
            key, headers = self._converted(key, headers)  # type: ignore[arg-type]
        writer = self.writer
        if writer.txn != marker:
            self.transaction(source, marker)
        try:
            value = writer.read(after, source["sequence"], source["lsn"], time.time_ns())
        except PgcdcError:
            raise
        except Exception as exc:
            raise self._failed(exc) from None
        self.sink.send(self.topic, key, value, headers, None)

    def _key_fields(self, fields: dict[str, Any], headers: Headers) -> tuple[bytes | None, Headers]:
        """`_converted` for a key given as its fields (JsonConverter's payload of it): written by `key_row`, the
        bytes `_converted` writes from the payload's JSON. A key the writer refuses goes to `_converted` as that
        JSON, which converts it or names the error."""
        try:
            key = self.key_row(fields)  # type: ignore[misc]
        except Exception:
            return self._converted(self.key_prefix + orjson.dumps(fields) + b"}", headers)
        if self.header is not None and headers:
            convert = self.header
            headers = [(name, convert(self.topic, data)) for name, data in headers]
        return key, headers

    def _converted(self, key: bytes | None, headers: Headers) -> tuple[bytes | None, Headers]:
        """The record's headers and key through their converters, in Kafka Connect's order; the value's schema
        registered on first use, after the key's, as Kafka Connect does."""
        if self.header is not None and headers:
            convert = self.header
            headers = [(name, convert(self.topic, data)) for name, data in headers]
        if self.key is not None:
            key = self.convert_key(key, headers)
        elif not self.writer.header:
            self.writer.header = self.prepared.header(self.topic)
        return key, headers

    def _first_key(self, key: bytes | None, headers: Headers) -> bytes | None:
        """The first record's key, through the key side as `send` converts it (its schema registered, after
        the key's, as Kafka Connect does, then the value's); from then on, where the key converter is
        Confluent's AvroConverter, the table's keys go straight to its writer (`_avro_keys`)."""
        side = self.key
        assert side is not None
        converted = side(self.topic, key, headers)
        if not self.writer.header:
            self.writer.header = self.prepared.header(self.topic)
        if key is not None and not (side.headers or side.raw or side.text):
            prepared = side.last_prepared
            fast = getattr(prepared, "json_payload", None)
            if fast is not None:
                write = fast(self.topic)
                self.convert_key = _avro_keys(side, self.topic, side.last, write)
                if _plain(prepared.connect_schema):
                    self.key_row, self.key_prefix = write, side.last
        return converted

    def _failed(self, exc: Exception) -> ConversionError:  # a value its own schema does not describe: a bug
        return ConversionError(f"value.converter: topic {self.topic}: cannot write a record: "
                               f"{' '.join(str(exc).split())[:200]}")


# Connect types whose JsonConverter payload value is the value parsed back from its JSON: a key struct of these
# alone is the same payload whether parsed from the key's JSON or taken from the row (`EventSend.keyed`).
_PLAIN = frozenset(("int8", "int16", "int32", "int64", "string", "boolean"))


def _plain(schema: dict[str, Any]) -> bool:
    fields = schema.get("fields") if schema.get("type") == "struct" else None
    return bool(fields) and all(f.get("type") in _PLAIN for f in fields)


def _avro_keys(side: _Side, topic: str, prefix: bytes, write: Callable[[Any], bytes]
               ) -> Callable[[bytes | None, Headers], bytes | None]:
    """A table version's keys (JsonConverter's bytes starting with `prefix`, `{"schema":…,"payload":`) written
    by `write`, the key schema's writer for `topic`; any other key through `side`, as `send` converts it."""
    n = len(prefix)
    loads = orjson.loads

    def convert(key: bytes | None, headers: Headers) -> bytes | None:
        if key is None or not key.startswith(prefix):
            return side(topic, key, headers)
        try:
            return write(loads(memoryview(key)[n:-1]))
        except Exception as exc:  # a value its own schema does not describe: a bug, named in one line
            raise side.failed(topic, exc) from None
    return convert
