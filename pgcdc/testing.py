"""Change events in integration tests: a PostgreSQL to capture from and a capture to assert on.

The pytest plugin (`pgcdc.pytest_plugin`) builds fixtures from these; they also work without pytest:

    with PostgresServer.choose("auto") as server, Capture.start(server.connection_properties()) as capture:
        server.execute("INSERT INTO orders VALUES (1, 'new')")
        event = capture.wait_for(table="orders", op="c", where={"id": 1})
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pgcdc.embed import Engine, Event
from pgcdc.errors import LocalServiceError

DRAIN_PREFIX = "pgcdc.testing.drain"

Where = Mapping[str, Any] | Callable[[Event], bool] | None


@dataclass
class PostgresServer:
    """Where a test's PostgreSQL runs: a local throwaway cluster, a container, or a server given by URL."""

    host: str
    port: int
    user: str
    password: str
    dbname: str
    kind: str  # local | docker | external
    _close: Callable[[], None] | None = field(default=None, repr=False)

    @classmethod
    def choose(cls, how: str = "auto", *, image: str = "postgres:16") -> PostgresServer:
        """`auto`: a container when a Docker engine answers and testcontainers is installed, else local
        server binaries (initdb); `docker`, `local`, or a `postgresql://` URL of a running server."""
        if how.startswith(("postgresql://", "postgres://")):
            return cls.external(how)
        if how == "docker" or (how == "auto" and docker_available()):
            return cls.docker(image)
        if how in ("auto", "local"):
            return cls.local()
        raise LocalServiceError(f"pgcdc postgres: {how!r} is not auto, local, docker or a postgresql:// URL")

    @classmethod
    def local(cls) -> PostgresServer:
        from pgcdc.local import PostgresCluster

        cluster = PostgresCluster().start()
        return cls(cluster.host, cluster.port, cluster.user, cluster.password, "postgres", "local", cluster.cleanup)

    @classmethod
    def docker(cls, image: str) -> PostgresServer:
        try:
            try:
                from testcontainers.community.postgres import PostgresContainer
            except ImportError:  # testcontainers before the community split
                from testcontainers.postgres import PostgresContainer
        except ImportError as exc:
            raise LocalServiceError("pgcdc postgres=docker needs the testcontainers package "
                                    "(pip install 'pgcdc[testcontainers]')") from exc
        if not docker_available():
            raise LocalServiceError("pgcdc postgres=docker: no Docker engine answers (DOCKER_HOST or the docker "
                                    "socket); use local or a postgresql:// URL")
        container = PostgresContainer(image).with_command("postgres -c wal_level=logical -c max_wal_senders=20 "
                                                          "-c max_replication_slots=20")
        container.start()
        return cls(container.get_container_host_ip(), int(container.get_exposed_port(5432)), container.username,
                   container.password, container.dbname, "docker", container.stop)

    @classmethod
    def external(cls, url: str) -> PostgresServer:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(url)
        return cls(str(info.get("host", "127.0.0.1")), int(str(info.get("port") or 5432)), str(info.get("user", "")),
                   str(info.get("password", "")), str(info.get("dbname", "postgres")), "external")

    def connection_properties(self, dbname: str | None = None) -> dict[str, str]:
        """Debezium's database.* properties for this server."""
        return {"database.hostname": self.host, "database.port": str(self.port), "database.user": self.user,
                "database.password": self.password, "database.dbname": dbname or self.dbname}

    def dsn(self, dbname: str | None = None) -> str:
        return (f"host={self.host} port={self.port} user={self.user} password={self.password} "
                f"dbname={dbname or self.dbname}")

    def execute(self, sql: str, dbname: str | None = None) -> list[tuple[Any, ...]]:
        """Run SQL on a short autocommit connection; the last statement's rows, if any."""
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def docker_available() -> bool:
    """A Docker engine answers and testcontainers is importable."""
    try:
        import importlib.util

        import docker  # testcontainers' own dependency

        if importlib.util.find_spec("testcontainers") is None:
            return False

        client = docker.from_env(timeout=3)  # type: ignore[attr-defined]
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


