"""The replication stream: START_REPLICATION on a `replication=database` connection, driven through libpq.

psycopg 3 has no replication API, but COPY_BOTH works through `conn.pgconn`: `get_copy_data(1)` in async
mode returns 0 when nothing is buffered, so we wait on the socket and `consume_input()`.
"""

from __future__ import annotations

import logging
import select
import time

import psycopg
from psycopg import pq

from pgcdc.config import ConnectorConfig
from pgcdc.errors import SourceError
from pgcdc.lsn import PG_EPOCH_US, format_lsn
from pgcdc.source.connection import max_proto_version
from pgcdc.protocol.replication import PrimaryKeepalive, XLogData, parse_copy_data, standby_status_update

log = logging.getLogger(__name__)



def pg_now_us() -> int:
    return int(time.time() * 1_000_000) - PG_EPOCH_US


class ReplicationStream:
    """Reads XLogData frames; answers keepalives; reports the flushed LSN the runner confirms."""

    def __init__(self, conn: psycopg.Connection, *, status_interval_s: float) -> None:
        self.conn = conn
        self.pgconn = conn.pgconn
        self.status_interval_s = status_interval_s
        self.received_lsn = 0
        self.flushed_lsn = 0
        self.keepalive_lsn = 0
        self._last_status = 0.0

    def start(self, slot: str, start_lsn: int, options: dict[str, str]) -> None:
        opts = ", ".join(f"{k} '{v.replace(chr(39), chr(39) * 2)}'" for k, v in options.items())
        query = f"START_REPLICATION SLOT {slot} LOGICAL {format_lsn(start_lsn)} ({opts})"
        self.flushed_lsn = start_lsn
        self.pgconn.send_query(query.encode())
        res = self.pgconn.get_result()
        if res is None or res.status != pq.ExecStatus.COPY_BOTH:
            msg = (res.error_message.decode(errors="replace").strip() if res is not None else "") or \
                self.pgconn.error_message.decode(errors="replace").strip()
            raise SourceError(f"START_REPLICATION failed on slot {slot!r}: {msg}")
        log.info("streaming from slot %s at %s (%s)", slot, format_lsn(start_lsn), opts)

    def read(self, timeout: float) -> XLogData | None:
        """The next XLogData frame, or None if none arrived within `timeout` seconds."""
        deadline = None  # taken when the first wait starts: a frame already received costs no clock read
        pgconn = self.pgconn
        while True:
            nbytes, data = pgconn.get_copy_data(1)
            if nbytes > 0:
                frame = parse_copy_data(data)
                if isinstance(frame, XLogData):
                    if frame.end_lsn > self.received_lsn:
                        self.received_lsn = frame.end_lsn
                    return frame
                if isinstance(frame, PrimaryKeepalive):
                    self.received_lsn = max(self.received_lsn, frame.end_lsn)
                    # A logical walsender's keepalive carries how far decoding has got: every transaction
                    # that committed before it has been sent ahead of this message.
                    self.keepalive_lsn = max(self.keepalive_lsn, frame.end_lsn)
                    if frame.reply_requested:
                        self.send_status(force=True)
                continue
            if nbytes == -1:
                res = pgconn.get_result()
                msg = res.error_message.decode(errors="replace").strip() if res is not None else ""
                raise SourceError(f"replication stream ended by the server: {msg or 'COPY finished'}")
            if nbytes < -1:
                raise SourceError("replication stream failed: "
                                  + pgconn.error_message.decode(errors="replace").strip())
            self.maybe_send_status()
            if deadline is None:
                deadline = time.monotonic() + timeout
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([pgconn.socket], [], [], min(remaining, 1.0))
            if ready:
                pgconn.consume_input()

    def confirm(self, lsn: int) -> None:
        """Everything up to `lsn` is durably handled (Kafka acked, offset stored): tell the server."""
        if lsn > self.flushed_lsn:
            self.flushed_lsn = lsn
            self.send_status(force=True)

    def maybe_send_status(self) -> None:
        if time.monotonic() - self._last_status >= self.status_interval_s:
            self.send_status(force=True)

    def send_status(self, force: bool = False) -> None:
        written = max(self.received_lsn, self.flushed_lsn)
        msg = standby_status_update(written, self.flushed_lsn, self.flushed_lsn, pg_now_us())
        try:
            self.pgconn.put_copy_data(msg)
            self.pgconn.flush()
        except psycopg.Error as exc:
            raise SourceError(f"cannot send standby status to PostgreSQL: {exc}") from None
        self._last_status = time.monotonic()

    def close(self) -> None:
        try:
            if self.pgconn.status == pq.ConnStatus.OK:
                self.send_status(force=True)
        except Exception:  # closing: the status is best effort, the offset store is the source of truth
            pass
        self.conn.close()


def pgoutput_options(c: ConnectorConfig, server_version: int) -> dict[str, str]:
    """START_REPLICATION's pgoutput options for the connector's publication on this server."""
    # pgoutput reads publication_names as a list of SQL identifiers: quoted, the publication created by its
    # exact name (capitals, spaces, commas) is the one it finds.
    publication = '"' + c.publication_name.replace('"', '""') + '"'
    options = {"proto_version": str(max_proto_version(server_version)), "publication_names": publication}
    if server_version >= 140000:
        options["messages"] = "true"
        if c.pgcdc_streaming == "on":  # big transactions arrive in blocks before they commit
            options["streaming"] = "on"
    return options
