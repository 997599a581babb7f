"""xmin.fetch.interval.ms: `source.xmin` of streamed events, the slot's catalog_xmin read at that interval.

As Debezium's PostgresStreamingChangeEventSource.getSlotXmin (3.6): at every Begin, Commit, row change and
logical decoding message it reads `catalog_xmin` of the connector's row in pg_replication_slots when the
interval has elapsed (a fixed grid of instants from when streaming was set up, ElapsedTimeStrategy.constant),
or when it has no value yet; between two reads, the last value. A NULL catalog_xmin is read as 0 (JDBC's
getLong); no slot row gives no value (null), read again at the next message. The value also goes into the
stored offset (`xmin`), as Debezium's does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import psycopg

log = logging.getLogger(__name__)


class SlotXmin:
    """The slot's catalog_xmin, read on `conn` (its own autocommit connection) at most once per interval."""

    def __init__(self, conn: psycopg.Connection, slot_name: str, database: str, interval_ms: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.conn = conn
        self.slot_name = slot_name
        self.database = database
        self.interval_ms = interval_ms
        self.clock = clock
        self.next_ms = clock() * 1000 + interval_ms
        self.value: int | None = None

    def _elapsed(self) -> bool:
        now = self.clock() * 1000
        if now < self.next_ms:
            return False
        self.next_ms += (1 + int(now - self.next_ms) // self.interval_ms) * self.interval_ms
        return True

    def get(self) -> int | None:
        """The value for the message at hand (reads the slot when due)."""
        if self._elapsed() or self.value is None:
            row = self.conn.execute(
                "SELECT catalog_xmin::text FROM pg_replication_slots WHERE slot_name = %s AND database = %s "
                "AND plugin = 'pgoutput'", (self.slot_name, self.database)).fetchone()
            self.value = None if row is None else int(row[0] or 0)
            log.debug("Fetched new xmin from slot of %s", self.value)
        return self.value
