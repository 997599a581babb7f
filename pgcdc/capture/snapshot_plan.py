"""What an initial snapshot reads: tables in order, each split into primary-key ranges (chunks).

A chunk is `lo < (pk) <= hi` in the primary key's btree order, bounds kept as the columns' output-function
text and cast back with the column's type, so a bound survives a restart (it is stored in the offsets) and
compares exactly as the index does. Row-constructor comparisons `(a, b) > (x, y)` use the primary key
index for composite keys too. Tables without a primary key and tables with a
`snapshot.select.statement.overrides` statement are read whole, in one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from pgcdc.capture.snapshot_records import TableRecords
from pgcdc.envelope.table import TableEvents


@dataclass
class TablePlan:
    schema: str
    table: str
    build: Callable[[], TableEvents]
    pk: tuple[str, ...] = ()  # primary key columns, in index order
    pk_types: tuple[str, ...] = ()  # format_type() of each, to cast bounds back
    # format_type() of each one's base type where it is a domain (through domains over domains), else as
    # pk_types: the type of the value JDBC reads, whose Java text notifications write (notifications/snapshots.py)
    pk_value_types: tuple[str, ...] = ()
    override: str | None = None  # snapshot.select.statement.overrides.<schema>.<table>
    after: tuple[str, ...] | None = None  # resume: rows up to this key were emitted already
    estimate: int = 0  # pg_class.reltuples (approximate rows), for progress and ETA
    first: bool = False  # the first table of the whole snapshot (Debezium's `first` marker)
    events: TableEvents | None = field(default=None, repr=False)
    records: TableRecords | None = field(default=None, repr=False)
    pk_index: tuple[int, ...] | None = None  # the primary key's positions in `events.names`, when chunked

    @property
    def name(self) -> tuple[str, str]:
        return (self.schema, self.table)

    @property
    def chunked(self) -> bool:
        return bool(self.pk) and self.override is None


@dataclass(frozen=True, slots=True)
class Chunk:
    plan: TablePlan
    index: int
    lo: tuple[str, ...] | None  # exclusive
    hi: tuple[str, ...] | None  # inclusive; None = to the end
    last: bool  # the table's last chunk


def describe(conn: psycopg.Connection, plan: TablePlan) -> None:
    """Fill in the primary key (with types) and the row estimate of a table."""
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typtype = 'd' FROM pg_index i "
        "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true "
        "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
        "JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE i.indrelid = %s::regclass AND i.indisprimary ORDER BY k.n",
        (sql.Identifier(plan.schema, plan.table).as_string(conn),),
    ).fetchall()
    plan.pk = tuple(r[0] for r in rows)
    plan.pk_types = tuple(r[1] for r in rows)
    plan.pk_value_types = value_types(conn, plan.pk_types) if any(r[2] for r in rows) else plan.pk_types
    est = conn.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                       (sql.Identifier(plan.schema, plan.table).as_string(conn),)).fetchone()
    plan.estimate = max(int(est[0]), 0) if est else 0


def row_counts(conn: psycopg.Connection, plans: list[TablePlan]) -> dict[int, int]:
    """Debezium's chunked snapshot's row counts (rowCountForTableChunked): an exact `SELECT COUNT(1)` of each
    table in the snapshot's transaction, the whole table even with a select override; by `id` of the plan."""
    counts = {}
    for plan in plans:
        row = conn.execute(sql.SQL("SELECT COUNT(1) FROM {}").format(sql.Identifier(plan.schema, plan.table))
                           ).fetchone()
        counts[id(plan)] = int(row[0]) if row else 0
    return counts


def sort_by_row_count(plans: list[TablePlan], counts: dict[int, int], order: str) -> list[TablePlan]:
    """snapshot.tables.order.by.row.count on Debezium's chunked snapshot: a stable sort by `row_counts`, so
    tables of equal size keep their order (RelationalSnapshotChangeEventSource)."""
    sign = 1 if order == "ascending" else -1
    return sorted(plans, key=lambda p: sign * counts[id(p)])


