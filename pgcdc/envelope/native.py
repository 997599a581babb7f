"""A table's rows with values as the Avro writer takes them, for the Avro parts path (capture/events.py,
converters/avro_events.py): doubles and reals as Python floats, `numeric(p,s)` (decimal.handling.mode=precise)
and bytea (binary.handling.mode=bytes) as bytes.

JsonConverter's form holds a double as Java's text of it (Double/Float.toString, an `orjson.Fragment`), which
java_float.py computes digit by digit outside 10^-3..10^7 (on a table of doubles, most of a change event's
cost), and bytes as base64 text. Avro writes a double's bits and the bytes themselves, so a row going to Avro
needs only `float(text)` (for a real, the nearest float32, as Java's (float) gives) and the bytes. The converters
that have such a value say so (`Converter.native`: pgtypes/registry.py); `native_events(t)` is a copy of the
table's TableEvents whose row function uses them, and whose values for a null, an absent column of a key-only
old row and an unchanged TOASTed value are native too (the bytes of the base64 text, the float of Java's text):
every value of such a column is then a float or bytes (or null), so a row whose other columns are plain is its
own Avro datum (converters/avro_rows.py). Everything else about the table (key, templates) is the original's.

Such rows must never be serialized as JSON (orjson writes NaN as null and refuses bytes): the copy is only used
where every event of the table goes to the Avro writer, never for a table with such a column in its key (the
key is written from the row), and `json_rows` gives an event that still takes the JSON path (a primary-key
change, with Debezium's key headers) its rows back in JsonConverter's form.
"""

from __future__ import annotations

from binascii import a2b_base64, b2a_base64
from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.envelope.table import TableEvents, _row_function
from pgcdc.pgtypes.java_float import to_float32

_FILLS = ("nulls", "absent", "placeholders")  # a TableEvents' values for a null, an absent column, unchanged TOAST

class NativeEvents(TableEvents):
    """A TableEvents whose rows carry values as they are; `whole` is the table's own TableEvents."""

    def __init__(self, t: TableEvents, fns: list[Any], back: tuple[tuple[str, Callable[[Any], Any]], ...],
                 fills: dict[str, tuple[Any, ...]]) -> None:
        # (not TableEvents.__init__: everything is the table's, but the row function and the fills)
        self.__dict__.update(t.__dict__)
        self.__dict__.update(fills)
        self._row = _row_function(t.fields, fns, self.placeholders, t.refused)
        self.native_fns = fns  # per column: text -> its value (native or JsonConverter's), as the row function
        self.whole = t
        self.back = back  # (field, to JsonConverter's form) per native column


def native_events(t: TableEvents) -> NativeEvents | None:
    """`t` with native rows, or None: no column with a native value, or one in the key."""
    found = [(i, conv.native) for i, conv in enumerate(t.converters)
             if conv.native is not None and conv.native[0] is conv.fn is t.fns[i]]  # not replaced by a rule
    if any(i in t.key_index for i, _ in found):
        return None
    fns = list(t.fns)
    fills = {name: list(getattr(t, name)) for name in _FILLS}
    kept = []
    for i, (_, native, back) in found:
        kind = t.converters[i].schema["type"]
        values = [_native_fill(fills[name][i], kind) for name in _FILLS]
        if any(v is _NO for v in values):
            continue  # a fill of another form (none known): the column keeps JsonConverter's values
        fns[i] = native
        for name, v in zip(_FILLS, values):
            fills[name][i] = v
        kept.append((t.fields[i], back))
    if not kept:
        return None
    return NativeEvents(t, fns, tuple(kept), {name: tuple(values) for name, values in fills.items()})


_NO = object()


def _native_fill(v: Any, kind: str) -> Any:
    """A fill value of a native column in JsonConverter's form (base64 text; Java's text of a double as an
    orjson.Fragment, a string for NaN and the infinities) as the native values are. Bytes that are not base64
    text: _NO. A double's fill of another form stays as it is (none is known: an unchanged TOASTed numeric
    written as a double is null, envelope/placeholders.py); spavro would refuse it, and the event would be
    written the general way."""
    if v is None or type(v) is (bytes if kind == "bytes" else float):
        return v
    if kind == "bytes":
        try:
            return a2b_base64(v) if type(v) is str else _NO
        except ValueError:
            return _NO
    x = orjson.loads(orjson.dumps(v))
    if (type(x) is str and x in ("NaN", "Infinity", "-Infinity")) or type(x) in (int, float):
        return to_float32(float(x)) if kind == "float" else float(x)
    return v


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
