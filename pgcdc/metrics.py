"""What a running connector says about itself: `/health` and Prometheus `/metrics` on `metrics.port`.

Nothing here is on the hot path: values are read from the connector's own objects when scraped, and one
background thread asks PostgreSQL every `pgcdc.slot.watch.interval.ms` how much WAL the slot holds (also
warning in the log when it passes `pgcdc.wal.warn.bytes`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from pgcdc.lsn import format_lsn

if TYPE_CHECKING:
    from pgcdc.runner import Connector

log = logging.getLogger(__name__)

STATES = ("starting", "standby", "snapshot", "streaming", "retrying", "stopped", "failed")
HEALTHY = frozenset({"standby", "snapshot", "streaming"})


class Health:
    """The connector's state and what it waits for; set by the runner, read by /health and the metrics."""

    def __init__(self) -> None:
        self.state = "starting"
        self.detail = ""
        self.since = time.time()
        self.restarts = 0
        self.errors = 0

    def set(self, state: str, detail: str = "") -> None:
        if state != self.state or detail != self.detail:
            self.state, self.detail, self.since = state, detail, time.time()


class SlotWatch:
    """Slot lag and retained WAL, asked of PostgreSQL periodically on a connection of its own."""

    def __init__(self, connector: Connector, interval_s: float, warn_bytes: int) -> None:
        self.connector = connector
        self.interval_s = interval_s
        self.warn_bytes = warn_bytes
        self.lag_bytes: int | None = None
        self.retained_bytes: int | None = None
        self.server_lsn: int | None = None
        self._warned_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pgcdc-slot-watch", daemon=True)

    def start(self) -> SlotWatch:
        self._thread.start()
        return self

    def stop(self, wait_s: float = 2.0) -> None:
        """Stops the watcher; it says nothing more once this returns, so the connector's last line stays last."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait_s)

    def _run(self) -> None:
        from pgcdc.errors import PgcdcError
        from pgcdc.source.connection import connect

        conn = None
        while not self._stop.wait(0 if conn is None and self.lag_bytes is None else self.interval_s):
            try:
                if conn is None or conn.closed:
                    conn = connect(self.connector.config)
                self.check(conn)
            except (PgcdcError, OSError, Exception) as exc:  # never let the watcher take the connector down
                if not self._stop.is_set():  # a failure while stopping is the connector's own, told by it
                    log.debug("slot watch: %s", exc)
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def check(self, conn: Any) -> None:
        from pgcdc.lsn import parse_lsn

        row = conn.execute(
            "SELECT pg_current_wal_lsn()::text, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, "
            "pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint FROM pg_replication_slots "
            "WHERE slot_name = %s", (self.connector.config.slot_name,)).fetchone()
        if row is None:
            self.lag_bytes = self.retained_bytes = None
            return
        self.server_lsn, self.lag_bytes, self.retained_bytes = parse_lsn(row[0]), row[1], row[2]
        retained = self.retained_bytes or 0
        if self.warn_bytes and retained > self.warn_bytes and time.monotonic() - self._warned_at > 300:
            self._warned_at = time.monotonic()
            log.warning("slot %s retains %d bytes of WAL (pgcdc.wal.warn.bytes=%d); confirmed position is %d "
                        "bytes behind the server", self.connector.config.slot_name, retained, self.warn_bytes,
                        self.lag_bytes or 0)


class ConnectorCollector(Collector):
    def __init__(self, connector: Connector) -> None:
        self.connector = connector

    def collect(self) -> Iterator[Any]:
        c = self.connector
        labels = {"connector": c.config.name, "topic_prefix": c.config.topic_prefix}
        info = InfoMetricFamily("pgcdc_connector", "connector identity")
        info.add_metric([], {**labels, "slot": c.config.slot_name, "database": c.config.database_dbname})
        yield info
        state = GaugeMetricFamily("pgcdc_state", "1 for the connector's current state", labels=["state"])
        for s in STATES:
            state.add_metric([s], 1.0 if c.health.state == s else 0.0)
        yield state
        yield GaugeMetricFamily("pgcdc_up", "1 when snapshotting, streaming or standing by",
                                value=1.0 if c.health.state in HEALTHY else 0.0)
        capture = c.capture
        events = c.stats.events + (capture.events if capture is not None else 0)
        yield CounterMetricFamily("pgcdc_events", "records emitted (change events, tombstones, metadata)",
                                  value=events)
        sink = c.sink
        sent_bytes = getattr(sink, "bytes", None)
        if sent_bytes is not None:
            yield CounterMetricFamily("pgcdc_sink_bytes", "key and value bytes handed to the sink", value=sent_bytes)
        depth = sink.queue_depth() if hasattr(sink, "queue_depth") else None
        if depth is not None:
            yield GaugeMetricFamily("pgcdc_sink_queue_depth", "records waiting for the broker's acknowledgement",
                                    value=depth)
        position = capture.position if capture is not None else None
        stored = c.checkpointer.stored if c.checkpointer is not None else None
        if position is not None:
            yield GaugeMetricFamily("pgcdc_processed_lsn", "end LSN of the last transaction emitted",
                                    value=position.end_lsn)
        if stored is not None:
            yield GaugeMetricFamily("pgcdc_committed_lsn", "LSN stored and confirmed to the slot",
                                    value=stored.end_lsn)
        if c.checkpointer is not None:
            checkpoints = CounterMetricFamily("pgcdc_checkpoints", "positions stored while streaming, by whether "
                                              "the replication loop waited for Kafka", labels=["wait"])
            checkpoints.add_metric(["no"], c.checkpointer.without_wait)
            checkpoints.add_metric(["yes"], c.checkpointer.after_wait)
            yield checkpoints
        watch = c.slot_watch
        if watch is not None and watch.lag_bytes is not None:
            yield GaugeMetricFamily("pgcdc_slot_lag_bytes", "server WAL end minus the slot's confirmed position",
                                    value=watch.lag_bytes)
            yield GaugeMetricFamily("pgcdc_slot_retained_bytes", "WAL the server keeps for the slot",
                                    value=watch.retained_bytes or 0)
        behind = milliseconds_behind(c)
        if behind is not None:
            yield GaugeMetricFamily("pgcdc_milliseconds_behind_source",
                                    "now minus the commit time of the last emitted transaction while the slot "
                                    "has WAL left to read; 0 when caught up", value=behind)
        snap = c.snapshot_metrics
        if snap.tables:
            yield CounterMetricFamily("pgcdc_snapshot_rows", "rows emitted by the initial snapshot",
                                      value=snap.rows + snap.resumed_rows)
            yield GaugeMetricFamily("pgcdc_snapshot_rows_estimate", "rows the snapshot expects (pg_class.reltuples)",
                                    value=snap.estimate)
            yield GaugeMetricFamily("pgcdc_snapshot_rows_per_second", "snapshot rate in this run",
                                    value=snap.rows_per_second)
            eta = snap.eta_seconds
            if eta is not None and snap.finished is None:
                yield GaugeMetricFamily("pgcdc_snapshot_eta_seconds", "estimated seconds left", value=eta)
            per_table = GaugeMetricFamily("pgcdc_snapshot_table_rows", "rows emitted per table", labels=["table"])
            for name, t in snap.tables.items():
                per_table.add_metric([name], t.rows)
            yield per_table
        yield CounterMetricFamily("pgcdc_restarts", "restarts after retriable errors", value=c.health.restarts)
        yield CounterMetricFamily("pgcdc_errors", "errors seen (retried or fatal)", value=c.health.errors)


def milliseconds_behind(c: Connector) -> float | None:
    capture = c.capture
    position = capture.position if capture is not None else None
    if position is None:
        return None
    watch = c.slot_watch
    caught_up = watch is not None and watch.server_lsn is not None and position.end_lsn >= watch.server_lsn
    if caught_up or (watch is not None and watch.lag_bytes == 0):
        return 0.0
    return max(0.0, time.time() * 1000 - position.commit_us / 1000)


def health_report(c: Connector) -> dict[str, Any]:
    h = c.health
    capture = c.capture
    stored = c.checkpointer.stored if c.checkpointer is not None else None
    watch = c.slot_watch
    return {
        "status": "UP" if h.state in HEALTHY else "DOWN",
        "state": h.state,
        "detail": h.detail,
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(h.since)),
        "slot": c.config.slot_name,
        "processed_lsn": format_lsn(capture.position.end_lsn) if capture and capture.position else None,
        "committed_lsn": format_lsn(stored.end_lsn) if stored is not None else None,
        "slot_lag_bytes": watch.lag_bytes if watch is not None else None,
        "restarts": h.restarts,
    }


class MetricsServer:
    """/metrics (Prometheus text format) and /health (JSON; 200 when UP, 503 when DOWN)."""

    def __init__(self, connector: Connector, host: str, port: int) -> None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(ConnectorCollector(connector))

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    body, code, ctype = generate_latest(registry), 200, "text/plain; version=0.0.4; charset=utf-8"
                elif path in ("/health", "/q/health", "/"):
                    report = health_report(connector)
                    body = orjson.dumps(report)
                    code, ctype = (200 if report["status"] == "UP" else 503), "application/json"
                else:
                    body, code, ctype = b"not found\n", 404, "text/plain"
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        try:
            self._server = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            from pgcdc.errors import ConfigError

            raise ConfigError(f"metrics.port: cannot listen on {host}:{port}: {exc.strerror}") from None
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="pgcdc-metrics", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        log.info("metrics and health on http://%s:%d/metrics and /health", *self._server.server_address[:2])
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
