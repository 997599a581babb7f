"""The embedding API: pgcdc inside a Python program, no broker needed.

    with Engine({"database.hostname": ..., "topic.prefix": "app", ...}) as engine:
        for event in engine.events():
            handle(event.op, event.after)
            event.commit()

The connector runs in a background thread; its records arrive here instead of in Kafka. `commit()` plays the
part of Kafka's acknowledgement in the durability order: an offset (and the slot's confirmed LSN) only ever
covers transactions all of whose events were committed, so after a restart every uncommitted event comes
again and no committed transaction does. Commits are cumulative, like Kafka offsets: committing an event
commits every event delivered before it.

Instead of iterating, pass `on_event=` (called in the connector's thread, committed when it returns) or your
own `sink=` (any object with pgcdc.sink.Sink's send/flush/close: records are durable once its `flush()`
returns, exactly as with Kafka).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from functools import cached_property
from typing import Any

import orjson

from pgcdc.capture.position import Position, SnapshotDone
from pgcdc.config import ConnectorConfig, build_config
from pgcdc.embed.values import struct_decoder
from pgcdc.errors import PgcdcError
from pgcdc.offsets import OffsetStore
from pgcdc.runner import Connector
from pgcdc.sink import Headers, Sink

__all__ = ["Engine", "EngineStopped", "Event"]

_END = object()


class EngineStopped(PgcdcError):
    """The engine was stopped while the connector waited for the application."""


class Event:
    """One record as Debezium would have written it to Kafka, and a typed view of it.

    Debezium's JSON: `topic`, `key`, `value` (bytes exactly as the Kafka record would carry them, None for a
    tombstone), `headers`; `key_json`/`value_json` parsed. Typed: `kind`, `op`, `before`/`after`/`key_values`
    (Python values: Decimal, datetime, date, time, timedelta, UUID, bytes — decoded through the record's own
    Connect schema; without schemas, the JSON values), `source`, `lsn`, `schema`, `table`.
    """

    __slots__ = ("__dict__", "_engine", "headers", "key", "kind", "partition", "seq", "topic", "value")

    def __init__(self, engine: Engine | None, seq: int, kind: str, topic: str, key: bytes | None,
                 value: bytes | None, headers: Headers | None, partition: int | None) -> None:
        self._engine = engine
        self.seq = seq
        self.kind = kind  # change | tombstone | transaction | message | heartbeat
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = list(headers or ())
        self.partition = partition

    def commit(self) -> None:
        """Mark this event, and every event delivered before it, as processed."""
        if self._engine is not None:
            self._engine._commit(self.seq)

    def header(self, name: str) -> Any:
        """The value of header `name` (its JSON payload, without a schema), or None."""
        for n, raw in self.headers:
            if n == name:
                v = orjson.loads(raw)
                return v["payload"] if isinstance(v, dict) and "schema" in v and "payload" in v else v
        return None

    @cached_property
    def key_json(self) -> Any:
        return orjson.loads(self.key) if self.key is not None else None

    @cached_property
    def value_json(self) -> Any:
        return orjson.loads(self.value) if self.value is not None else None

    @cached_property
    def payload(self) -> Any:
        """The value without its Connect schema (the envelope for change events)."""
        v = self.value_json
        return v["payload"] if isinstance(v, dict) and "schema" in v and "payload" in v else v

    @property
    def op(self) -> str | None:
        """`c`, `u`, `d`, `r`, `t` for change events; None otherwise."""
        p = self.payload
        return p.get("op") if self.kind == "change" and isinstance(p, dict) else None

    @property
    def source(self) -> dict[str, Any]:
        p = self.payload
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

    @cached_property
    def before(self) -> dict[str, Any] | None:
        return self._row("before")

    @cached_property
    def after(self) -> dict[str, Any] | None:
        return self._row("after")

    @cached_property
    def key_values(self) -> dict[str, Any] | None:
        k = self.key_json
        if isinstance(k, dict) and "schema" in k and "payload" in k:
            return struct_decoder(k["schema"])(k["payload"])
        return k if isinstance(k, dict) else None

    def _row(self, field: str) -> dict[str, Any] | None:
        if self.kind != "change":
            return None
        v = self.value_json
        if isinstance(v, dict) and "schema" in v:
            for f in v["schema"].get("fields", ()):
                if f.get("field") == field:
                    return struct_decoder(f)(v["payload"].get(field))
            return None
        return v.get(field) if isinstance(v, dict) else None

    def __repr__(self) -> str:
        what = self.op or self.kind
        where = f"{self.schema}.{self.table}" if self.table else self.topic
        return f"Event({what} {where} key={self.key_values if self.kind in ('change', 'tombstone') else None})"


class Engine:
    """A pgcdc connector running in a background thread of this process.

    `config`: Debezium property names (a mapping, as in a connector JSON's `config`) or a ConnectorConfig.
    Without `offset.storage`, offsets stay in memory (the slot's confirmed LSN still advances); pass
    `offsets=` to share a store between engines of one process. `max_pending` bounds the events delivered
    and not yet taken by the application: the connector waits when it is full.
    """

    def __init__(self, config: Mapping[str, Any] | ConnectorConfig, *, offsets: OffsetStore | None = None,
                 on_event: Callable[[Event], None] | None = None, sink: Sink | None = None,
                 max_pending: int = 10_000) -> None:
        self.config = config if isinstance(config, ConnectorConfig) else _embedded_config(config)
        self._on_event = on_event
        self._queue: queue.Queue[Any] = queue.Queue(max_pending)
        self._lock = threading.Condition()
        self._seq = 0
        self._committed = 0
        self._pending: collections.deque[tuple[int, Position | None]] = collections.deque()
        self._stopping = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._kinds = _kinds_by_topic(self.config)
        self._custom_sink = sink is not None
        self.connector = Connector(self.config, sink=sink or _EngineSink(self), offsets=offsets)

    # -- life cycle ----------------------------------------------------------------------------------
    def start(self, timeout: float = 120) -> Engine:
        """Start the connector; return once it streams or its initial snapshot delivered a first event."""
        if self._thread is not None:
            raise RuntimeError("the engine was already started")
        self._thread = threading.Thread(target=self._run, name="pgcdc-engine", daemon=True)
        self._thread.start()
        while not self.connector.ready.wait(0.05):
            if not self._thread.is_alive() or self._seq:
                break
            timeout -= 0.05
            if timeout <= 0:
                self.stop()
                raise PgcdcError("the connector did not start streaming in time")
        self._raise_error()
        return self

    def stop(self, timeout: float = 60) -> None:
        """Stop from any thread. Uncommitted events will be delivered again by the next engine."""
        self._stopping.set()
        self.connector.stop()
        with self._lock:
            self._lock.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._queue_end()
        self._raise_error()

    def __enter__(self) -> Engine:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        try:
            self.connector.run()
        except EngineStopped:
            pass
        except BaseException as exc:
            self._error = exc
        finally:
            self._queue_end()

    def _queue_end(self) -> None:
        with contextlib.suppress(queue.Full):  # when full, the consumer sees the stop flag instead
            self._queue.put_nowait(_END)

    def _raise_error(self) -> None:
        err, self._error = self._error, None
        if err is not None:
            raise err

    # -- delivery ------------------------------------------------------------------------------------
    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """Events in stream order until the engine stops; with `timeout`, also ends after that many idle seconds."""
        if self._on_event is not None or self._custom_sink:
            raise RuntimeError("this engine delivers to its on_event callback or its sink, not to events()")
        if self._thread is None:
            self.start()
        while True:
            item = self._next(timeout)
            if item is None:
                return
            yield item

    def poll(self, timeout: float = 0.0) -> Event | None:
        """The next event, or None if none arrives within `timeout` seconds (or the engine has stopped)."""
        return self._next(timeout)

    def _next(self, timeout: float | None) -> Event | None:
        waited = 0.0
        while True:
            step = 0.1 if timeout is None else max(0.0, min(0.1, timeout - waited))
            try:
                item = self._queue.get(timeout=step) if step > 0 else self._queue.get_nowait()
            except queue.Empty:
                waited += step
                if self._stopping.is_set() or not self.running:
                    self._raise_error()
                    return None
                if timeout is not None and waited >= timeout:
                    return None
                continue
            if item is _END:
                self._queue_end()  # keep the end visible to other readers
                self._raise_error()
                return None
            return item  # type: ignore[no-any-return]

    async def aevents(self, timeout: float | None = None) -> AsyncIterator[Event]:
        """`async for event in engine.aevents()`: the same events, awaited without blocking the event loop."""
        if self._thread is None:
            await asyncio.to_thread(self.start)
        while True:
            item = await asyncio.to_thread(self._next, timeout if timeout is not None else 0.5)
            if item is None:
                if timeout is not None or self._stopping.is_set() or not self.running:
                    return
                continue
            yield item

    def commit(self) -> None:
        """Commit every event delivered so far (batch acknowledgement)."""
        with self._lock:
            self._commit_locked(self._seq)

    def _commit(self, seq: int) -> None:
        with self._lock:
            self._commit_locked(seq)

    def _commit_locked(self, seq: int) -> None:
        if seq > self._committed:
            self._committed = seq
            pending = self._pending
            while pending and pending[0][0] <= seq:
                pending.popleft()
            self._lock.notify_all()

    # -- called by the connector's thread through _EngineSink ---------------------------------------
    def _deliver(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None,
                 partition: int | None) -> None:
        kind = self._kinds.get(topic, "change") if value is not None else "tombstone"
        if kind == "change" and topic.startswith(self._heartbeat_prefix):
            kind = "heartbeat"
        capture = self.connector.capture
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._pending.append((seq, capture.position if capture is not None else None))
        event = Event(self, seq, kind, topic, key, value, headers, partition)
        if self._on_event is not None:
            self._on_event(event)
            event.commit()
            return
        while True:
            try:
                self._queue.put(event, timeout=0.2)
                return
            except queue.Full:
                if self._stopping.is_set():
                    raise EngineStopped("stopped while the application was not taking events") from None

    @property
    def _heartbeat_prefix(self) -> str:
        return f"{self.config.topic_heartbeat_prefix}."

    def _acknowledged(self, position: Position | SnapshotDone) -> Position | SnapshotDone | None:
        """The newest position every event of which the application committed."""
        with self._lock:
            if isinstance(position, SnapshotDone):
                # The end of the initial snapshot is durable only once all its rows were committed.
                while self._pending:
                    if self._stopping.is_set():
                        raise EngineStopped("stopped before the snapshot's events were committed")
                    self._lock.wait(0.2)
                return position
            if not self._pending:
                return position
            return self._pending[0][1]


class _EngineSink:
    """The connector's sink inside an Engine: records go to the application, acknowledgement is its commit."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        self._engine._deliver(topic, key, value, headers, partition)

    def acknowledged(self, position: Position | SnapshotDone) -> Position | SnapshotDone | None:
        return self._engine._acknowledged(position)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _embedded_config(props: Mapping[str, Any]) -> ConnectorConfig:
    merged = {"name": "pgcdc-embedded", "offset.storage": "memory"}
    merged.update({k: v if isinstance(v, str) else _prop(v) for k, v in props.items()})
    merged["sink.type"] = "embedded"  # records go to the application, whatever a copied connector JSON says
    return build_config(merged)


def _prop(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v)
    return str(v)


def _kinds_by_topic(config: ConnectorConfig) -> dict[str, str]:
    return {config.transaction_topic: "transaction", f"{config.topic_prefix}.message": "message"}
