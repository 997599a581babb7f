"""Opening PostgreSQL connections, with libpq's failures turned into one-line SourceErrors."""

from __future__ import annotations

import logging
import re

import psycopg

from pgcdc.config import ConnectorConfig
from pgcdc.errors import SourceError

log = logging.getLogger(__name__)


def connect(config: ConnectorConfig, *, replication: bool = False) -> psycopg.Connection:
    """A regular (or `replication=database`) autocommit connection; a regular one has run
    `database.initial.statements`, as each of Debezium's JDBC connections does when it opens."""
    params = config.libpq_params(replication=replication)
    try:
        conn = psycopg.connect(**params, autocommit=True)
    except psycopg.OperationalError as exc:
        raise SourceError(describe_connect_error(config, str(exc), replication)) from None
    if not replication and config.database_initial_statements:
        for statement in initial_statements(config.database_initial_statements):
            try:
                conn.execute(statement.encode())
            except psycopg.Error as exc:
                conn.close()
                reason = (str(exc).strip().splitlines() or ["unknown error"])[0]
                raise SourceError(f"database.initial.statements: {statement!r} failed: {reason}") from None
    return conn


def initial_statements(text: str) -> list[str]:
    """JdbcConnection.parseSqlStatementString: split at `;`, `;;` being a semicolon of the statement; each
    statement trimmed, empty ones dropped."""
    out, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == ";" and i + 1 < len(text) and text[i + 1] == ";":
            current.append(";")
            i += 2
            continue
        if ch == ";":
            if "".join(current).strip():
                out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    if "".join(current).strip():
        out.append("".join(current).strip())
    return out


def describe_connect_error(config: ConnectorConfig, text: str, replication: bool) -> str:
    """Map libpq's multi-line error text to one line that names the setting to fix."""
    where = f"{config.database_hostname}:{config.database_port}"
    low = text.lower()
    last = text.strip().splitlines()[-1].strip() if text.strip() else "unknown error"
    # libpq prefixes "connection to server at … failed: " (psycopg adds "connection failed: "); keep only
    # the server's reason.
    reason = _PREFIX.sub("", last)
    tls = _describe_tls_error(config, text, where)
    if tls:
        return tls
    if "password authentication failed" in low or "no password supplied" in low:
        hint = "" if config.database_password else (
            " (no password was given: set database.password, PGCDC_DATABASE_PASSWORD or database.password.file)")
        return f"database.password: authentication failed for user {config.database_user!r} at {where}{hint}"
    if "could not translate host name" in low or "name or service not known" in low:
        return f"database.hostname: unknown host {config.database_hostname!r}"
    if "connection refused" in low or "timeout expired" in low or "no route to host" in low:
        return f"database.hostname/database.port: cannot reach PostgreSQL at {where}: {reason}"
    if "does not exist" in low and "database" in low:
        return f"database.dbname: database {config.database_dbname!r} does not exist at {where}"
    if replication and ("replication" in low or "walsender" in low) and (
        "permission" in low or "must be superuser" in low or "no pg_hba.conf entry" in low
    ):
        return (f"database.user: {config.database_user!r} may not open a replication connection at {where} "
                f"(needs the REPLICATION attribute and a pg_hba.conf replication entry): {reason}")
    if "no pg_hba.conf entry" in low:
        return f"database.user: pg_hba.conf has no entry for user {config.database_user!r} at {where}"
    if "ssl" in low:
        return f"database.sslmode: {reason}"
    return f"cannot connect to PostgreSQL at {where}: {reason}"


_PREFIX = re.compile(r"^(?:connection failed: )?(?:connection to server (?:at|on) .*? failed: )?(?:FATAL:\s+)?")


def _describe_tls_error(config: ConnectorConfig, text: str, where: str) -> str | None:
    """TLS failures, named by the property to fix: libpq's words, checked on the last attempt's lines."""
    lines = [_PREFIX.sub("", ln.strip()) for ln in text.strip().splitlines()]
    last = lines[-1] if lines else ""
    mode = config.database_sslmode
    for line in lines:
        low = line.lower()
        if "does not match host name" in low:
            return (f"database.sslmode={mode}: the server certificate does not name database.hostname "
                    f"{config.database_hostname!r}: {line}")
        if "root certificate file" in low:
            return f"database.sslrootcert: {line} (database.sslmode={mode} verifies the server against it)"
        if "certificate verify failed" in low:
            root = config.database_sslrootcert or "the default root certificate (~/.postgresql/root.crt)"
            return (f"database.sslrootcert: the certificate of {where} is not signed by {root} "
                    f"(database.sslmode={mode}): {line}")
        if "private key" in low:
            return f"database.sslkey: {line}"
        if "certificate file" in low:
            return f"database.sslcert: {line}"
    low = last.lower()
    if "client certificate" in low or "certificate authentication failed" in low:
        return (f"database.sslcert/database.sslkey: {where} wants a valid client certificate for user "
                f"{config.database_user!r}: {last}")
    if "pg_hba.conf rejects" in low and "no encryption" in low:
        return f"database.sslmode={mode}: {where} accepts user {config.database_user!r} only over TLS: {last}"
    return None


