"""A table's snapshot records in bulk: a batch of COPY rows in, (key, value) bytes out.

During a snapshot everything in a record's value but the row and the record's own timestamps is constant per
table and `source.snapshot` marker. So the value is made once per marker by serializing the envelope dict
through the table's own wrapper (`TableEvents.value`), with markers where the row and the timestamps go, and
turned into a `%` template: what it writes is what the dict path writes, by construction. The key works the
same way. Markers are raw control bytes, which orjson never writes unescaped, so nothing serialized around
them collides with them; a template whose markers do not each appear exactly once is refused and the dict
path is kept.

Rows are converted a column at a time (one `map` per column over the batch, nulls handled only in columns
that have them), then each row becomes one dict and one `orjson.dumps`. A value that fails to convert (or a
NOT NULL column's value Debezium would write null, as it does while streaming) stops the snapshot with an error
naming the table, column, value and the row's key (`TableEvents.failing_value`, on the cold path).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from pgcdc.envelope.jsontext import jackson, needs_jackson
from pgcdc.envelope.native import native_events
from pgcdc.envelope.source import DEBEZIUM_VERSION
from pgcdc.envelope.table import TableEvents
from pgcdc.errors import ConversionError, ValueConversionError
from pgcdc.lsn import format_lsn

MARKERS = ("first", "first_in_data_collection", "true", "last_in_data_collection", "last")

_AFTER = orjson.Fragment(b"\x01A")
_TS_MS = orjson.Fragment(b"\x01M")
_TS_US = orjson.Fragment(b"\x01U")
_TS_NS = orjson.Fragment(b"\x01N")
_KEY = orjson.Fragment(b"\x01K")
_VALUE_MARKS = ((b"\x01A", b"%b"), (b"\x01M", b"%d"), (b"\x01U", b"%d"), (b"\x01N", b"%d"))


def _template(data: bytes, marks: Sequence[tuple[bytes, bytes]]) -> bytes | None:
    positions = [data.find(m) for m, _ in marks]
    if data.count(b"\x01") != len(marks) or -1 in positions or positions != sorted(positions):
        return None
    data = data.replace(b"%", b"%%")
    for m, to in marks:
        data = data.replace(m, to)
    return data


def source_block(*, prefix: str, database: str, schema: str, table: str, lsn: int, xid: int, ts_us: int,
                 marker: str, xmin: int | None = None) -> dict[str, Any]:
    """The `source` of every record of one snapshot and table: only the marker differs between records."""
    return {
        "version": DEBEZIUM_VERSION, "connector": "postgresql", "name": prefix, "ts_ms": ts_us // 1000,
        "snapshot": marker, "db": database, "sequence": f'[null,"{lsn}"]', "ts_us": ts_us,
        "ts_ns": ts_us * 1000, "schema": schema, "table": table, "txId": xid, "lsn": lsn,
        "xmin": xmin, "origin": None, "origin_lsn": None,
    }


class TableRecords:
    """One table's records of one snapshot. `render(rows)` converts a batch; `value(after, marker)` and the
    keys it returned are the record bytes."""

    def __init__(self, events: TableEvents, *, prefix: str, database: str, lsn: int, xid: int, ts_us: int,
                 xmin: int | None = None) -> None:
        self.events = events
        self.parts: Any = None  # the sink's writer of these records from their parts (capture/snapshot.py)
        self.lsn = lsn
        self.topic = events.topic
        self.sources = {m: source_block(prefix=prefix, database=database, schema=events.schema,
                                        table=events.table, lsn=lsn, xid=xid, ts_us=ts_us, marker=m, xmin=xmin)
                        for m in MARKERS}
        templates = {m: _template(events.value({
            "before": None, "after": _AFTER, "source": s, "transaction": None, "op": "r",
            "ts_ms": _TS_MS, "ts_us": _TS_US, "ts_ns": _TS_NS}), _VALUE_MARKS) for m, s in self.sources.items()}
        self.templates: dict[str, bytes] | None = \
            None if None in templates.values() else {m: t for m, t in templates.items() if t is not None}
        key_names = tuple(events.fields[i] for i in events.key_index)
        self.key_names = key_names
        self.key_template = _template(events.key_wrap(_KEY), ((b"\x01K", b"%b"),)) if key_names else None
        self._rows_of = events  # the row function of the cold path (a batch that failed)
        self._work = _work(events.fns, events.nulls)

    def native(self) -> list[str]:
        """From now on the rows hold doubles, reals, numeric(p,s) and bytea as the Avro writer takes them
        (envelope/native.py), for `parts`; the columns that do (none: rows stay as they were)."""
        n = native_events(self.events)
        if n is None:
            return []
        self._rows_of = n
        self._work = _work(n.native_fns, n.nulls)
        return [field for field, _ in n.back]

    def render(self, rows: Sequence[Sequence[Any]]) -> tuple[list[Any], list[Any]]:
        """(the rows' `after` JSON, their keys' JSON) for a batch of rows of COPY text in `events.names` order.
        Where `parts` writes the records (Avro, from the rows themselves), the rows are left as they are, and the
        keys are their fields where `parts` writes keys from them (converters/sink.py `EventSend.key_row`): no
        JSON written to be parsed again."""
        names = self.events.fields  # the rows' field names (columns are in `events.names` order)
        try:
            cols: list[Any] = list(zip(*rows))
            for i, fn, null in self._work:
                col = cols[i]
                if None in col:
                    cols[i] = [null if v is None else v if fn is None else fn(v) for v in col]
                elif fn is not None:
                    cols[i] = list(map(fn, col))
            afters = [dict(zip(names, vals)) for vals in zip(*cols)] if cols else [{} for _ in rows]
        except Exception:  # name the row, column and value that failed; else the dict path's error
            self._raise_failing(rows)
            afters = [self._rows_of.row(r, self.lsn) for r in rows]
        try:
            parts = self.parts
            if parts is not None and parts.key_row is not None:  # the keys' fields: `parts` writes them
                key_payload = self.events.key_payload
                return afters, [key_payload(a) for a in afters]
            keys = self._keys(afters)
            return (afters if parts is not None else self._values(afters)), keys
        except orjson.JSONEncodeError as exc:  # a converted value JSON cannot carry: name it
            self._raise_failing(rows)
            raise ConversionError(f"cannot serialize a row of {self.events.schema}.{self.events.table} "
                                  f"{self._where(None)}: {exc}") from None

    def writable(self, rows: Sequence[Sequence[Any]], left_out: Callable[[ValueConversionError], None]
                 ) -> list[Sequence[Any]]:
        """The rows whose values all convert; each other one handed to `left_out` (the cold path, after a batch
        failed, with event.processing.failure.handling.mode other than fail)."""
        kept = []
        for r in rows:
            found = self.events.failing_value(r, self.lsn, self._where(r))
            if found is None:
                kept.append(r)
            else:
                left_out(found if isinstance(found, ValueConversionError) else ValueConversionError(str(found)))
        return kept

    def _raise_failing(self, rows: Sequence[Sequence[Any]]) -> None:
        for r in rows:
            found = self.events.failing_value(r, self.lsn, self._where(r))
            if found is not None:
                raise found from None

    def _where(self, row: Sequence[Any] | None) -> str:
        """Where a snapshot row is: it has no LSN of its own, so its key (PostgreSQL's `(id)=(2)`) and the LSN
        the snapshot is for (streaming starts there: the rows are its state, or newer in a resumed one)."""
        where = f"in the initial snapshot for LSN {format_lsn(self.lsn)}"
        return where if row is None else self.events.located(row, where)

    def _keys(self, afters: list[dict[str, Any]]) -> list[bytes | None]:
        if self.key_template is None:
            return [self.events.key(a) for a in afters]
        template, key_payload, dumps = self.key_template, self.events.key_payload, orjson.dumps
        key_json = [dumps(key_payload(a)) for a in afters]
        if needs_jackson(b"".join(key_json)):
            key_json = [jackson(k) if needs_jackson(k) else k for k in key_json]
        return [template % k for k in key_json]

    @staticmethod
    def _values(afters: list[dict[str, Any]]) -> list[bytes]:
        out = [orjson.dumps(a) for a in afters]
        if needs_jackson(b"".join(out)):  # rare: one scan of the batch, then only the rows that need it
            out = [jackson(a) if needs_jackson(a) else a for a in out]
        return out

    def value(self, after: bytes, marker: str) -> bytes:
        now = time.time_ns()
        if self.templates is not None:
            return self.templates[marker] % (after, now // 1_000_000, now // 1000, now)
        return self.events.value({"before": None, "after": orjson.Fragment(after), "source": self.sources[marker],
                                  "transaction": None, "op": "r", "ts_ms": now // 1_000_000, "ts_us": now // 1000,
                                  "ts_ns": now})


def _work(fns: Sequence[Any], nulls: Sequence[Any]) -> tuple[tuple[int, Any, Any], ...]:
    """Columns whose text needs a function, or whose null becomes the type's fallback (NOT NULL columns)."""
    return tuple((i, fn, null) for i, (fn, null) in enumerate(zip(fns, nulls)) if fn is not None or null is not None)
