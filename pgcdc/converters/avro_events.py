"""Streamed change events in Confluent's Avro wire format, written from the event's parts instead of its JSON.

The converting sink's general path takes a record as the envelope's JsonConverter bytes, parses the payload and
has spavro write the whole datum. For a streamed change that means the source block's fields, the same for every
event of a transaction but `sequence` and `lsn`, are rendered as JSON, parsed and written again per event (about
half of an Avro event's cost on a narrow table). Here (capture/events.py hands over the rows, the op and the LSN)
spavro writes a transaction's source fields once per transaction and table, and per event only the rows, the two
LSN fields, the op and the timestamps. A streamed transaction's source fields come from its numbers alone (`begin`:
the commit time and the xid), the bytes of the fields between them kept per set of their values, so no source
block is built per transaction (about 2 µs of a one-row transaction's event, measured).

Every byte is still spavro's: Avro's binary encoding of a record is its fields' encodings in schema order, with
nothing between them (Avro specification, "Binary Encoding", records), so the envelope's fields written in
groups, in order, are the bytes spavro writes for the whole record. The layout is checked once per table version
(the envelope's eight fields, `sequence` before `lsn` in the source block); any other schema keeps the general
path.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Collection
from typing import Any

import orjson
import spavro.schema

from pgcdc.converters.avro_record import record_writer, spavro_bytes
from pgcdc.converters.avro_rows import row_datum, rows_are_datums
from pgcdc.converters.avro_schema import datum_function, writer_schema
from pgcdc.converters.avro_source import PER_EVENT, Runs, event_tail

ENVELOPE = ("before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns")
_LATER = object()  # `_head` after a transaction's first event was written by its `Direct`: runs to be made


class AvroEvents:
    """One table version's change-event values. `transaction(source)` once per transaction with its source block
    (whatever its `sequence` and `lsn`), then `self(op, before, after, sequence, lsn, now_ns)` per event, the rows
    as the envelope holds them (JsonConverter's form). `header` (the wire format's magic byte and schema id) is
    set by the caller before the first event."""

    __slots__ = ("_after", "_after_schema", "_before", "_commit", "_end", "_fast", "_head", "_mid", "_ms",
                 "_no_after", "_no_before", "_ops", "_parsed", "_read_at", "_read_middle", "_row", "_runs",
                 "_segments", "_tail", "_ts", "_tx", "header", "lsn_w", "seq_w", "txn")

    def __init__(self, connect_schema: dict[str, Any], avro_text: str) -> None:
        doc = writer_schema(avro_text)
        # shared by the tables whose source block's schema is the same
        tail = self._tail = event_tail({f["name"]: f["type"] for f in doc["fields"]})
        self._segments, self.seq_w, self.lsn_w, self._ts, self._ops = (
            tail.segments, tail.seq_w, tail.lsn_w, tail.ts, tail.ops)
        # `begin`'s writers of a transaction's three runs from its numbers, one per set of the other values;
        # None: a per-transaction field that is not a number (then `begin` takes the source block)
        self._tx: dict[Any, Runs] | None = {} if tail.source_fields is not None else None
        before, after = _row_types(doc)
        self._before = record_writer(before)
        self._no_before = spavro_bytes(self._before, None)  # the union's null branch: spavro's bytes, written once
        self._after = record_writer(after)  # the same writer where the two documents are equal (avro_record.py)
        self._no_after = spavro_bytes(self._after, None)
        # ts_ms's bytes, written by spavro once per millisecond: (the millisecond, its bytes)
        self._ms: tuple[int, bytes] = (-1, b"")
        after_schema = next(f for f in connect_schema["fields"] if f["field"] == "after")
        row = datum_function(after_schema, tuples=False)
        self._row: Callable[[Any], Any] = row if row is not None else (lambda v: v)
        # The capture's row as it is (avro_rows.py); None: every column is written as the row holds it
        # (`native`). `_fast` for streamed rows, `_parsed` for a snapshot's (`read`).
        self._after_schema = after_schema
        self._parsed = self._fast = row_datum(after_schema)
        self.header = b""
        self.txn: Any = None  # the transaction `transaction` was last called for (the caller's token)
        self._head: bytes | object | None = b""  # None, _LATER: the transaction `begin` took (`_source`)
        self._mid = self._end = b""
        self._commit: tuple[int, int, int, Any] = (0, 0, 0, None)  # `begin`'s numbers: ms, us, ns, xid
        self._runs: Any = None  # `begin`'s two writers of them (avro_source.py `EventTail.runs`)
        self._read_at: Any = None  # (marker, sequence, lsn) of `_read_middle`: a snapshot record's source block
        self._read_middle = b""

    def native(self, fields: Collection[str]) -> None:
        """From now on the rows (a stream's or a snapshot's: a writer serves one of them) hold `fields` as Avro
        writes them (floats, bytes: envelope/native.py); where the others are plain, a row is its own datum
        (avro_rows.py `rows_are_datums`)."""
        if rows_are_datums(self._after_schema, fields):
            self._fast = self._parsed = None

    @staticmethod
    def fits(connect_schema: dict[str, Any]) -> bool:
        """Whether `connect_schema` is a change-event envelope laid out as this writer expects."""
        fields = connect_schema.get("fields") or ()
        if tuple(f.get("field") for f in fields) != ENVELOPE:
            return False
        names = [f.get("field") for f in fields[2].get("fields") or ()]
        return all(names.count(n) == 1 for n in PER_EVENT) and names.index("sequence") < names.index("lsn")

    def transaction(self, source: dict[str, Any], token: Any) -> None:
        """Write the source fields of the transaction `token` names (`source`: any of its events' block)."""
        head, mid, end = self._segments
        out = io.BytesIO()  # the three runs in one buffer, cut where each ends
        head(out, source)
        at_mid = out.tell()
        mid(out, source)
        at_end = out.tell()
        end(out, source)
        data = out.getvalue()
        self._head, self._mid, self._end = data[:at_mid], data[at_mid:at_end], data[at_end:]
        self.txn = token

    def begin(self, commit_us: int, xid: Any, others: Any, source: Callable[[], dict[str, Any]], token: Any) -> None:
        """As `transaction`, from the transaction's numbers: its commit time (µs) and xid. `others` stands for
        the source block's other values (equal `others`, equal values): `source()` gives a block with them,
        called only for `others` not seen yet (at most 64 kept)."""
        known = self._tx
        if known is None:
            self.transaction(source(), token)
            return
        writers = known.get(others)
        if writers is None:
            if len(known) >= 64:
                known.clear()
            writers = known[others] = self._tail.runs(source())
        # The runs are made on the transaction's second event (`_source`): its first is written by `direct`.
        self._commit, self._runs = (commit_us // 1000, commit_us, commit_us * 1000, xid), writers
        self._head = None
        self.txn = token

    def __call__(self, op: str, before: Any, after: Any, sequence: str, lsn: int, now_ns: int,
                 general: bool = False) -> bytes:
        """One event's value, its rows through the compiled datum (`general`: the general way)."""
        datum = self._general if general else self._fast  # None: the rows as they are
        try:
            out = io.BytesIO()
            write = out.write
            write(self.header)
            if before is None:
                write(self._no_before)
            else:
                self._before(out, before if datum is None else datum(before))
            if after is None:
                write(self._no_after)
            else:
                self._after(out, after if datum is None else datum(after))
            self._source(out, op, sequence, lsn)
            write(self._ms_bytes(now_ns // 1_000_000))
            _, us, ns = self._ts
            us(out, now_ns // 1000)
            ns(out, now_ns)
            return out.getvalue()
        except Exception:  # a value of a shape the compiled datum does not take: the general way, from the start
            if general:
                raise
            return self(op, before, after, sequence, lsn, now_ns, True)

    def _general(self, row: Any) -> Any:
        return self._row(orjson.loads(orjson.dumps(row)))

    def read(self, after: dict[str, Any], sequence: str, lsn: int, now_ns: int) -> bytes:
        """A snapshot record's value (op `r`, no `before`), its row as the snapshot converted it (JsonConverter's
        form, or native once `native` said so). A snapshot's `sequence` and `lsn` are the same in all its
        records: everything between the row and the timestamps is written once per marker."""
        if self._read_at != (self.txn, sequence, lsn):
            middle = io.BytesIO()
            self._source(middle, "r", sequence, lsn)
            self._read_middle, self._read_at = middle.getvalue(), (self.txn, sequence, lsn)
        try:
            return self._read(self._parsed, after, now_ns)
        except Exception:  # a value of a shape the compiled datum does not take: the general way, from the start
            return self._read(self._general, after, now_ns)

    def _read(self, datum: Callable[[Any], Any] | None, after: dict[str, Any], now_ns: int) -> bytes:
        out = io.BytesIO()
        write = out.write
        write(self.header)
        write(self._no_before)
        self._after(out, after if datum is None else datum(after))
        write(self._read_middle)
        write(self._ms_bytes(now_ns // 1_000_000))
        _, us, ns = self._ts
        us(out, now_ns // 1000)
        ns(out, now_ns)
        return out.getvalue()

    def _ms_bytes(self, ms: int) -> bytes:
        """An event's ts_ms: many events share a millisecond, so its bytes are kept."""
        at, data = self._ms
        if ms != at:
            data = spavro_bytes(self._ts[0], ms)
            self._ms = (ms, data)
        return data

    def _source(self, out: io.BytesIO, op: str, sequence: str, lsn: int) -> None:
        """The source block, `transaction` and `op`."""
        write = out.write
        head = self._head
        if type(head) is not bytes:  # a transaction `begin` took: its first event, or its second
            tx, direct = self._runs
            if head is None:
                direct(out, self._commit, sequence, lsn)
                write(self._ops[op])
                self._head = _LATER
                return
            self._head, self._mid, self._end = tx(*self._commit)
        write(self._head)
        self.seq_w(out, sequence)
        write(self._mid)
        self.lsn_w(out, lsn)
        write(self._end)
        write(self._ops[op])


def _row_types(doc: dict[str, Any]) -> tuple[Any, Any]:
    """The schemas of `before` and `after`, each a whole document (the row's record defined in it). Confluent's
    converter defines the record in `before` and names it in `after`: then both are `before`'s, the record given
    the envelope's namespace it inherits there. Any other layout: spavro's own reading of each."""
    types = {f["name"]: f["type"] for f in doc["fields"]}
    before, after = types["before"], types["after"]
    space = doc.get("namespace") or doc["name"].rpartition(".")[0]
    if isinstance(before, list) and len(before) == 2 and "null" in before and isinstance(after, list) and (
            len(after) == 2 and "null" in after):
        record, name = before[1 - before.index("null")], after[1 - after.index("null")]
        if isinstance(record, dict) and record.get("type") == "record" and "." not in record["name"]:
            own = record.get("namespace", space)
            if name in (record["name"], f"{own}.{record['name']}"):
                row = [b if b == "null" else {**record, "namespace": own} for b in before] if own else before
                return row, row
    fields = {f.name: f.type for f in spavro.schema.parse(orjson.dumps(doc).decode()).fields}
    return fields["before"].to_json(), fields["after"].to_json()
