"""Compare a target table (Parquet or Delta written by pgcdc.spark) with its source table in PostgreSQL.

No Spark needed: the target is read with pyarrow/deltalake, PostgreSQL with psycopg. Values are brought to one
canonical form per PostgreSQL type (a table, keyed by pg_type.typname) and hashed per row; the report names
the keys missing on either side and, for rows that differ, the columns. `pgcdc verify` prints it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

POS = "__pgcdc_pos"
DELETED = "__pgcdc_deleted"
STATE = "_pgcdc_state.json"

Canon = Callable[[Any], Any]


def _f32(v: Any) -> Any:
    return repr(struct.unpack("f", struct.pack("f", float(v)))[0])


def _f64(v: Any) -> Any:
    return repr(float(v))


def _decimal(v: Any) -> Any:
    d = Decimal(str(v))
    return "0" if d == 0 else str(d.normalize())


def _micros_of_day(v: Any) -> Any:
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, str):  # time_as="string": HH:MM:SS.ffffff
        return _micros_of_day(dt.time.fromisoformat(v))
    return int(v)


def _timestamptz(v: Any) -> Any:
    if v.tzinfo is None:  # a Parquet reader without the UTC flag: the instant is UTC
        v = v.replace(tzinfo=dt.UTC)
    return v.astimezone(dt.UTC).isoformat()


def _iso(v: Any) -> Any:
    return v.isoformat()


def _bytes(v: Any) -> Any:
    return bytes(v).hex()


def _json(v: Any) -> Any:
    return json.dumps(json.loads(v) if isinstance(v, str | bytes) else v, sort_keys=True)


def _interval(v: Any) -> Any:
    if isinstance(v, dt.timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    return int(v)


CANON: dict[str, Canon] = {
    "float4": _f32, "float8": _f64, "numeric": _decimal, "money": _decimal,
    "time": _micros_of_day, "timestamp": _iso, "timestamptz": _timestamptz, "date": _iso,
    "uuid": str, "json": _json, "jsonb": _json, "bytea": _bytes, "interval": _interval,
}
# As text in the query (psycopg would parse them into other Python types than the target holds).
AS_TEXT = frozenset({"json", "jsonb", "xml", "uuid", "money", "inet", "cidr", "macaddr", "tsvector", "ltree"})


def _canon_for(typname: str, typtype: str) -> Canon:
    if typname.startswith("_"):
        element = _canon_for(typname[1:], "b")
        return lambda v: [None if x is None else element(x) for x in v]
    if typtype == "e":
        return str
    return CANON.get(typname, lambda v: v)


@dataclass
class Column:
    name: str
    typname: str
    typtype: str
    canon: Canon


@dataclass
class Report:
    table: str
    source_rows: int = 0
    target_rows: int = 0
    missing: list[Any] = field(default_factory=list)  # keys in PostgreSQL, not in the target
    extra: list[Any] = field(default_factory=list)  # keys in the target, not in PostgreSQL
    different: list[tuple[Any, list[str]]] = field(default_factory=list)  # key, differing columns
    columns_missing: list[str] = field(default_factory=list)
    columns_extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.different or self.columns_missing or self.columns_extra)

    def text(self, limit: int = 20) -> str:
        lines = [f"{self.table}: PostgreSQL {self.source_rows} rows, target {self.target_rows} rows: "
                 + ("identical" if self.ok else "DIFFERENT")]
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
        "SELECT a.attname, t.typname, t.typtype, bt.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "LEFT JOIN pg_type bt ON bt.oid = t.typbasetype "
        "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (table,)).fetchall()
    cols = [Column(n, base or typ, tt, _canon_for(base or typ, tt)) for n, typ, tt, base in rows]
    keys = [r[0] for r in conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indrelid = %s::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)",
        (table,)).fetchall()]
    return cols, keys


def read_target(path: str | Path, fmt: str) -> list[dict[str, Any]]:
    """The current rows of a target table as Python dicts (delete markers dropped)."""
    path = Path(path)
    if fmt == "delta":
        from deltalake import DeltaTable

        table = DeltaTable(str(path)).to_pyarrow_table()
    else:
        import pyarrow.parquet as pq

        version = json.loads((path / STATE).read_text())["version"]
        table = pq.read_table(str(path / f"v{version}"))
    rows = table.to_pylist()
    return [{k: v for k, v in r.items() if k not in (POS, DELETED)} for r in rows if not r.get(DELETED)]


def _digest(values: list[Any]) -> str:
    return hashlib.sha256(repr(values).encode()).hexdigest()


def verify(dsn: str, table: str, target: str | Path, fmt: str = "parquet") -> Report:
    """Compare PostgreSQL's `table` (schema.name) with the target table at `target`."""
    import psycopg

    report = Report(table)
    with psycopg.connect(dsn) as conn:
        cols, keys = _columns(conn, table)
        select = ", ".join(f'"{c.name}"::text' if c.typname in AS_TEXT or c.typtype == "e" else f'"{c.name}"'
                           for c in cols)
        source = conn.execute(f"SELECT {select} FROM {table}").fetchall()
    if not keys:
        raise ValueError(f"{table} has no primary key: nothing to match rows by")
    names = [c.name for c in cols]
    target_rows = read_target(target, fmt)
    have = list(target_rows[0]) if target_rows else names
    report.columns_missing = [n for n in names if n not in have]
    report.columns_extra = [n for n in have if n not in names]
    common = [c for c in cols if c.name in have]

    def canon_row(get: Callable[[str], Any]) -> tuple[Any, list[Any]]:
        values = [None if get(c.name) is None else c.canon(get(c.name)) for c in common]
        key = tuple(values[[c.name for c in common].index(k)] for k in keys if k in have)
        return key, values

    src = {}
    for row in source:
        by_name = dict(zip(names, row))
        key, values = canon_row(by_name.__getitem__)
        src[key] = values
    dst = {}
    for row in target_rows:
        key, values = canon_row(row.get)
        dst[key] = values
    report.source_rows, report.target_rows = len(src), len(dst)
    report.missing = sorted(k for k in src if k not in dst)
    report.extra = sorted(k for k in dst if k not in src)
    for key in sorted(k for k in src if k in dst):
        a, b = src[key], dst[key]
        if _digest(a) != _digest(b):
            report.different.append((key, [c.name for c, x, y in zip(common, a, b) if x != y]))
    return report
