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
from spavro.fast_binary import get_writer

from pgcdc.converters.avro_record import Write, record_writer, spavro_bytes
from pgcdc.converters.avro_rows import row_datum, rows_are_datums
from pgcdc.converters.avro_schema import datum_function, writer_schema

ENVELOPE = ("before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns")
_PER_EVENT = ("sequence", "lsn")  # the source fields that change within a transaction
# The numbers that change from one transaction to the next; the others (xmin, origin_lsn: mostly null, or the
# same for many transactions) are cached with the strings around them.
_PER_TRANSACTION = frozenset(("ts_ms", "ts_us", "ts_ns", "txId"))
# Those numbers as `begin` takes them: the commit time's three units and the xid.
_ARGUMENTS = {"ts_ms": "ms", "ts_us": "us", "ts_ns": "ns", "txId": "xid"}
# A transaction's source runs and an event's `sequence` and `lsn` into the event's buffer: (out, commit, seq, lsn)
Direct = Callable[[io.BytesIO, tuple[int, int, int, Any], str, int], None]
_LATER = object()  # `_head` after a transaction's first event was written by its `Direct`: runs to be made


def _record_writer(fields: list[Any]) -> Write:
    """spavro's writer of a record made of `fields` (spavro Field objects): their encodings, in order."""
    return get_writer({"type": "record", "name": "Fields",
                       "fields": [{"name": f.name, "type": f.type.to_json()} for f in fields]})


class AvroEvents:
    """One table version's change-event values. `transaction(source)` once per transaction with its source block
    (whatever its `sequence` and `lsn`), then `self(op, before, after, sequence, lsn, now_ns)` per event, the rows
    as the envelope holds them (JsonConverter's form). `header` (the wire format's magic byte and schema id) is
    set by the caller before the first event."""

    __slots__ = ("_after", "_after_schema", "_before", "_commit", "_end", "_fast", "_head", "_mid", "_ms",
                 "_no_after", "_no_before", "_ops", "_parsed", "_read_at", "_read_middle", "_row", "_runs",
                 "_segments", "_source_fields", "_ts", "_tx", "header", "lsn_w", "seq_w", "txn")

    def __init__(self, connect_schema: dict[str, Any], avro_text: str) -> None:
        envelope = spavro.schema.parse(orjson.dumps(writer_schema(avro_text)).decode())
        fields = {f.name: f for f in envelope.fields}
        source = fields["source"].type.fields
        names = [f.name for f in source]
        seq, lsn = names.index("sequence"), names.index("lsn")
        # The source fields in three runs around the two per-event ones, each written once per transaction.
        self._segments = (_fields_writer(source[:seq]), _fields_writer(source[seq + 1:lsn]),
                          _fields_writer(source[lsn + 1:]))
        # `begin`'s writers of a transaction's three runs from its numbers, one per set of the other values;
        # None: a per-transaction field that is not a number (then `begin` takes the source block)
        self._source_fields = (source[:seq], source[seq + 1:lsn], source[lsn + 1:])
        numbers_only = all(_numeric(f.type) for f in source if f.name in _PER_TRANSACTION)
        self._tx: dict[Any, tuple[Callable[[int, int, int, Any], tuple[bytes, bytes, bytes]], Direct]] | None = (
            {} if numbers_only else None)
        self.seq_w = get_writer(source[seq].type.to_json())
        self.lsn_w = get_writer(source[lsn].type.to_json())
        self._before = record_writer(fields["before"].type.to_json())
        self._no_before = spavro_bytes(self._before, None)  # the union's null branch: spavro's bytes, written once
        self._after = record_writer(fields["after"].type.to_json())
        self._no_after = spavro_bytes(self._after, None)
        # One writer per timestamp field: three calls cost less than building a record's dict per event.
        self._ts = tuple(get_writer(fields[name].type.to_json()) for name in ("ts_ms", "ts_us", "ts_ns"))
        # ts_ms's bytes, written by spavro once per millisecond: (the millisecond, its bytes)
        self._ms: tuple[int, bytes] = (-1, b"")
        after_schema = next(f for f in connect_schema["fields"] if f["field"] == "after")
        row = datum_function(after_schema, tuples=False)
        self._row: Callable[[Any], Any] = row if row is not None else (lambda v: v)
        # The capture's row as it is (avro_rows.py); None: every column is written as the row holds it
        # (`native`). `_fast` for streamed rows, `_parsed` for a snapshot's (`read`).
        self._after_schema = after_schema
        self._parsed = self._fast = row_datum(after_schema)
        # `transaction` (null: this path is not taken with transaction metadata) and `op`, per op.
        tail = _record_writer([fields["transaction"], fields["op"]])
        self._ops = {op: spavro_bytes(tail, {"transaction": None, "op": op}) for op in "cudtr"}
        self.header = b""
        self.txn: Any = None  # the transaction `transaction` was last called for (the caller's token)
        self._head: bytes | object | None = b""  # None, _LATER: the transaction `begin` took (`_source`)
        self._mid = self._end = b""
        self._commit: tuple[int, int, int, Any] = (0, 0, 0, None)  # `begin`'s numbers: ms, us, ns, xid
        self._runs: Any = None  # `begin`'s two writers of them (`_transaction_writer`)
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
        return all(names.count(n) == 1 for n in _PER_EVENT) and names.index("sequence") < names.index("lsn")

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
            writers = known[others] = _transaction_writer(self._source_fields, source(), self.seq_w, self.lsn_w)
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


