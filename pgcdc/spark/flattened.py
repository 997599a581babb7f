"""Flattened records: the value io.debezium.transforms.ExtractNewRecordState writes instead of the envelope.

The transform replaces the envelope by its `after` row (its `before` row for a rewritten delete), keeps the
row's schema name (`<prefix>.<schema>.<table>.Value`) and appends what `add.fields` names (`__op`, `__lsn`,
`__source_ts_ms`, ...) and, in the rewrite modes, `__deleted` ("true" on deletes). So the form is told per
schema version by the schema's name, the test the transform itself makes on its input (an `.Envelope` is an
envelope); a `.Value` struct is a flattened row. Heartbeats and other records keep their own names and stay
on the envelope path, which quarantines them.

Applying them exactly needs what the envelope gives: the delete (`__deleted`), the change's LSN (`__lsn`, the
order that survives replays, docs/spark.md "Which event wins") and the operation (`__op`: a snapshot read and
a streamed change at the same LSN are told apart by it). A topic without them is refused when
DecodeOptions.exact is set: `refusal` says which are missing and which option gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pgcdc.spark.fieldcodec import DecodeOptions

ENVELOPE = ".Envelope"
ROW = ".Value"


@dataclass(frozen=True, slots=True)
class FlatShape:
    """One flattened value schema: the table's row and where the added fields are."""

    row: dict[str, Any]  # the row's Connect struct schema, added fields removed
    lsn: str | None
    op: str | None
    deleted: str | None


def is_flattened(value_schema: dict[str, Any]) -> bool:
    name = value_schema.get("name") or ""
    return value_schema.get("type") == "struct" and name.endswith(ROW)


def shape(value_schema: dict[str, Any], options: DecodeOptions) -> FlatShape:
    fields = list(value_schema.get("fields", []))
    # InsertField appends: the added fields are the trailing run of prefixed names (and `__deleted`, whose name
    # add.fields.prefix does not change), so a table column that starts with the prefix, anywhere but last,
    # stays a column.
    end = len(fields)
    while end and (fields[end - 1]["field"].startswith(options.added_prefix)
                   or fields[end - 1]["field"] == options.deleted_field):
        end -= 1
    added = {f["field"]: f for f in fields[end:]}
    lsn = next((n for n in options.lsn_fields if n in added and added[n].get("type") == "int64"), None)
    op = options.op_field if added.get(options.op_field, {}).get("type") == "string" else None
    deleted = options.deleted_field if added.get(options.deleted_field, {}).get("type") == "string" else None
    return FlatShape({**value_schema, "fields": fields[:end]}, lsn, op, deleted)


def refusal(topic: str, shapes: list[FlatShape], options: DecodeOptions) -> str | None:
    """The one line saying why this topic's flattened records cannot be applied exactly, or None. Every schema
    version counts: in the tombstone mode a delete's schema has none of the added fields."""
    missing = []
    if any(f.deleted is None for f in shapes):
        missing.append(f"{options.deleted_field} (delete.tombstone.handling.mode=rewrite: with drop deletes are "
                       "lost, with tombstone/delete-to-tombstone they carry no LSN)")
    if any(f.lsn is None for f in shapes):
        missing.append(f"{' or '.join(options.lsn_fields)} (lsn in add.fields: Kafka offsets alone are "
                       "broken by replays)")
    if any(f.op is None for f in shapes):
        missing.append(f"{options.op_field} (op in add.fields: tells a snapshot read from a change at its LSN)")
    if not missing:
        return None
    return (f"{topic}: flattened records (ExtractNewRecordState) cannot be applied exactly, missing "
            f"{'; '.join(missing)}; or pass DecodeOptions(exact=False) to apply them in Kafka offset order")


def probe_fields(options: DecodeOptions) -> str:
    """The payload fields the per-record probe reads besides the envelope's op and source.lsn."""
    names = [(options.op_field, "string"), *((n, "bigint") for n in options.lsn_fields),
             (options.deleted_field, "string")]
    return ", ".join(f"`{n}`: {t}" for n, t in dict(names).items())