class Capture:
    """A running pgcdc engine whose events are collected for assertions (and committed as they arrive)."""

    def __init__(self, engine: Engine, server_props: Mapping[str, str], server_version: int = 0) -> None:
        self.engine = engine
        self._props = dict(server_props)
        self._server_version = server_version  # server_version_num; 0 if unknown
        self._cond = threading.Condition()
        self._events: list[Event] = []  # every change, tombstone, transaction and message event, in order
        self._next = 0  # events before this index were returned by wait_for or drain
        self._drained: set[str] = set()
        self._thread = threading.Thread(target=self._collect, name="pgcdc-capture", daemon=True)

    @classmethod
    @contextmanager
    def start(cls, properties: Mapping[str, Any], *, drop_publication: bool = True) -> Iterator[Capture]:
        """Capture with a slot and publication of its own, both dropped at the end."""
        tag = uuid.uuid4().hex[:12]
        props = {"topic.prefix": "test", "snapshot.mode": "no_data", "slot.name": f"pgcdc_test_{tag}",
                 "publication.name": f"pgcdc_test_{tag}", "slot.drop.on.stop": "true",
                 "offset.flush.interval.ms": "200", **properties}
        engine = Engine(props)
        version = _server_version(engine)
        if version < 140000 and "heartbeat.interval.ms" not in properties:
            # drain() before PostgreSQL 14 waits for the slot to pass a WAL position: heartbeats move the capture's
            # position on to what the server has decoded while the captured database is idle.
            props["heartbeat.interval.ms"] = "100"
            engine = Engine(props)
        capture = cls(engine, props, version)
        engine.start()
        capture._thread.start()
        try:
            yield capture
        finally:
            engine.stop()
            capture._thread.join(30)
            if drop_publication:
                capture._sql(f'DROP PUBLICATION IF EXISTS "{engine.config.publication_name}"')

    def _collect(self) -> None:
        # Events are committed after they are listed: before PostgreSQL 14 drain() relies on the slot having
        # moved past a position only once every event before it is in the list.
        for event in self.engine.events():
            if event.kind == "heartbeat":
                event.commit()
                continue
            if event.kind == "message" and (event.payload or {}).get("message", {}).get("prefix") == DRAIN_PREFIX:
                token = event.payload["message"].get("content")
                with self._cond:
                    self._drained.add(_b64_text(token))
                    self._cond.notify_all()
                event.commit()
                continue
            with self._cond:
                self._events.append(event)
                self._cond.notify_all()
            event.commit()

    def _sql(self, sql: str) -> list[tuple[Any, ...]]:
        with self._connect() as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def _connect(self) -> Any:
        return _connect(self.engine)

    # -- assertions ------------------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        """Everything captured so far (drain markers excluded)."""
        with self._cond:
            return list(self._events)

    def wait_for(self, table: str | None = None, op: str | None = None, where: Where = None,
                 timeout: float = 10.0) -> Event:
        """The first event not yet returned that matches, waiting up to `timeout` seconds for it.

        `table` is `name` or `schema.name`; `op` one of c/u/d/r/t (or `tombstone`); `where` a mapping of column
        values the row must have (`after`, or `before` for deletes) or a predicate on the event.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in range(self._next, len(self._events)):
                    if _matches(self._events[i], self.engine.config.topic_prefix, table, op, where):
                        event = self._events[i]
                        self._next = i + 1
                        return event
                left = deadline - time.monotonic()
                if left <= 0 or not self.engine.running:
                    break
                self._cond.wait(min(left, 0.2))
            seen = self._events[self._next:]
        want = ", ".join(f"{k}={v!r}" for k, v in (("table", table), ("op", op), ("where", where)) if v is not None)
        raise AssertionError(f"no event matching {want or 'anything'} within {timeout}s; "
                             f"{len(seen)} unmatched event(s) arrived:\n{describe(seen)}")

    def drain(self, timeout: float = 30.0) -> list[Event]:
        """Every event of changes committed before this call that was not yet returned; then none is pending.

        Exact, not a quiet period. PostgreSQL 14+: a marker is written to the WAL (a logical-decoding message)
        and the call returns once the capture has seen it. PostgreSQL 11 to 13 (pgoutput sends no messages there):
        the call takes the server's WAL insert position and returns once the slot's confirmed_flush_lsn has
        reached it, which the capture confirms only when every event before it is listed.
        """
        deadline = time.monotonic() + timeout
        if self._server_version and self._server_version < 140000:
            self._wait_slot_past_insert_position(deadline, timeout)
            with self._cond:
                out = self._events[self._next:]
                self._next = len(self._events)
                return out
        token = uuid.uuid4().hex
        self._sql(f"SELECT pg_logical_emit_message(false, '{DRAIN_PREFIX}', '{token}')")
        with self._cond:
            while token not in self._drained:
                left = deadline - time.monotonic()
                if left <= 0 or not self.engine.running:
                    raise AssertionError(f"capture did not catch up within {timeout}s; "
                                         f"{len(self._events) - self._next} event(s) pending")
                self._cond.wait(min(left, 0.2))
            out = self._events[self._next:]
            self._next = len(self._events)
            return out

    def _wait_slot_past_insert_position(self, deadline: float, timeout: float) -> None:
        with self._connect() as conn:
            target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
            assert target is not None
            while True:
                row = conn.execute("SELECT confirmed_flush_lsn >= %s::pg_lsn FROM pg_replication_slots "
                                   "WHERE slot_name = %s", (target[0], self.engine.config.slot_name)).fetchone()
                if row is not None and row[0]:
                    return
                if time.monotonic() >= deadline or not self.engine.running:
                    with self._cond:
                        pending = len(self._events) - self._next
                    raise AssertionError(
                        f"capture did not catch up within {timeout}s: slot {self.engine.config.slot_name!r} "
                        f"did not confirm WAL position {target[0]} ({pending} event(s) pending; drain() on "
                        "PostgreSQL before 14 needs heartbeat.interval.ms > 0 and the slot confirmed by pgcdc)")
                time.sleep(0.02)

    def clear(self) -> None:
        """Forget what arrived so far: later calls only see newer events."""
        with self._cond:
            self._next = len(self._events)


def _connect(engine: Engine) -> Any:
    import psycopg

    c = engine.config
    return psycopg.connect(host=c.database_hostname, port=c.database_port, user=c.database_user,
                           password=c.database_password, dbname=c.database_dbname, autocommit=True)


def _server_version(engine: Engine) -> int:
    """server_version_num of the captured server (0 if it cannot be reached: the engine's start says why)."""
    import psycopg

    try:
        with _connect(engine) as conn:
            return int(conn.info.server_version)
    except psycopg.Error:
        return 0


def _b64_text(content: Any) -> str:
    import base64

    if isinstance(content, str):
        try:
            return base64.b64decode(content).decode()
        except ValueError:
            return content
    return str(content)


def _matches(event: Event, prefix: str, table: str | None, op: str | None, where: Where) -> bool:
    if event.kind not in ("change", "tombstone"):
        return False
    if table is not None:
        if event.kind == "tombstone":  # no source block: the table is in the topic, <prefix>.<schema>.<table>
            schema, _, name = event.topic.removeprefix(prefix + ".").partition(".")
        else:
            schema, name = event.schema or "", event.table or ""
        if table not in (name, f"{schema}.{name}"):
            return False
    if op is not None and (event.op if event.kind == "change" else "tombstone") != op:
        return False
    if where is None:
        return True
    if callable(where):
        return bool(where(event))
    row = event.after if event.after is not None else event.before
    if row is None and event.kind == "tombstone":
        row = event.key_values
    return row is not None and all(k in row and row[k] == v for k, v in where.items())


def describe(events: list[Event], limit: int = 20) -> str:
    lines = []
    for e in events[:limit]:
        if e.kind == "change":
            lines.append(f"  {e.op} {e.schema}.{e.table} key={e.key_values} after={e.after}")
        else:
            lines.append(f"  {e.kind} {e.topic} key={e.key_values}")
    if len(events) > limit:
        lines.append(f"  … and {len(events) - limit} more")
    return "\n".join(lines) or "  (none)"