def _key(plan: TablePlan) -> sql.Composable:
    return sql.SQL("({})").format(sql.SQL(", ").join(sql.Identifier(c) for c in plan.pk))


def _bound(plan: TablePlan, values: tuple[str, ...]) -> sql.Composable:
    return sql.SQL("({})").format(sql.SQL(", ").join(
        sql.SQL("{}::{}").format(sql.Literal(v), sql.SQL(t)) for v, t in zip(values, plan.pk_types, strict=True)))


def _where(plan: TablePlan, lo: tuple[str, ...] | None, hi: tuple[str, ...] | None) -> sql.Composable:
    parts: list[sql.Composable] = []
    if lo is not None:
        parts.append(sql.SQL("{} > {}").format(_key(plan), _bound(plan, lo)))
    if hi is not None:
        parts.append(sql.SQL("{} <= {}").format(_key(plan), _bound(plan, hi)))
    return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(parts) if parts else sql.SQL("")


def split_points(conn: psycopg.Connection, plan: TablePlan, chunk_rows: int) -> list[tuple[str, ...]]:
    """Keys that end each full chunk of `chunk_rows` rows after `plan.after`: one scan of the key index."""
    if not plan.chunked or (plan.estimate and plan.estimate < chunk_rows and plan.after is None):
        return []
    key_cols = sql.SQL(", ").join(sql.Identifier(c) for c in plan.pk)
    text_cols = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) for c in plan.pk)
    query = sql.SQL(
        "SELECT {text} FROM (SELECT {cols}, row_number() OVER (ORDER BY {cols}) AS pgcdc_rn FROM {table}{where}) s "
        "WHERE pgcdc_rn % {n} = 0 ORDER BY pgcdc_rn"
    ).format(text=text_cols, cols=key_cols, table=sql.Identifier(plan.schema, plan.table),
             where=_where(plan, plan.after, None), n=sql.Literal(chunk_rows))
    return [tuple(r) for r in conn.execute(query).fetchall()]


def chunks(plan: TablePlan, points: list[tuple[str, ...]]) -> Iterator[Chunk]:
    lo = plan.after
    for i, hi in enumerate(points):
        yield Chunk(plan, i, lo, hi, False)
        lo = hi
    yield Chunk(plan, len(points), lo, None, True)


def copy_query(chunk: Chunk, columns: tuple[str, ...]) -> sql.Composable:
    """COPY … TO STDOUT of one chunk: output-function text, as pgoutput sends it, in primary key order."""
    plan = chunk.plan
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    if plan.override is not None:  # the user's statement; columns picked by name so the order is the table's
        inner = sql.SQL("SELECT {} FROM ({}) AS pgcdc_override").format(cols, sql.SQL(plan.override))  # type: ignore[arg-type]
    elif plan.pk:
        inner = sql.SQL("SELECT {} FROM {}{} ORDER BY {}").format(
            cols, sql.Identifier(plan.schema, plan.table), _where(plan, chunk.lo, chunk.hi),
            sql.SQL(", ").join(sql.Identifier(c) for c in plan.pk))
    else:
        inner = sql.SQL("SELECT {} FROM {}").format(cols, sql.Identifier(plan.schema, plan.table))
    return sql.SQL("COPY ({}) TO STDOUT").format(inner)


def value_types(conn: psycopg.Connection, types: tuple[str, ...]) -> tuple[str, ...]:
    """`types` (format_type() texts), a domain's as its base type's (through domains over domains)."""
    out = []
    for type_name in types:
        row = conn.execute(
            "WITH RECURSIVE b(oid, typmod, depth) AS (SELECT %s::regtype::oid, -1, 0 UNION ALL "
            "SELECT t.typbasetype, t.typtypmod, b.depth + 1 FROM pg_type t JOIN b ON t.oid = b.oid "
            "WHERE t.typtype = 'd') SELECT format_type(oid, NULLIF(typmod, -1)), depth FROM b "
            "ORDER BY depth DESC LIMIT 1", (type_name,)).fetchone()
        out.append(str(row[0]) if row is not None and row[1] > 0 else type_name)
    return tuple(out)