def check_server(conn: psycopg.Connection, config: ConnectorConfig) -> int:
    """Checks that need a regular connection: wal_level and the REPLICATION privilege. Returns server_version_num."""
    row = conn.execute(
        "SELECT current_setting('wal_level'), current_setting('server_version_num')::int, "
        "r.rolreplication OR r.rolsuper FROM pg_roles r WHERE r.rolname = current_user"
    ).fetchone()
    assert row is not None
    wal_level, version, can_replicate = row
    if wal_level != "logical":
        raise SourceError(f"PostgreSQL wal_level is {wal_level!r}; set wal_level=logical and restart the server")
    if not can_replicate:
        raise SourceError(
            f"database.user: role {config.database_user!r} lacks the REPLICATION attribute "
            f"(ALTER ROLE {config.database_user} REPLICATION)"
        )
    if version < 100000:
        raise SourceError(f"PostgreSQL {version // 10000} is too old: pgoutput needs PostgreSQL 10 or newer")
    return int(version)


def check_objects(conn: psycopg.Connection, config: ConnectorConfig) -> None:
    """Read-only checks of the publication, the slot and the captured tables, run before anything is created
    (the offset topic or file, the publication, the slot), so that a refusal leaves nothing behind."""
    from pgcdc.source import slot as slots

    if config.publication_autocreate_mode == "disabled" and conn.execute(
            "SELECT 1 FROM pg_publication WHERE pubname = %s", (config.publication_name,)).fetchone() is None:
        raise SourceError(f"publication.name: publication {config.publication_name!r} does not exist and "
                          "publication.autocreate.mode=disabled")
    tables = slots.captured_tables(conn, config)
    if config.publication_autocreate_mode == "filtered" and not tables:
        raise SourceError("table.include.list/schema.include.list: no existing table matches the filters")
    slots.find_slot(conn, config)  # a slot of another plugin or database is refused by name
    if config.guardrail_collections_max > 0:
        check_guardrail(config, len(tables))
    # REPLICA IDENTITY NOTHING: once the table is published, PostgreSQL rejects its UPDATEs and DELETEs
    # ("cannot update table ... because it does not have a replica identity and publishes updates").
    nothing = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relreplident = 'n' AND c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', "
        "'information_schema') ORDER BY 1, 2").fetchall()
    for schema, table in nothing:
        if (schema, table) in tables:
            raise SourceError(
                f"table {schema}.{table}: REPLICA IDENTITY NOTHING: PostgreSQL rejects its UPDATEs and DELETEs "
                f"once published (ALTER TABLE {schema}.{table} REPLICA IDENTITY FULL, add a primary key, or "
                f"leave it out with table.exclude.list)")


def check_guardrail(config: ConnectorConfig, count: int) -> None:
    """guardrail.collections.max, checked at each start as PostgresConnectorTask.validateGuardrailLimits: the
    number of captured tables (slot.captured_tables: partitions count, as in Debezium) against the limit; a
    table created later is not checked, as in Debezium."""
    limit = config.guardrail_collections_max
    if count <= limit:
        return
    message = (f"guardrail.collections.max: Guardrail limit exceeded: {count} tables/collections configured for "
               f"capture, but maximum allowed is {limit}.")
    if config.guardrail_collections_limit_action == "fail":
        raise SourceError(message + " (guardrail.collections.limit.action=fail)")
    log.warning("%s", message)


def max_proto_version(server_version_num: int) -> int:
    """pgoutput protocol versions: 1 up to PG13, 2 (streaming) on 14, 3 (two-phase) on 15, 4 (parallel) on 16+."""
    major = server_version_num // 10000
    if major >= 16:
        return 4
    if major == 15:
        return 3
    if major == 14:
        return 2
    return 1