def _fields_writer(fields: list[Any]) -> Callable[[io.BytesIO, dict[str, Any]], None]:
    """`f(out, record)` writing a run of a record's fields, once per transaction. Their values are mostly the same
    in every transaction (the connector, the database, the table, xmin: strings, nulls, a number that seldom
    changes) but for the commit times and the xid. So each run of the others is one piece cached by its values
    (spavro writes it once per distinct value), and each of those numbers is written by spavro every time. One
    function compiled per run: field names enter its source only as repr() literals."""
    scope: dict[str, Any] = {"P": _piece}
    lines: list[str] = []
    run: list[Any] = []
    for f in [*fields, None]:
        numeric = f is not None and f.name in _PER_TRANSACTION and _numeric(f.type)
        if (f is None or numeric) and run:
            i = len(lines)
            scope[f"w{i}"], scope[f"k{i}"] = _record_writer(run), {}
            lines.append(f"    v = ({', '.join(f'r[{r.name!r}]' for r in run)},)")
            lines.append(f"    write(k{i}.get(v) or P(k{i}, v, w{i}, r))")
            run = []
        if numeric:
            scope[f"w{len(lines)}"] = get_writer(f.type.to_json())
            lines.append(f"    w{len(lines)}(out, r[{f.name!r}])")
        elif f is not None:
            run.append(f)
    source = "def write(out, r):\n    write = out.write\n" + "".join(line + "\n" for line in lines)
    exec(compile(source, "<pgcdc avro source>", "exec"), scope)
    write: Callable[[io.BytesIO, dict[str, Any]], None] = scope["write"]
    return write


def _transaction_writer(segments: tuple[list[Any], list[Any], list[Any]], source: dict[str, Any], seq_w: Write,
                        lsn_w: Write) -> tuple[Callable[[int, int, int, Any], tuple[bytes, bytes, bytes]], Direct]:
    """`f(ms, us, ns, xid)` -> the three runs of a transaction's source fields (`AvroEvents.transaction`'s
    `_head`, `_mid`, `_end`): the fields other than those numbers written by spavro once, here from `source`,
    and each number by spavro per call, but the commit's millisecond, whose bytes are kept (the transactions of
    a millisecond share them). A run without such a number is the kept bytes joined, without a buffer. Second,
    `g(out, (ms, us, ns, xid), sequence, lsn)` writing the same runs with the event's `sequence` and `lsn`
    (`seq_w`, `lsn_w`) between them straight into the event's buffer: a transaction's first event, most
    transactions' only one. One function each compiled per layout and values: names enter their source only as
    generated identifiers."""
    scope: dict[str, Any] = {"BytesIO": io.BytesIO, "P": _piece, "E": b"", "seq_w": seq_w, "lsn_w": lsn_w}
    lines = ["def tx(ms, us, ns, xid):"]
    direct = ["def direct(out, c, sequence, lsn):", "    ms, us, ns, xid = c", "    write = out.write"]
    for i, fields in enumerate(segments):
        pieces: list[str] = []  # in order: expressions of bytes, or calls of the writers named in `numbers`
        numbers: list[str] = []  # spavro's writers of the numbers written per call, into the run's buffer `o{i}`
        run: list[Any] = []
        for f in [*fields, None]:
            if f is not None and f.name not in _PER_TRANSACTION:
                run.append(f)
                continue
            if run:
                name = f"c{i}_{len(pieces)}"
                scope[name] = spavro_bytes(_record_writer(run), source)
                pieces.append(name)
                run = []
            if f is None:
                continue
            name = f"w{i}_{len(pieces)}"
            scope[name] = get_writer(f.type.to_json())
            if f.name == "ts_ms":
                scope[f"k{name}"] = {}
                pieces.append(f"(k{name}.get(ms) or P(k{name}, ms, {name}, ms))")
            else:
                pieces.append(f"{name}(o{i}, {_ARGUMENTS[f.name]})")
                numbers.append(name)
        direct += [f"    {p.replace(f'(o{i},', '(out,')}" if p.split("(")[0] in numbers else f"    write({p})"
                   for p in pieces]
        direct.append(("    seq_w(out, sequence)", "    lsn_w(out, lsn)", "")[i])
        if not numbers:
            lines.append(f"    s{i} = {' + '.join(pieces) or 'E'}")
            continue
        lines += [f"    o{i} = BytesIO()", f"    w{i} = o{i}.write"]
        lines += [f"    {p}" if p.split("(")[0] in numbers else f"    w{i}({p})" for p in pieces]
        lines.append(f"    s{i} = o{i}.getvalue()")
    lines.append("    return s0, s1, s2")
    exec(compile("\n".join(lines + direct) + "\n", "<pgcdc avro transaction>", "exec"), scope)
    return scope["tx"], scope["direct"]


def _piece(known: dict[Any, bytes], values: Any, write: Write, record: Any) -> bytes:
    """A run's bytes for `values` (`record` as spavro takes them), written by spavro and kept (at most 64)."""
    if len(known) >= 64:
        known.clear()
    data = known[values] = spavro_bytes(write, record)
    return data


def _numeric(schema: Any) -> bool:
    """A long or an int, or a union of null and one."""
    branches = schema.schemas if schema.type == "union" else [schema]
    return all(b.type in ("null", "long", "int") for b in branches)
