"""column.propagate.source.type / datatype.propagate.source.type: the source column's type in the schema.

Debezium adds `__debezium.source.column.{type,length,scale,name}` parameters, with length and scale as
PostgreSQL's JDBC driver reports them (COLUMN_SIZE, DECIMAL_DIGITS), so the table below follows pgjdbc.
"""

from __future__ import annotations

import re
from typing import Any

_UNBOUNDED = 2147483647
# typname -> (length, scale) when the type modifier does not decide them.
_SIZES: dict[str, tuple[int, int]] = {
    "int2": (5, 0), "int4": (10, 0), "int8": (19, 0), "oid": (10, 0), "float4": (8, 8), "float8": (17, 17),
    "bool": (1, 0), "date": (13, 0), "time": (15, 6), "timetz": (21, 6), "timestamp": (29, 6),
    "timestamptz": (35, 6), "interval": (49, 6), "money": (_UNBOUNDED, 2), "uuid": (_UNBOUNDED, 0),
    "numeric": (131089, 0), "name": (_UNBOUNDED, 0), "char": (1, 0),
}


def length_scale(typname: str, typmod: int) -> tuple[int, int]:
    if typname.startswith("_"):  # arrays report their element's size
        return length_scale(typname[1:], typmod)
    if typname == "numeric" and typmod >= 4:
        return ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
    if typname in ("varchar", "bpchar") and typmod >= 4:
        return typmod - 4, 0
    if typname in ("bit", "varbit") and typmod > 0:
        return typmod, 0
    if typname in ("time", "timetz", "timestamp", "timestamptz") and typmod >= 0:
        base = _SIZES[typname][0]
        return base - (6 - typmod) - (1 if typmod == 0 else 0), typmod
    return _SIZES.get(typname, (_UNBOUNDED, 0))


def source_parameters(schema: str, table: str, column: str, typname: str, typmod: int,
                      columns: tuple[str, ...], datatypes: tuple[str, ...]) -> dict[str, str]:
    """The parameters to add to a column's schema, or {} when neither list matches it."""
    type_upper = typname.upper()
    wanted = any(re.fullmatch(p, f"{schema}.{table}.{column}") for p in columns) or any(
        re.fullmatch(p, f"{schema}.{table}.{type_upper}") for p in datatypes)
    if not wanted:
        return {}
    length, scale = length_scale(typname, typmod)
    return {"__debezium.source.column.type": type_upper, "__debezium.source.column.length": str(length),
            "__debezium.source.column.scale": str(scale), "__debezium.source.column.name": column}


def with_parameters(schema: dict[str, Any], extra: dict[str, str]) -> dict[str, Any]:
    if not extra:
        return schema
    return {**schema, "parameters": {**schema.get("parameters", {}), **extra}}
