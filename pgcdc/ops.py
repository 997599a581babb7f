"""What an operator asks of a configured connector without running it: is everything in place (validate),
where is it (status), and the offset and slot chores. Read-only except `reset_offset` and `drop_slot`.

Every check reports a one-line problem naming the property or the database object to fix, and `validate`
goes on after a problem so that one run lists them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import psycopg

from pgcdc.config import ConnectorConfig
from pgcdc.errors import PgcdcError, SourceError
from pgcdc.lsn import format_lsn, parse_lsn
from pgcdc.source import slot as slots
from pgcdc.source.connection import check_server, connect


@dataclass(frozen=True)
class Problem:
    level: str  # error | warning
    text: str

    def __str__(self) -> str:
        return f"{self.level}: {self.text}"


def validate(config: ConnectorConfig) -> list[Problem]:
    """Every problem that would stop or endanger this connector, in the order a start-up meets them. Kafka is
    asked once, within pgcdc.kafka.reach.timeout.ms; the stored offset is read only from a broker that answered."""
    problems: list[Problem] = []
    err = lambda text: problems.append(Problem("error", text))  # noqa: E731
    warn = lambda text: problems.append(Problem("warning", text))  # noqa: E731
    try:
        conn = connect(config)
    except SourceError as exc:
        err(str(exc))
        _check_broker(config, err)
        return problems
    with conn:
        try:
            check_server(conn, config)
        except SourceError as exc:
            err(str(exc))
        _check_capacity(conn, err)
        try:
            connect(config, replication=True).close()
        except SourceError as exc:
            err(str(exc))
        tables = slots.captured_tables(conn, config)
        if not tables:
            err("table.include.list/schema.include.list: no existing table matches the filters")
        _check_publication(conn, config, tables, err, warn)
        _check_tables(conn, config, tables, err, warn)
        slot = _check_slot(conn, config, err)
        if _check_broker(config, err) or config.offset_storage != "kafka":
            _check_offsets(config, slot, err, warn)
    return problems


def _check_capacity(conn: psycopg.Connection, err: Any) -> None:
    row = conn.execute(
        "SELECT current_setting('max_replication_slots')::int, (SELECT count(*) FROM pg_replication_slots), "
        "current_setting('max_wal_senders')::int, "
        "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walsender')").fetchone()
    assert row is not None
    max_slots, used_slots, max_senders, used_senders = row
    if used_slots >= max_slots:
        err(f"PostgreSQL max_replication_slots={max_slots} are all in use: raise it or drop an unused slot")
    if used_senders >= max_senders:
        err(f"PostgreSQL max_wal_senders={max_senders} are all in use")


def _check_publication(conn: psycopg.Connection, config: ConnectorConfig, tables: list[tuple[str, str]],
                       err: Any, warn: Any) -> None:
    name = config.publication_name
    row = conn.execute("SELECT puballtables, pubinsert AND pubupdate AND pubdelete FROM pg_publication "
                       "WHERE pubname = %s", (name,)).fetchone()
    mode = config.publication_autocreate_mode
    if row is None:
        if mode == "disabled":
            err(f"publication.name: publication {name!r} does not exist and publication.autocreate.mode=disabled")
        elif mode == "all_tables" and not _is_superuser(conn):
            err(f"publication.autocreate.mode=all_tables: creating publication {name!r} FOR ALL TABLES needs a "
                f"superuser; create it beforehand or use publication.autocreate.mode=filtered")
        return
    all_tables, all_ops = row
    if not all_ops:
        warn(f"publication.name: publication {name!r} does not publish every insert, update and delete")
    if all_tables:
        return
    published = {(s, t) for s, t in conn.execute(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (name,)).fetchall()}
    # pg_publication_tables names a published partitioned table's leaves, or with publish_via_partition_root
    # its root alone: a captured root or partition is published when any table of its partition tree is.
    family = _partition_roots(conn)
    published |= {t for t, root in family.items() if family.get(root, root) in
                  {family.get(p, p) for p in published}}
    missing = [f"{s}.{t}" for s, t in tables if (s, t) not in published]
    if missing and mode == "disabled":
        err(f"publication.name: publication {name!r} lacks captured table(s) {', '.join(missing)}")
    elif missing and mode == "all_tables":
        warn(f"publication.name: publication {name!r} exists without {', '.join(missing)}; "
             f"publication.autocreate.mode=all_tables does not change an existing publication")


def _partition_roots(conn: psycopg.Connection) -> dict[tuple[str, str], tuple[str, str]]:
    """Every partitioned table and partition -> the root of its partition tree."""
    parent = {(cs, c): (ps, p) for cs, c, ps, p in conn.execute(
        "SELECT cn.nspname, c.relname, pn.nspname, p.relname FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace "
        "JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace pn ON pn.oid = p.relnamespace "
        "WHERE c.relispartition").fetchall()}
    roots = {}
    for table in [*parent, *parent.values()]:
        root = table
        while root in parent:
            root = parent[root]
        roots[table] = root
    return roots


def _check_tables(conn: psycopg.Connection, config: ConnectorConfig, tables: list[tuple[str, str]],
                  err: Any, warn: Any) -> None:
    from pgcdc.source.replica_identity import autoset_tables

    autoset = autoset_tables(config)  # replica.identity.autoset.values: the identity the user asked for
    for schema, table in tables:
        row = conn.execute(
            "SELECT c.relreplident, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), "
            "has_table_privilege(c.oid, 'SELECT') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = %s", (schema, table)).fetchone()
        if row is None:
            continue
        ident, has_pk, can_select = row
        if (ident == "n" or (ident == "d" and not has_pk)) and not autoset(f"{schema}.{table}"):
            why = "REPLICA IDENTITY NOTHING" if ident == "n" else "no primary key and REPLICA IDENTITY DEFAULT"
            err(f"table {schema}.{table}: {why}: PostgreSQL rejects its UPDATEs and DELETEs once published "
                f"(ALTER TABLE {schema}.{table} REPLICA IDENTITY FULL, or add a primary key)")
        if not can_select and config.snapshot_mode != "no_data":
            err(f"table {schema}.{table}: database.user {config.database_user!r} may not SELECT it, "
                f"which the snapshot needs (snapshot.mode={config.snapshot_mode})")


def _check_slot(conn: psycopg.Connection, config: ConnectorConfig, err: Any) -> dict[str, Any] | None:
    slot = slot_info(conn, config.slot_name)
    if slot is None:
        return None
    if slot["plugin"] != "pgoutput":
        err(f"slot.name: slot {config.slot_name!r} uses plugin {slot['plugin']!r}; pgcdc needs pgoutput")
    if slot["database"] != config.database_dbname:
        err(f"slot.name: slot {config.slot_name!r} belongs to database {slot['database']!r}, "
            f"not database.dbname={config.database_dbname!r}")
    if slot["active"]:
        err(f"slot.name: slot {config.slot_name!r} is in use by another process (pid {slot['active_pid']})")
    if slot.get("wal_status") == "lost":
        err(f"slot.name: slot {config.slot_name!r} has lost required WAL (max_slot_wal_keep_size): drop it and "
            f"snapshot again")
    return slot


def _check_offsets(config: ConnectorConfig, slot: dict[str, Any] | None, err: Any, warn: Any) -> None:
    if config.offset_storage == "memory":
        return
    try:
        stored = load_offset(config)
    except PgcdcError as exc:
        err(str(exc))
        return
    if stored is None or slot is None:
        if stored is not None and slot is None:
            warn(f"slot.name: an offset is stored but slot {config.slot_name!r} does not exist: a new slot starts "
                 f"at the current WAL position, so changes since the offset are not captured")
        return
    lsn = max(int(stored.get(k) or 0) for k in ("lsn", "lsn_proc", "lsn_commit"))
    confirmed = slot["confirmed_flush_lsn"]
    if confirmed is not None and lsn and lsn < confirmed:
        err(f"stored offset lsn {format_lsn(lsn)} is behind slot {config.slot_name!r} confirmed position "
            f"{format_lsn(confirmed)}: changes between them cannot be read again")


def _check_broker(config: ConnectorConfig, err: Any) -> bool:
    """Whether Kafka answered (or is not used); one error line if it did not."""
    if config.sink_type != "kafka" and config.offset_storage != "kafka":
        return True
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from pgcdc.client_settings import kafka_client
    from pgcdc.sink.kafka import unreachable

    conf = {k: v for k, v in config.producer_config().items()
            if k == "bootstrap.servers" or k.startswith(("security.", "sasl.", "ssl."))}
    timeout_s = config.pgcdc_kafka_reach_timeout_ms / 1000
    try:
        AdminClient(kafka_client(conf)).list_topics(timeout=timeout_s)
    except KafkaException as exc:
        err(unreachable(config.bootstrap_servers or "", timeout_s, exc))
        return False
    return True


def _is_superuser(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    return bool(row and row[0])


# -- status -------------------------------------------------------------------------------------------
def slot_info(conn: psycopg.Connection, name: str) -> dict[str, Any] | None:
    rows = list_slots(conn, name)
    return rows[0] if rows else None


def list_slots(conn: psycopg.Connection, name: str | None = None) -> list[dict[str, Any]]:
    """Logical slots of the cluster with their lag: `lag_bytes` from the confirmed position to the current
    WAL end, `retained_bytes` the WAL the server keeps for the slot."""
    wal_status = ", wal_status" if _server_version(conn) >= 130000 else ", NULL"
    rows = conn.execute(
        "SELECT slot_name, plugin, database, active, active_pid, restart_lsn::text, confirmed_flush_lsn::text, "
        "pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, "
        f"pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint{wal_status} "
        "FROM pg_replication_slots WHERE slot_type = 'logical' AND (%s::text IS NULL OR slot_name = %s) "
        "ORDER BY slot_name", (name, name)).fetchall()
    keys = ("slot_name", "plugin", "database", "active", "active_pid", "restart_lsn", "confirmed_flush_lsn",
            "lag_bytes", "retained_bytes", "wal_status")
    out = []
    for row in rows:
        d = dict(zip(keys, row))
        for k in ("restart_lsn", "confirmed_flush_lsn"):
            d[k] = parse_lsn(d[k]) if d[k] else None
        out.append(d)
    return out


def _server_version(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()
    return int(row[0]) if row else 0


def status(config: ConnectorConfig) -> dict[str, Any]:
    """Slot, lag and stored offset, as one JSON-ready mapping."""
    out: dict[str, Any] = {"connector": config.name, "topic.prefix": config.topic_prefix,
                           "slot.name": config.slot_name}
    with connect(config) as conn:
        slot = slot_info(conn, config.slot_name)
    if slot is not None:
        for k in ("restart_lsn", "confirmed_flush_lsn"):
            slot[k] = format_lsn(slot[k]) if slot[k] is not None else None
    out["slot"] = slot
    stored = load_offset(config) if config.offset_storage != "memory" else None
    if stored is not None:
        stored = dict(stored)
        for k in ("lsn", "lsn_proc", "lsn_commit"):
            if isinstance(stored.get(k), int):
                stored[f"{k}_text"] = format_lsn(stored[k])
    out["offset"] = stored
    out["running"] = bool(slot and slot["active"])
    return out


# -- offsets and slots ----------------------------------------------------------------------------------
def _offset_store(config: ConnectorConfig) -> Any:
    if config.offset_storage == "memory":
        raise PgcdcError("offset.storage=memory: offsets live only inside a running process")
    from pgcdc.offsets import make_offset_store

    return make_offset_store(config)


def load_offset(config: ConnectorConfig) -> dict[str, Any] | None:
    store = _offset_store(config)
    try:
        return store.load()  # type: ignore[no-any-return]
    finally:
        store.close()


def _refuse_if_running(config: ConnectorConfig, what: str) -> None:
    with connect(config) as conn:
        slot = slot_info(conn, config.slot_name)
    if slot is not None and slot["active"]:
        raise SourceError(f"slot.name: slot {config.slot_name!r} is in use (pid {slot['active_pid']}): "
                          f"stop the connector before {what}")


def reset_offset(config: ConnectorConfig) -> dict[str, Any] | None:
    """Forget the stored offset (the next start snapshots or streams per snapshot.mode); returns what it was."""
    _refuse_if_running(config, "resetting its offset")
    store = _offset_store(config)
    try:
        before: dict[str, Any] | None = store.load()
        store.reset()
        return before
    finally:
        store.close()


_SLOT_NAME = re.compile(r"^[a-z0-9_]{1,63}$")


def drop_slot(config: ConnectorConfig, name: str | None = None) -> bool:
    """Drop a slot that no process uses. Returns False if it did not exist."""
    name = name or config.slot_name
    if not _SLOT_NAME.match(name):
        raise SourceError(f"slot.name: {name!r} is not a replication slot name")
    with connect(config) as conn:
        slot = slot_info(conn, name)
        if slot is None:
            return False
        if slot["active"]:
            raise SourceError(f"slot.name: slot {name!r} is in use (pid {slot['active_pid']}): stop it first")
        slots.drop_slot(conn, name, wait_s=0)
    return True
