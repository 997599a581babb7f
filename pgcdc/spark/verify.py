"""Compare a target table (Parquet or Delta written by pgcdc.spark) with its source table in PostgreSQL.

No Spark needed: the target is read with pyarrow/deltalake, PostgreSQL with psycopg. Values are brought to one
canonical form per PostgreSQL type (a table, keyed by pg_type.typname) and hashed per row; the report names
the keys missing on either side and, for rows that differ, the columns. `pgcdc verify` prints it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
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


_ISO_DURATION = re.compile(r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?"
                           r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?")
_US_PER_MONTH = 2_629_800_000_000  # 30.4375 days: Debezium's MicroDuration month


def _interval_parts(v: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of an ISO-8601 duration: PostgreSQL's IntervalStyle iso_8601 output
    ('P1Y2M3DT4H5M6.78S', 'P-1DT-1S') and Debezium's interval.handling.mode=string ('P0Y0M1DT0H0M-1S')."""
    m = _ISO_DURATION.fullmatch(v)
    if m is None:
        raise ValueError(f"not an ISO-8601 duration: {v!r}")
    y, mo, w, d, h, mi, s = (x or "0" for x in m.groups())
    micros = (int(h) * 3600 + int(mi) * 60) * 1_000_000 + int(Decimal(s) * 1_000_000)
    return int(y) * 12 + int(mo), int(w) * 7 + int(d), micros


def _interval_micros(v: Any) -> Any:
    """interval.handling.mode=numeric (io.debezium.time.MicroDuration): one number of microseconds."""
    if isinstance(v, str):
        months, days, micros = _interval_parts(v)
        return months * _US_PER_MONTH + days * 86_400_000_000 + micros
    return int(v)


def _interval_text(v: Any) -> Any:
    """interval.handling.mode=string: months, days and time stay apart (1 mon is not 30 days 10:30)."""
    return _interval_parts(v)


def _ewkb(v: Any) -> Any:
    """PostGIS geometry/geography: PostgreSQL's hex EWKB text, or the target's struct(wkb, srid). Debezium
    keeps the EWKB bytes and copies out its SRID, null when the EWKB has none (flag 0x20000000)."""
    if isinstance(v, dict):
        return bytes(v["wkb"]).hex(), v.get("srid")
    raw = bytes.fromhex(v)
    order = "<" if raw[0] == 1 else ">"
    (kind,) = struct.unpack_from(order + "I", raw, 1)
    srid = struct.unpack_from(order + "i", raw, 5)[0] if kind & 0x20000000 else None
    return raw.hex(), srid


def _string_map(v: Any) -> Any:
    """hstore: PostgreSQL's hstore as JSON text, the target's JSON string (hstore.handling.mode=json) or map
    (mode map, which Arrow gives as (key, value) pairs)."""
    if isinstance(v, str | bytes):
        v = json.loads(v)
    elif isinstance(v, list):
        v = dict(v)
    return json.dumps(v, sort_keys=True)


CANON: dict[str, Canon] = {
    "float4": _f32, "float8": _f64, "numeric": _decimal, "money": _decimal,
    "time": _micros_of_day, "timestamp": _iso, "timestamptz": _timestamptz, "date": _iso,
    "uuid": str, "json": _json, "jsonb": _json, "bytea": _bytes, "interval": _interval_micros,
    "geometry": _ewkb, "geography": _ewkb, "hstore": _string_map,
}
# The canonical form when the target column is a string, where it differs from the one above.
CANON_FOR_STRING_TARGET: dict[str, Canon] = {"interval": _interval_text}
# As text in the query (psycopg would parse them into other Python types than the target holds); intervals
# in IntervalStyle iso_8601, which keeps months, days and time apart.
AS_TEXT = frozenset({"json", "jsonb", "xml", "uuid", "money", "inet", "cidr", "macaddr", "tsvector", "ltree",
                     "interval", "geometry", "geography"})
# As JSON text: hstore's own cast to json (the hstore extension defines it).
AS_JSON = frozenset({"hstore"})


def _canon_for(typname: str, typtype: str, string_target: bool = False) -> Canon:
    if typname.startswith("_"):
        element = _canon_for(typname[1:], "b", string_target)
        return lambda v: [None if x is None else element(x) for x in v]
    if typtype == "e":
        return str
    if string_target and typname in CANON_FOR_STRING_TARGET:
        return CANON_FOR_STRING_TARGET[typname]
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


def _read_arrow(path: str | Path, fmt: str) -> Any:
    path = Path(path)
    if fmt == "delta":
        from deltalake import DeltaTable

        return DeltaTable(str(path)).to_pyarrow_table()
    import pyarrow.parquet as pq

    version = json.loads((path / STATE).read_text())["version"]
    return pq.read_table(str(path / f"v{version}"))


def _rows(table: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in (POS, DELETED)} for r in table.to_pylist() if not r.get(DELETED)]


def read_target(path: str | Path, fmt: str) -> list[dict[str, Any]]:
    """The current rows of a target table as Python dicts (delete markers dropped)."""
    return _rows(_read_arrow(path, fmt))


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
    if base in AS_TEXT or c.typtype == "e":
        return f"{name}::text" if base == c.typname else f"{name}::text[]"
    return name


def verify(dsn: str, table: str, target: str | Path, fmt: str = "parquet") -> Report:
    """Compare PostgreSQL's `table` (schema.name) with the target table at `target`."""
    import psycopg

    report = Report(table)
    arrow = _read_arrow(target, fmt)
    string_target = {f.name: _is_string(f.type) for f in arrow.schema}
    with psycopg.connect(dsn) as conn:
        conn.execute("SET IntervalStyle = iso_8601")
        cols, keys = _columns(conn, table)
        cols = [Column(c.name, c.typname, c.typtype, _canon_for(c.typname, c.typtype, string_target.get(c.name, False)))
                for c in cols]
        source = conn.execute(f"SELECT {', '.join(_select(c) for c in cols)} FROM {table}").fetchall()
    if not keys:
        raise ValueError(f"{table} has no primary key: nothing to match rows by")
    names = [c.name for c in cols]
    target_rows = _rows(arrow)
    have = [n for n in arrow.schema.names if n not in (POS, DELETED)]
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
