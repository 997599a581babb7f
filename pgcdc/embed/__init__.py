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

With `transforms.*` and converters, events are the records Kafka would get; the runner's taps (`_EngineSink.tap`)
show the engine each record as captured and in its Connect form, from which the Event's typed view reads what
happened and the values (event.py). A record a transform drops never reaches the application: positions come
from what was captured, so committing any later event, or nothing being pending, covers it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from pgcdc.capture.position import Position, SnapshotDone
from pgcdc.config import ConnectorConfig, build_config
from pgcdc.embed.event import Event
from pgcdc.errors import PgcdcError
from pgcdc.offsets import OffsetStore
from pgcdc.runner import Connector
from pgcdc.sink import Headers, Sink

__all__ = ["Engine", "EngineStopped", "Event"]

_END = object()


class EngineStopped(PgcdcError):
    """The engine was stopped while the connector waited for the application."""


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
        # The record being delivered as the runner's taps last saw it: (topic, value) before the transforms,
        # (key, value) before the converters; a stage without a tap stays None.
        self._seen: dict[str, Any] = {"transforms": None, "converters": None}
        self._custom_sink = sink is not None
        self.connector = Connector(self.config, sink=sink or _EngineSink(self), offsets=offsets)
        # CloudEvents records: the reader of their attributes (the rest of the view reads the Connect form).
        self._cloudevents: Callable[[bytes], dict[str, Any]] | None = None
        if self.connector.converters[1] is not None:
            from pgcdc.embed.cloudevents import cloudevents_reader

            self._cloudevents = cloudevents_reader(self.connector.converters[1])

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
        # What the taps saw of this record on its way (the path is synchronous: they saw it just now).
        captured = self._seen["transforms"]
        form = self._seen["converters"]
        transformed = captured is not None
        source_topic, source_value = captured if captured is not None else (topic, (form or (key, value))[1])
        kind = self._kinds.get(source_topic, "change") if source_value is not None else "tombstone"
        if kind == "change" and source_topic == self.config.heartbeat_topic:
            kind = "heartbeat"
        capture = self.connector.capture
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._pending.append((seq, capture.position if capture is not None else None))
        event = Event(self, seq, kind, topic, key, value, headers, partition, connect=form,
                      captured=source_value if transformed else None, transformed=transformed)
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

    def tap(self, stage: str, inner: Sink) -> Sink:
        """The runner's hook: `inner` is the record path from `stage` ("transforms" or "converters") on; the
        returned sink notes each record as it enters that stage, for the Event's view."""
        seen = self._engine._seen
        if stage == "transforms":
            return _Tap(inner, lambda topic, key, value: seen.__setitem__(stage, (topic, value)))
        return _Tap(inner, lambda topic, key, value: seen.__setitem__(stage, (key, value)))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Tap:
    """A sink that calls `note(topic, key, value)` and passes the record on; everything else is `inner`'s."""

    def __init__(self, inner: Sink, note: Callable[[str, bytes | None, bytes | None], None]) -> None:
        self.__dict__["inner"] = inner
        self.__dict__["note"] = note

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        self.note(topic, key, value)
        self.inner.send(topic, key, value, headers, partition)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:  # acknowledged, … of the wrapped path
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)


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
