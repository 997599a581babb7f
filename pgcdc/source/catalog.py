"""Table metadata pgoutput does not send: NOT NULL, defaults, primary key, type names.

pgoutput's Relation message carries column names, type oids, typmods and the replica-identity key flag, but
Debezium's schemas also need optionality, the primary key (the event key; without one, a unique index's columns)
and defaults. We read them from the catalog when a Relation message arrives (cold path), as Debezium refreshes
its schema on Relation messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    name: str
    type_oid: int
    type_modifier: int  # the attribute's, else (a domain) the domain's
    type_name: str  # format_type(): e.g. "numeric(10,2)", "character varying(20)", "integer[]"
    base_type_name: str  # pg_type.typname of the type (of the base type for domains), e.g. "int4", "_text"
    not_null: bool
    default: str | None  # the default expression as text
    position: int
    enum_labels: str | None  # labels of an enum type (or of an enum array's element), comma-separated
    domain: bool = False  # the column's type is a domain (base_type_name and type_modifier are its base's)


@dataclass(frozen=True, slots=True)
class TableInfo:
    oid: int
    schema: str
    name: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...]
    replica_identity: str
    unique_index: tuple[str, ...] = ()  # the columns of the unique index Debezium keys a table without a primary key by

    @property
    def key(self) -> tuple[str, ...]:
        """The columns of the records' key: the primary key's, or without one the unique index's."""
        return self.primary_key or self.unique_index


# A domain stands for its base type with the domain's type modifier (Debezium maps a numeric(7,2) domain as
# numeric(7,2), measured): `r` follows a chain of domains (a domain over a domain) to the first base that is
# not one, keeping the outermost modifier given. Arrays of domains stay unknown types, as Debezium leaves them.
_RESOLVED = """
WITH RECURSIVE chain(base, typmod, depth) AS (
    SELECT t.oid, -1, 0
    UNION ALL
    SELECT d.typbasetype, CASE WHEN chain.typmod = -1 THEN d.typtypmod ELSE chain.typmod END, chain.depth + 1
    FROM chain JOIN pg_type d ON d.oid = chain.base AND d.typtype = 'd' WHERE chain.depth < 32
)
SELECT chain.base, chain.typmod FROM chain ORDER BY chain.depth DESC LIMIT 1
"""
_BASE_NAME = """CASE WHEN et.typtype = 'e' THEN CASE WHEN t.typcategory = 'A' THEN '_enum' ELSE 'enum' END
            ELSE bt.typname END"""
_JOINS = f"""CROSS JOIN LATERAL ({_RESOLVED}) r
JOIN pg_type bt ON bt.oid = r.base
LEFT JOIN pg_type et ON et.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE r.base END"""

_COLUMNS = f"""
SELECT a.attname, a.atttypid, CASE WHEN a.atttypmod = -1 THEN r.typmod ELSE a.atttypmod END,
       format_type(a.atttypid, a.atttypmod), {_BASE_NAME},
       a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attnum,
       (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = et.oid),
       t.typtype = 'd'
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
{_JOINS}
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

_TABLE = """
SELECT n.nspname, c.relname, c.relreplident,
       ARRAY(SELECT a.attname FROM pg_index i
             JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord) ON true
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE i.indrelid = c.oid AND i.indisprimary ORDER BY k.ord),
       (SELECT json_agg(u.cols ORDER BY u.kind, u.name) FROM (
            SELECT CASE WHEN i.indisclustered THEN 1 ELSE 3 END AS kind, ci.relname AS name,
                   ARRAY(SELECT trim(both '"' from pg_get_indexdef(i.indexrelid, k.ord::int, false))
                         FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord) ORDER BY k.ord) AS cols
            FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid
            WHERE i.indrelid = c.oid AND i.indisunique) u)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s
"""


_TYPE = f"""
SELECT {_BASE_NAME}, format_type(t.oid, %s::int),
       (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = et.oid),
       r.typmod
FROM pg_type t
{_JOINS}
WHERE t.oid = %s
"""


# Debezium's PostgresConnection leaves out a unique index with a column that is a function call or an expression
# (isTableUniqueIndexIncluded, these two patterns, matched in full); both need a parenthesis.
_FUNCTION = re.compile(r"[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)")
_EXPRESSION = re.compile(r"\(+(?:.+(?:[+ - * / < > = ~ ! @ # % ^ & | ` ?] ?.+)+)+\)")


def first_unique_index(indexes: Sequence[Sequence[str | None]]) -> tuple[str, ...]:
    """The columns Debezium keys a table without a primary key by: those of its first unique index, in the JDBC
    driver's order (a clustered index first, then by name; pgjdbc's getIndexInfo), whose columns are all plain
    (JdbcConnection.readTableUniqueIndices); none without one. Measured: a partial unique index counts, one on
    `lower(b)` does not."""
    for columns in indexes:
        if columns and all(c is not None and ("(" not in c or not (_FUNCTION.fullmatch(c) or _EXPRESSION.fullmatch(c)))
                           for c in columns):
            return tuple(c for c in columns if c is not None)
    return ()


class Catalog:
    """Reads table metadata on its own regular connection."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    @property
    def server_version(self) -> int:
        """server_version_num."""
        return self.conn.info.server_version

    def table(self, oid: int) -> TableInfo | None:
        row = self.conn.execute(_TABLE, (oid,)).fetchone()
        if row is None:
            return None
        schema, name, ident, pk, unique = row
        cols = tuple(ColumnInfo(*r) for r in self.conn.execute(_COLUMNS, (oid,)).fetchall())
        return TableInfo(oid, schema, name, cols, tuple(pk), ident, first_unique_index(unique or ()))

    def type_of(self, type_oid: int, type_modifier: int) -> tuple[str, str, str | None, int]:
        """(base type name as in ColumnInfo, format_type text, enum labels, type modifier: a domain's when the
        column has none) for a type oid: for columns the current catalog no longer has (dropped or retyped
        after the change was written)."""
        row = self.conn.execute(_TYPE, (type_modifier, type_oid)).fetchone()
        if row is None:
            return "", "", None, type_modifier
        return row[0], row[1], row[2], type_modifier if type_modifier != -1 else row[3]

    def table_oid(self, schema: str, name: str) -> int | None:
        row = self.conn.execute(
            "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = %s", (schema, name)).fetchone()
        return int(row[0]) if row else None

    def close(self) -> None:
        self.conn.close()
