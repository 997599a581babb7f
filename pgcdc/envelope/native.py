"""A table's rows with values as the Avro writer takes them, for the Avro parts path (capture/events.py,
converters/avro_events.py): doubles and reals as Python floats, `numeric(p,s)` (decimal.handling.mode=precise)
and bytea (binary.handling.mode=bytes) as bytes.

JsonConverter's form holds a double as Java's text of it (Double/Float.toString, an `orjson.Fragment`), which
java_float.py computes digit by digit outside 10^-3..10^7 (on a table of doubles, most of a change event's
cost), and bytes as base64 text. Avro writes a double's bits and the bytes themselves, so a row going to Avro
needs only `float(text)` (for a real, the nearest float32, as Java's (float) gives) and the bytes. The converters
that have such a value say so (`Converter.native`: pgtypes/registry.py); `native_events(t)` is a copy of the
table's TableEvents whose row function uses them; everything else about the table (key, nulls, placeholders,
templates) is the original's.

Such rows must never be serialized as JSON (orjson writes NaN as null and refuses bytes): the copy is only used
where every event of the table goes to the Avro writer, never for a table with such a column in its key (the
key is written from the row), and `json_rows` gives an event that still takes the JSON path (a primary-key
change, with Debezium's key headers) its rows back in JsonConverter's form.
"""

from __future__ import annotations

from binascii import b2a_base64
from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.envelope.table import TableEvents, _row_function

class NativeEvents(TableEvents):
    """A TableEvents whose rows carry values as they are; `whole` is the table's own TableEvents."""

    def __init__(self, t: TableEvents, fns: list[Any], back: tuple[tuple[str, Callable[[Any], Any]], ...]) -> None:
        # (not TableEvents.__init__: everything is the table's, but the row function)
        self.__dict__.update(t.__dict__)
        self._row = _row_function(t.fields, fns, t.placeholders)
        self.whole = t
        self.back = back  # (field, to JsonConverter's form) per native column


def native_events(t: TableEvents) -> NativeEvents | None:
    """`t` with native rows, or None: no column with a native value, or one in the key."""
    found = [(i, conv.native) for i, conv in enumerate(t.converters)
             if conv.native is not None and conv.native[0] is conv.fn is t.fns[i]]  # not replaced by a rule
    if not found or any(i in t.key_index for i, _ in found):
        return None
    fns = list(t.fns)
    for i, (_, native, _) in found:
        fns[i] = native
    return NativeEvents(t, fns, tuple((t.fields[i], back) for i, (_, _, back) in found))


def json_rows(n: NativeEvents, *rows: dict[str, Any] | None) -> list[dict[str, Any] | None]:
    """Native rows of `n` in JsonConverter's form (new dicts; a null or a placeholder stays as it is)."""
    out: list[dict[str, Any] | None] = []
    for row in rows:
        if row is not None:
            row = dict(row)
            for field, back in n.back:
                v = row[field]
                if type(v) is float or type(v) is bytes:
                    row[field] = back(v)
        out.append(row)
    return out


def _as_json(v: Any) -> Any:
    if type(v) is bytes:
        return b2a_base64(v, newline=False).decode()  # base64 text, as the row's JsonConverter form holds it
    raise TypeError(f"Type is not JSON serializable: {type(v).__name__}")


def same_rows(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two rows of one table (JsonConverter's form, or native: bytes where that form has base64 text)
    serialize alike, as skip.messages.without.change compares an update's old and new rows."""
    return orjson.dumps(a, default=_as_json) == orjson.dumps(b, default=_as_json)
