"""replica.identity.autoset.values: set the REPLICA IDENTITY of captured tables when streaming starts.

As Debezium's PostgresReplicationConnection.initReplicaIdentity (3.6): every time streaming starts (after the
snapshot, and again on each restart), each captured table whose `schema.table` one entry's regular expression
matches in full (case-insensitive) gets `ALTER TABLE schema.table REPLICA IDENTITY …` unless it already has that
identity. The names go into the statement unquoted, as Debezium writes them. Nothing here stops the connector:
a table two entries match, a missing privilege or a missing index is logged as an error and the table is left
as it was, and so is every matched table after a failed ALTER. Changes written before the ALTER keep the old
identity's before-image, as in Debezium.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from pgcdc.config import ConnectorConfig
from pgcdc.source.slot import captured_tables

log = logging.getLogger(__name__)

# ReplicaIdentityMapper.REPLICA_AUTO_SET_PATTERN
_ENTRY = re.compile(r"(?i)^\s*(?P<table>[^\s:]+):(?P<identity>DEFAULT|(INDEX) (?P<index>.\w*)|FULL|NOTHING)\s*$")
_CODES = {"n": "NOTHING", "d": "DEFAULT", "i": "INDEX", "f": "FULL"}


@dataclass(frozen=True, slots=True)
class Identity:
    kind: str  # DEFAULT, FULL, NOTHING, INDEX (UNKNOWN when read back as something else)
    index: str | None = None

    def __str__(self) -> str:  # ReplicaIdentityInfo.toString: what follows REPLICA IDENTITY
        return f"USING INDEX {self.index}" if self.index is not None else self.kind


def parse(value: str) -> list[tuple[re.Pattern[str], Identity]]:
    """The entries of the property (already checked against the same pattern when the config was read).

    The pattern takes `full` or `index x` in any case, but Debezium then looks the word up with the enum's
    case-sensitive valueOf: one such entry fails every table (ValueError here, an error per table there)."""
    rules = []
    for entry in value.split(","):
        m = _ENTRY.match(entry)
        if m is None:
            continue
        kind = m.group("identity").split()[0]
        if kind not in ("DEFAULT", "FULL", "NOTHING", "INDEX"):
            raise ValueError(f"No enum constant ReplicaIdentityInfo.ReplicaIdentity.{kind}")
        rules.append((re.compile(m.group("table"), re.IGNORECASE), Identity(kind, m.group("index"))))
    return rules


def find(rules: list[tuple[re.Pattern[str], Identity]], table_id: str) -> Identity | None:
    """The identity the one matching entry asks for; ValueError when several entries match."""
    found = [ident for pattern, ident in rules if pattern.fullmatch(table_id)]
    if len(found) > 1:
        raise ValueError(f"More than one Regular expressions matched table {table_id}")
    return found[0] if found else None


def autoset_tables(config: ConnectorConfig) -> Callable[[str], bool]:
    """Whether an entry of replica.identity.autoset.values names the table (`schema.table`): its identity is
    the one the user asked for, so a table set to NOTHING is not refused at the next start."""
    value = config.replica_identity_autoset_values
    if value is None:
        return lambda table_id: False
    patterns = [re.compile(m.group("table"), re.IGNORECASE) for m in map(_ENTRY.match, value.split(",")) if m]
    return lambda table_id: any(p.fullmatch(table_id) for p in patterns)


def _current(conn: psycopg.Connection, schema: str, table: str) -> Identity | None:
    row = conn.execute("SELECT relreplident FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n "
                       "ON c.relnamespace = n.oid WHERE n.nspname = %s AND c.relname = %s", (schema, table)).fetchone()
    if row is None:
        log.warning("Cannot determine REPLICA IDENTITY information for table '%s.%s'", schema, table)
        return None
    kind = _CODES.get(str(row[0]), "UNKNOWN")
    if kind != "INDEX":
        return Identity(kind)
    # PostgresConnection.readIndexOfReplicaIdentity's query, as it is: it looks the index up by the schema
    # part of its regclass text, so an index on the search_path reads back as no name ("null") and the
    # ALTER is repeated, which changes nothing.
    row = conn.execute(
        "WITH rel_index AS (SELECT split_part(indexrelid::regclass::text, '.', 1) AS index_schema, "
        "split_part(indexrelid::regclass::text, '.', 2) AS index_name FROM pg_catalog.pg_index WHERE indisreplident) "
        "SELECT i.index_name FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid "
        "LEFT JOIN rel_index i ON n.nspname = i.index_schema WHERE n.nspname = %s AND c.relname = %s",
        (schema, table)).fetchone()
    return Identity(kind, "null" if row is None or row[0] is None else str(row[0]))


def autoset(conn: psycopg.Connection, config: ConnectorConfig) -> None:
    """Apply replica.identity.autoset.values to the captured tables (an autocommit connection)."""
    if config.replica_identity_autoset_values is None:
        return
    log.info("Updating Replica Identity")
    value = config.replica_identity_autoset_values
    # Debezium runs the ALTER in a transaction it neither commits nor rolls back when the ALTER fails: its
    # connection stays in the aborted transaction, so every matched table after a failed ALTER is left as it
    # is ("Cannot determine REPLICA IDENTITY information"; measured with 3.6.3).
    aborted = False
    for schema, table in sorted(captured_tables(conn, config)):
        table_id = f"{schema}.{table}"
        try:
            wanted = find(parse(value), table_id)
        except ValueError as exc:
            log.error("Unable to update Replica Identity for table %s: %s", table_id, exc)
            continue
        if wanted is None:
            log.debug("Replica identity for table '%s' will not be updated because Replica Identity is not "
                      "defined on REPLICA_IDENTITY_AUTOSET_VALUES property", table_id)
            continue
        if aborted:
            log.error("Cannot determine REPLICA IDENTITY information for table %s", table_id)
            current = None
        else:
            current = _current(conn, schema, table)
        if current is not None and str(current) != str(wanted):
            try:
                conn.execute(f"ALTER TABLE {table_id} REPLICA IDENTITY {wanted};")  # type: ignore[arg-type]
            except psycopg.Error as exc:
                aborted = True
                if isinstance(exc, psycopg.errors.InsufficientPrivilege):
                    log.error("Replica identity could not be updated because of lack of privileges: %s",
                              exc.diag.message_primary)
                else:
                    log.error("Unexpected error while attempting to alter Replica Identity: %s",
                              exc.diag.message_primary or exc)
            log.info("Replica identity set to %s for table '%s'", wanted, table_id)
        else:
            log.info("Replica identity for table '%s' is already %s", table_id, current)
