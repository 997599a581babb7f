"""A record key that does not name one row: a NULL in a key column.

A primary key's columns are never NULL. A table without one is keyed (as Debezium keys it) by a unique index,
and a unique index lets several rows hold NULL in its columns: their records share a key, and applying them by
key would land those rows as one. So a record whose key has a NULL in an optional key column is quarantined with
the column's name, never merged. `message.key.columns` naming a nullable column is treated the same way."""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F


def null_key_error(key_schema: dict[str, Any], key_values: list[Column], error: Column) -> Column:
    """`error` (a decoding error: null when fine), or else the reason a record's key names no single row."""
    reasons = [F.when(value.isNull(), F.lit(f"key column {field['field']} is null: a unique index that allows NULL "
                                              "does not name one row (the table has no primary key)"))
               for field, value in zip(key_schema.get("fields") or [], key_values) if field.get("optional")]
    return F.coalesce(error, *reasons) if reasons else error


def decode_key(codec: Any, key_schema: str, key_text: Column | None) -> tuple[list[Column], Column]:
    """The key columns of a version's records (`codec`: its key schema's row codec) and their error: a decoding
    error, or a NULL in an optional key column."""
    values, error = codec.decode(F.col("kp.payload"), key_text)
    return values, null_key_error(json.loads(key_schema), values, error)
