"""Compare a target table (Parquet or Delta written by pgcdc.spark) with its source table in PostgreSQL.

No Spark needed: the target is read with pyarrow/deltalake, PostgreSQL with psycopg. Values are brought to one
canonical form per PostgreSQL type (a table, keyed by pg_type.typname) and hashed per row; the report names
the keys missing on either side and, for rows that differ, the columns. `pgcdc verify` prints it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgcdc.errors import PgcdcError
from pgcdc.pgtypes.registry import _DROPPED_ARRAYS
from pgcdc.source.catalog import Catalog
from pgcdc.spark.canon import AS_JSON, AS_NUMERIC, AS_TEXT, Canon, Unrepresentable, _canon_for, integer_temporal

POS = "__pgcdc_pos"
DELETED = "__pgcdc_deleted"
UNREPRESENTABLE = "_pgcdc_unrepresentable"  # pgcdc.spark.changes.UNREPRESENTABLE (no Spark import here)
STATE = "_pgcdc_state.json"


class VerifyError(PgcdcError):
    """The comparison itself could not be made (no key, unreadable target, a value of an unknown form)."""


# Columns Debezium never carries (left out of schema and values), and columns whose values it always
# writes null (bit(n)[]: measured, see pgcdc.pgtypes.array_columns): verify names them, compares nothing.
NOT_CARRIED = _DROPPED_ARRAYS
ALWAYS_NULL = frozenset({"_bit"})


@dataclass
class Column:
    name: str
    typname: str
    typtype: str
    canon: Canon
    precision: int = -1  # a time or timestamp column's (pg_attribute.atttypmod, a domain's typtypmod)


@dataclass
class Report:
    table: str
    source_rows: int = 0
    target_rows: int = 0
    missing: list[Any] = field(default_factory=list)  # keys in PostgreSQL, not in the target
    extra: list[Any] = field(default_factory=list)  # keys in the target, not in PostgreSQL
    different: list[tuple[Any, list[str]]] = field(default_factory=list)  # key, differing columns
    # key, columns: rows whose other columns are equal and these hold values Spark cannot (the target
    # names them in _pgcdc_unrepresentable, or has null for a value no event can carry)
    unrepresentable: list[tuple[Any, list[str]]] = field(default_factory=list)
    columns_missing: list[str] = field(default_factory=list)
    columns_extra: list[str] = field(default_factory=list)
    not_carried: list[str] = field(default_factory=list)  # columns Debezium leaves out or always nulls

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.different or self.columns_missing or self.columns_extra)

    def text(self, limit: int = 20) -> str:
        lines = [f"{self.table}: PostgreSQL {self.source_rows} rows, target {self.target_rows} rows: "
                 + ("identical" if self.ok else "DIFFERENT")]
        if self.unrepresentable:
            cols = sorted({c for _, cs in self.unrepresentable for c in cs})
            lines.append(f"  {len(self.unrepresentable)} rows with values unrepresentable in Spark "
                         f"({', '.join(cols)}); their other columns are equal")
        if self.not_carried:
            lines.append(f"  not compared, Debezium does not carry them: {', '.join(self.not_carried)}")
        if self.columns_missing:
            lines.append(f"  columns missing in the target: {', '.join(self.columns_missing)}")
        if self.columns_extra:
            lines.append(f"  columns only in the target: {', '.join(self.columns_extra)}")
        for label, keys in (("missing in the target", self.missing), ("only in the target", self.extra)):
            if keys:
                lines.append(f"  {len(keys)} rows {label}: {keys[:limit]}")
        for key, cols in self.different[:limit]:
            lines.append(f"  key {key}: {', '.join(cols)} differ")
        if len(self.different) > limit:
            lines.append(f"  ... {len(self.different) - limit} more differing rows")
        return "\n".join(lines)


def _columns(conn: Any, table: str) -> tuple[list[Column], list[str]]:
    rows = conn.execute(
        "SELECT a.attname, t.typname, t.typtype, bt.typname, CASE WHEN a.atttypmod >= 0 THEN a.atttypmod "
        "ELSE t.typtypmod END FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "LEFT JOIN pg_type bt ON bt.oid = t.typbasetype "
        "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (table,)).fetchall()
    cols = [Column(n, base or typ, tt, _canon_for(base or typ, tt), mod) for n, typ, tt, base, mod in rows]
    # The records' key: the primary key, or the unique index a table without one is keyed by (source/catalog.py).
    row = conn.execute("SELECT %s::regclass::oid", (table,)).fetchone()
    info = Catalog(conn).table(int(row[0]))
    if info is None:
        return cols, []
    nullable = [c.name for c in info.columns if c.name in info.key and not c.not_null]
    if nullable:
        raise VerifyError(f"{table} is keyed by a unique index whose columns allow NULL ({', '.join(nullable)}): "
                          "rows with NULL there cannot be matched by it")
    return cols, list(info.key)


def _read_arrow(path: str | Path, fmt: str) -> Any:
    path = Path(path)
    if fmt == "delta":
        from deltalake import DeltaTable

        return DeltaTable(str(path)).to_pyarrow_table()
    import pyarrow.parquet as pq

    version = json.loads((path / STATE).read_text())["version"]
    return pq.read_table(str(path / f"v{version}"))


def _rows(table: Any) -> list[dict[str, Any]]:
    """Current rows without the position and delete columns (the unrepresentable list stays)."""
    return [{k: v for k, v in r.items() if k not in (POS, DELETED)} for r in table.to_pylist() if not r.get(DELETED)]


def read_target(path: str | Path, fmt: str) -> list[dict[str, Any]]:
    """The current rows of a target table as Python dicts (delete markers dropped)."""
    return _rows(_read_arrow(path, fmt))


def _integer_bits(arrow_type: Any) -> int:
    """The width of an integer column (or of a list's integers); 0: not integers."""
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _integer_bits(arrow_type.value_type)
    return int(arrow_type.bit_width) if pa.types.is_integer(arrow_type) else 0


def _canon(c: Column, string_target: bool, bits: int) -> Canon:
    """The column's canon, taking the target's integers for dates, times and timestamps where it has them."""
    canon = _canon_for(c.typname, c.typtype, string_target)
    array = c.typname.startswith("_")
    convert = integer_temporal(c.typname[1:] if array else c.typname, c.precision, bits) if bits else None
    if convert is None:
        return canon
    if array:
        return lambda v: canon([None if x is None else convert(x) for x in v])
    return lambda v: canon(convert(v))


def _is_string(arrow_type: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _is_string(arrow_type.value_type)
    return bool(pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
                or pa.types.is_string_view(arrow_type))


def _digest(values: list[Any]) -> str:
    return hashlib.sha256(repr(values).encode()).hexdigest()


def _select(c: Column) -> str:
    name = '"' + c.name.replace('"', '""') + '"'
    base = c.typname[1:] if c.typname.startswith("_") else c.typname
    if base in AS_JSON:
        return f"{name}::json::text" if base == c.typname else f"{name}::json[]::text[]"
    if base in AS_NUMERIC:
        return f"{name}::numeric" if base == c.typname else f"{name}::numeric[]"
    if base in AS_TEXT or c.typtype == "e":
        return f"{name}::text" if base == c.typname else f"{name}::text[]"
    return name


def _tolerant_loaders(conn: Any) -> None:
    """Dates and timestamps Python cannot hold (infinity, BC, years past 9999) load as Unrepresentable
    text instead of failing the query; arrays of them use the same loaders."""
    from psycopg import DataError
    from psycopg.types import datetime as pdt

    for typname, base in (("date", pdt.DateLoader), ("timestamp", pdt.TimestampLoader),
                          ("timestamptz", pdt.TimestamptzLoader)):

        class Tolerant(base):  # type: ignore[valid-type, misc]
            def load(self, data: Any) -> Any:
                try:
                    return super().load(data)
                except (DataError, ValueError, OverflowError):
                    return Unrepresentable(bytes(data).decode())

        conn.adapters.register_loader(typname, Tolerant)


def _compare(common: list[Column], a: list[Any], b: list[Any], listed: set[str]) -> tuple[list[str], list[str]]:
    """One row present on both sides: the columns that differ, and those that hold a value Spark cannot
    (named by the target, or null there for a value no event can carry)."""
    if _digest(a) == _digest(b):
        return [], []
    diff, unrep = [], []
    for c, x, y in zip(common, a, b):
        if c.name in listed or (y is None and _unrepresentable(x)) or _both_unrepresentable(x, y):
            unrep.append(c.name)
        elif x != y:
            diff.append(c.name)
    return diff, unrep


def _sorted(keys: Any) -> list[Any]:
    try:
        return sorted(keys)
    except TypeError:  # a null or mixed-type key column
        return sorted(keys, key=repr)


def _both_unrepresentable(x: Any, y: Any) -> bool:
    """A value Python cannot hold on both sides (a target's integer date beyond Python's years: Protobuf lands
    Debezium's numbers), in an array with every other element equal."""
    if isinstance(x, Unrepresentable):
        return isinstance(y, Unrepresentable)
    if not (isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and _unrepresentable(x)):
        return False
    return all(a == b or (isinstance(a, Unrepresentable) and isinstance(b, Unrepresentable)) for a, b in zip(x, y))


def _unrepresentable(v: Any) -> bool:
    if isinstance(v, Unrepresentable):
        return True
    return isinstance(v, list) and any(isinstance(x, Unrepresentable) for x in v)


def verify(dsn: str, table: str, target: str | Path, fmt: str = "parquet") -> Report:
    """Compare PostgreSQL's `table` (schema.name) with the target table at `target`."""
    import psycopg

    report = Report(table)
    try:
        arrow = _read_arrow(target, fmt)
    except (OSError, ValueError, KeyError) as exc:
        raise VerifyError(f"cannot read the target of {table} at {target} ({fmt}): {exc}") from exc
    string_target = {f.name: _is_string(f.type) for f in arrow.schema}
    with psycopg.connect(dsn) as conn:
        conn.execute("SET IntervalStyle = iso_8601")
        conn.execute("SET TimeZone = 'UTC'")  # as pgcdc reads: tstzrange text is in the session's zone
        conn.execute("SET extra_float_digits = 3")  # every digit of a float, on PostgreSQL 11 too
        conn.execute("SET DateStyle = ISO")  # the layouts of the texts the loaders read, whatever the database's
        conn.execute("SET lc_monetary = 'C'")
        _tolerant_loaders(conn)
        cols, keys = _columns(conn, table)
        if not keys:
            raise VerifyError(f"{table} has no primary key or unique index: nothing to match rows by")
        report.not_carried = [c.name for c in cols if c.typname in NOT_CARRIED | ALWAYS_NULL]
        bits = {f.name: _integer_bits(f.type) for f in arrow.schema}
        cols = [Column(c.name, c.typname, c.typtype,
                       _canon(c, string_target.get(c.name, False), bits.get(c.name, 0)), c.precision)
                for c in cols if c.typname not in NOT_CARRIED | ALWAYS_NULL]
        source = conn.execute(f"SELECT {', '.join(_select(c) for c in cols)} FROM {table}").fetchall()
    names = [c.name for c in cols]
    target_rows = _rows(arrow)
    have = [n for n in arrow.schema.names if n not in (POS, DELETED, UNREPRESENTABLE, *report.not_carried)]
    report.columns_missing = [n for n in names if n not in have]
    report.columns_extra = [n for n in have if n not in names]
    common = [c for c in cols if c.name in have]
    key_at = [[c.name for c in common].index(k) for k in keys if k in have]

    def canon_row(get: Callable[[str], Any]) -> tuple[Any, list[Any]]:
        values = []
        for c in common:
            v = get(c.name)
            try:
                values.append(None if v is None else c.canon(v))
            except (ValueError, TypeError, ArithmeticError, AttributeError) as exc:
                raise VerifyError(f"{table}.{c.name} ({c.typname}): cannot compare value {v!r}: {exc}") from exc
        return tuple(values[i] for i in key_at), values

    src = {}
    for row in source:
        key, values = canon_row(dict(zip(names, row)).__getitem__)
        src[key] = values
    dst, listed = {}, {}
    for row in target_rows:
        key, values = canon_row(row.get)
        dst[key] = values
        listed[key] = set(row.get(UNREPRESENTABLE) or ())
    report.source_rows, report.target_rows = len(src), len(dst)
    report.missing = _sorted(k for k in src if k not in dst)
    report.extra = _sorted(k for k in dst if k not in src)
    for key in _sorted(k for k in src if k in dst):
        diff, unrep = _compare(common, src[key], dst[key], listed[key])
        if diff:
            report.different.append((key, diff))
        elif unrep:
            report.unrepresentable.append((key, unrep))
    return report
