"""Publication and replication slot: look up, create per config, and undo what we created on failure.

Order matters: the publication is created before the slot, because a publication created after a slot's
restart point is invisible to that slot's decoding ("publication … does not exist" in the change callback).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from pgcdc.config import ConnectorConfig
from pgcdc.errors import SourceError
from pgcdc.lsn import format_lsn, parse_lsn

if TYPE_CHECKING:
    from pgcdc.source.stream import ReplicationStream

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SlotInfo:
    name: str
    created: bool
    consistent_point: int  # for a new slot: where decoding starts; else the slot's confirmed_flush_lsn
    snapshot_name: str | None  # exported snapshot (valid while the creating connection stays idle)


def captured_tables(conn: psycopg.Connection, config: ConnectorConfig) -> list[tuple[str, str]]:
    """Ordinary and partitioned tables the include/exclude lists select, in Debezium's (schema, table) order.

    Partitions are tables of their own, as in PostgresConnection.getAllTableIds (JDBC types TABLE and
    PARTITIONED TABLE): Debezium's snapshot reads a partitioned table's rows from the root and again from each
    partition, each under its own topic (measured, 3.6.3); its filtered publication lists them too."""
    rows = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' "
        "AND n.nspname NOT LIKE 'pg_temp%' ORDER BY 1, 2"
    ).fetchall()
    return [(s, t) for s, t in rows if config.captures(s, t)]


def ensure_publication(conn: psycopg.Connection, config: ConnectorConfig) -> bool:
    """Make sure the publication exists as configured. Returns True if this call created it."""
    name = config.publication_name
    exists = conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
    mode = config.publication_autocreate_mode
    if mode == "disabled":
        if not exists:
            raise SourceError(
                f"publication.name: publication {name!r} does not exist and publication.autocreate.mode=disabled"
            )
        return False
    ident = sql.Identifier(name)
    # publish.via.partition.root: PostgresReplicationConnection.buildWithClause, on CREATE only (its ALTER
    # PUBLICATION ... SET TABLE leaves the option as it was).
    with_ = " WITH (publish_via_partition_root = true)" if config.publish_via_partition_root else ""
    if mode == "filtered":
        tables = captured_tables(conn, config)
        if not tables:
            raise SourceError("table.include.list/schema.include.list: no existing table matches the filters")
        table_list = sql.SQL(", ").join(sql.Identifier(s, t) for s, t in tables)
        verb = "ALTER PUBLICATION {} SET TABLE {}" if exists else "CREATE PUBLICATION {} FOR TABLE {}" + with_
        _run_ddl(conn, sql.SQL(verb).format(ident, table_list), "publication.name")
        return not exists
    if exists:
        return False
    stmt = ("CREATE PUBLICATION {} FOR ALL TABLES" if mode == "all_tables" else "CREATE PUBLICATION {}") + with_
    _run_ddl(conn, sql.SQL(stmt).format(ident), "publication.name")
    log.info("created publication %s (%s)", name, mode)
    return True


def _run_ddl(conn: psycopg.Connection, stmt: sql.Composed, setting: str) -> None:
    try:
        conn.execute(stmt)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise SourceError(f"{setting}: {exc.diag.message_primary} (create the publication as a superuser, "
                          "or grant the user ownership of the tables)") from None
    except psycopg.Error as exc:
        raise SourceError(f"{setting}: {exc.diag.message_primary or exc}") from None


def drop_publication(conn: psycopg.Connection, name: str) -> None:
    conn.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(name)))


def find_slot(conn: psycopg.Connection, config: ConnectorConfig) -> tuple[int, bool] | None:
    """(confirmed_flush_lsn, active) of the configured slot, or None. Checks plugin and database."""
    row = conn.execute(
        "SELECT plugin, database, confirmed_flush_lsn::text, active FROM pg_replication_slots "
        "WHERE slot_name = %s",
        (config.slot_name,),
    ).fetchone()
    if row is None:
        return None
    plugin, database, confirmed, active = row
    if plugin != "pgoutput":
        raise SourceError(f"slot.name: slot {config.slot_name!r} uses plugin {plugin!r}, not pgoutput")
    if database != config.database_dbname:
        raise SourceError(f"slot.name: slot {config.slot_name!r} belongs to database {database!r}, "
                          f"not {config.database_dbname!r}")
    return parse_lsn(confirmed or "0/0"), bool(active)


def create_slot(repl: psycopg.Connection, config: ConnectorConfig, *, export_snapshot: bool) -> SlotInfo:
    """CREATE_REPLICATION_SLOT on a replication connection. The pre-PG15 keyword syntax works on 10–18."""
    option = "EXPORT_SNAPSHOT" if export_snapshot else "NOEXPORT_SNAPSHOT"
    if config.slot_failover:  # PostgreSQL 17+: the slot is synchronized to physical standbys
        if repl.info.server_version < 170000:
            raise SourceError(f"slot.failover: needs PostgreSQL 17 or newer (server is "
                              f"{repl.info.server_version // 10000})")
        option = f"(SNAPSHOT '{'export' if export_snapshot else 'nothing'}', FAILOVER true)"
    # The command waits for the transactions open when it starts; Debezium cancels it after
    # internal.create.slot.command.timeout seconds (PostgresReplicationConnection: setQueryTimeout), and so does
    # pgcdc. A cancelled command leaves no slot behind.
    timeout = config.create_slot_command_timeout
    timer = threading.Timer(timeout, repl.cancel_safe) if timeout else None
    if timer is not None:
        timer.start()
    try:
        row = repl.execute(
            f"CREATE_REPLICATION_SLOT {config.slot_name} LOGICAL pgoutput {option}"  # slot.name is [a-z0-9_]
        ).fetchone()
    except psycopg.errors.QueryCanceled:
        raise SourceError(f"internal.create.slot.command.timeout: slot {config.slot_name!r} not created within "
                          f"{timeout} s: PostgreSQL waits for the transactions open when it starts to end "
                          f"(pg_stat_activity shows them); end them or raise the timeout") from None
    except psycopg.Error as exc:
        raise SourceError(f"slot.name: cannot create slot {config.slot_name!r}: "
                          f"{exc.diag.message_primary or exc}") from None
    finally:
        if timer is not None:
            timer.cancel()
    assert row is not None
    log.info("created replication slot %s at %s", config.slot_name, row[1])
    return SlotInfo(config.slot_name, True, parse_lsn(row[1]), row[2])


def drop_slot(conn: psycopg.Connection, name: str, wait_s: float = 10.0) -> None:
    """Drop the slot; a walsender that was just told to stop may hold it a moment longer, so wait for it."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                         "WHERE slot_name = %s", (name,))
            return
        except psycopg.errors.ObjectInUse:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class StartUndo:
    """What a failed start must drop so the database is left as it was."""

    def __init__(self, conn: psycopg.Connection, config: ConnectorConfig) -> None:
        self.conn = conn
        self.config = config
        self.slot = False
        self.publication = False
        self.stream: ReplicationStream | None = None

    def run(self) -> None:
        try:
            if self.stream is not None:  # the walsender must let go of the slot before it can be dropped
                self.stream.close()
            if self.slot:
                drop_slot(self.conn, self.config.slot_name)
            if self.publication:
                drop_publication(self.conn, self.config.publication_name)
        except psycopg.Error as exc:
            log.warning("could not undo start-up: %s", exc)


def check_offset_against_slot(c: ConnectorConfig, stored: dict[str, Any], confirmed: int) -> None:
    """A stored position behind the slot's confirmed one: the changes in between cannot be read again."""
    at = max(int(stored.get(k) or 0) for k in ("lsn", "lsn_proc", "lsn_commit"))
    if at >= confirmed:
        return
    text = (f"stored offset {format_lsn(at)} is {confirmed - at} bytes behind slot {c.slot_name!r} "
            f"(confirmed {format_lsn(confirmed)}): changes in between are no longer in the slot")
    if c.pgcdc_offset_behind_slot == "fail":
        raise SourceError(f"{text}; snapshot.mode=when_needed takes a new snapshot, "
                          f"pgcdc.offset.behind.slot=warn streams on from the slot")
    log.warning("%s; streaming on from the slot (pgcdc.offset.behind.slot=warn)", text)
