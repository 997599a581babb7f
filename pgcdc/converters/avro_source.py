"""The Avro writers of a change event's fields after its rows: the source block, `transaction`, `op` and the
three timestamps (avro_events.py). Their schema is the same for every table of a connector, so they are built
once per schema text and shared by all tables' writers (about half of a table's writer set-up, measured).

The schema's fields are taken as the registered schema's JSON holds them (`{"name": …, "type": …}`), and every
byte is spavro's: a run of fields is written by spavro's writer of a record made of them (Avro's binary encoding
of a record is its fields' encodings in order, with nothing between them).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable
from typing import Any

import orjson
from spavro.fast_binary import get_writer

from pgcdc.codegen import define, kept
from pgcdc.converters.avro_record import Write, spavro_bytes, unnamed_writer

PER_EVENT = ("sequence", "lsn")  # the source fields that change within a transaction
# The numbers that change from one transaction to the next; the others (xmin, origin_lsn: mostly null, or the
# same for many transactions) are cached with the strings around them.
_PER_TRANSACTION = frozenset(("ts_ms", "ts_us", "ts_ns", "txId"))
# Those numbers as `begin` takes them: the commit time's three units and the xid.
_ARGUMENTS = {"ts_ms": "ms", "ts_us": "us", "ts_ns": "ns", "txId": "xid"}
# A transaction's source runs and an event's `sequence` and `lsn` into the event's buffer: (out, commit, seq, lsn)
Direct = Callable[[io.BytesIO, tuple[int, int, int, Any], str, int], None]
Runs = tuple[Callable[[int, int, int, Any], tuple[bytes, bytes, bytes]], Direct]


class EventTail:
    """The writers of an envelope's `source`, `transaction`, `op` and timestamps, from their schemas (JSON).

    - `segments`: the source fields in three runs around `sequence` and `lsn`, each `f(out, source)`;
    - `source_fields`: those runs' fields, for `runs` (None: a per-transaction field that is not a number);
    - `seq_w`, `lsn_w`: spavro's writers of `sequence` and `lsn`;
    - `ts`: of `ts_ms`, `ts_us` and `ts_ns`;
    - `ops`: the bytes of `transaction` (null: this path is not taken with transaction metadata) and `op`, per op."""

    __slots__ = ("lsn_w", "ops", "segments", "seq_w", "source_fields", "ts")

    def __init__(self, types: dict[str, Any]) -> None:
        source = types["source"]["fields"]
        names = [f["name"] for f in source]
        seq, lsn = names.index("sequence"), names.index("lsn")
        runs = (source[:seq], source[seq + 1:lsn], source[lsn + 1:])
        self.segments = tuple(_fields_writer(run) for run in runs)
        numbers_only = all(_numeric(f["type"]) for f in source if f["name"] in _PER_TRANSACTION)
        self.source_fields = runs if numbers_only else None
        self.seq_w = unnamed_writer(source[seq]["type"])
        self.lsn_w = unnamed_writer(source[lsn]["type"])
        # One writer per timestamp field: three calls cost less than building a record's dict per event.
        self.ts = tuple(unnamed_writer(types[name]) for name in ("ts_ms", "ts_us", "ts_ns"))
        tail = _record_writer([{"name": name, "type": types[name]} for name in ("transaction", "op")])
        self.ops = {op: spavro_bytes(tail, {"transaction": None, "op": op}) for op in "cudtr"}

    def runs(self, source: dict[str, Any]) -> Runs:
        """`_transaction_writer` of this source block's values (`source_fields` set)."""
        assert self.source_fields is not None
        return _transaction_writer(self.source_fields, source, self.seq_w, self.lsn_w)


_TAILS: dict[Hashable, EventTail] = {}  # the schemas' JSON -> their writers (at most 64 kept)


def event_tail(types: dict[str, Any]) -> EventTail:
    """The writers of the envelope fields after its rows, `types` their schemas by field name (JSON)."""
    text = orjson.dumps([types[name] for name in ("source", "transaction", "op", "ts_ms", "ts_us", "ts_ns")])
    return kept(_TAILS, text, 64, lambda: EventTail(types))


def _record_writer(fields: list[dict[str, Any]]) -> Write:
    """spavro's writer of a record made of `fields` (their schema JSON): their encodings, in order."""
    return get_writer({"type": "record", "name": "Fields",
                       "fields": [{"name": f["name"], "type": f["type"]} for f in fields]})


def _fields_writer(fields: list[dict[str, Any]]) -> Callable[[io.BytesIO, dict[str, Any]], None]:
    """`f(out, record)` writing a run of a record's fields, once per transaction. Their values are mostly the same
    in every transaction (the connector, the database, the table, xmin: strings, nulls, a number that seldom
    changes) but for the commit times and the xid. So each run of the others is one piece cached by its values
    (spavro writes it once per distinct value), and each of those numbers is written by spavro every time. One
    function compiled per run: field names enter its source only as repr() literals."""
    scope: dict[str, Any] = {"P": _piece}
    lines: list[str] = []
    run: list[Any] = []
    for f in [*fields, None]:
        numeric = f is not None and f["name"] in _PER_TRANSACTION and _numeric(f["type"])
        if (f is None or numeric) and run:
            i = len(lines)
            scope[f"w{i}"], scope[f"k{i}"] = _record_writer(run), {}
            lines.append(f"    v = ({', '.join(f'r[{name!r}]' for name in (r['name'] for r in run))},)")
            lines.append(f"    write(k{i}.get(v) or P(k{i}, v, w{i}, r))")
            run = []
        if numeric:
            scope[f"w{len(lines)}"] = unnamed_writer(f["type"])
            lines.append(f"    w{len(lines)}(out, r[{f['name']!r}])")
        elif f is not None:
            run.append(f)
    source = "def write(out, r):\n    write = out.write\n" + "".join(line + "\n" for line in lines)
    write: Callable[[io.BytesIO, dict[str, Any]], None] = define(source, "<pgcdc avro source>", scope, "write")
    return write


def _transaction_writer(segments: tuple[list[dict[str, Any]], ...], source: dict[str, Any], seq_w: Write,
                        lsn_w: Write) -> Runs:
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
            if f is not None and f["name"] not in _PER_TRANSACTION:
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
            scope[name] = unnamed_writer(f["type"])
            if f["name"] == "ts_ms":
                scope[f"k{name}"] = {}
                pieces.append(f"(k{name}.get(ms) or P(k{name}, ms, {name}, ms))")
            else:
                pieces.append(f"{name}(o{i}, {_ARGUMENTS[f['name']]})")
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
    define("\n".join(lines + direct) + "\n", "<pgcdc avro transaction>", scope, "tx")
    return scope["tx"], scope["direct"]


def _piece(known: dict[Any, bytes], values: Any, write: Write, record: Any) -> bytes:
    """A run's bytes for `values` (`record` as spavro takes them), written by spavro and kept (at most 64)."""
    if len(known) >= 64:
        known.clear()
    data = known[values] = spavro_bytes(write, record)
    return data


def _numeric(schema: Any) -> bool:
    """A long or an int, or a union of null and one."""
    branches = schema if isinstance(schema, list) else [schema]
    return all((b if isinstance(b, str) else b.get("type")) in ("null", "long", "int") for b in branches)
