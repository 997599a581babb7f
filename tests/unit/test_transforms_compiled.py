"""The compiled chains (pgcdc/transforms/compiled.py) write exactly what the interpreted chain writes: the same
records, byte for byte, in the same order, on pgcdc's own records of every kind (hypothesis over tables,
values and operations, and the recorded inputs of the Debezium comparison), for every chain the compiler
takes and the options it must refuse."""

from __future__ import annotations

import itertools
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgcdc.capture.changes import ChangeCapture
from pgcdc.envelope.source import context_headers
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import UNCHANGED_TOAST
from pgcdc.protocol import messages as m
from pgcdc.transforms.chain import TransformingSink
from pgcdc.transforms.config import build_chain

DATA = Path(__file__).resolve().parents[1] / "data" / "transforms"
UNWRAP = {"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}
ROUTE = {"transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
         "transforms.route.regex": r"p\.s\.(.*)", "transforms.route.replacement": "cdc_$1"}
ROUTE2 = {"transforms.again.type": "org.apache.kafka.connect.transforms.RegexRouter",
          "transforms.again.regex": r"(.*)_(.*)", "transforms.again.replacement": "$2.$1"}
MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")

# Chains the compiler takes: unwrap in every delete mode, alone or with routers before or after it.
COMPILED = [
    {"transforms": "unwrap", **UNWRAP},
    *({"transforms": "unwrap", **UNWRAP, "transforms.unwrap.delete.tombstone.handling.mode": mode} for mode in MODES),
    {"transforms": "unwrap,route", **UNWRAP, **ROUTE},
    {"transforms": "route,unwrap", **UNWRAP, **ROUTE, "transforms.unwrap.delete.tombstone.handling.mode": "rewrite"},
    {"transforms": "unwrap,route,again", **UNWRAP, **ROUTE, **ROUTE2},
    # A router whose replacement names a group its regex lacks fails on matching topics: interpreted.
    {"transforms": "unwrap,route", **UNWRAP, **ROUTE, "transforms.route.replacement": "$2", "errors.tolerance": "all"},
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.replace.null.with.default": "true"},
    # add.fields from the envelope's tail: source (with its defaults: snapshot), transaction, op, timestamps.
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.add.fields": "op,lsn,source.ts_ms,table,source.snapshot",
     "transforms.unwrap.delete.tombstone.handling.mode": "rewrite"},
    {"transforms": "unwrap,route", **UNWRAP, **ROUTE, "transforms.unwrap.add.fields.prefix": "m_",
     "transforms.unwrap.add.fields": "op:kind,txId,total_order,transaction.id,ts_us,source.xmin,sequence,db"},
    # Names that collide with a column (`v`, `__deleted`) fail both ways alike, on every record.
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.add.fields": "op:v,db", "errors.tolerance": "all"},
]
# Options that change the output: the compiler refuses the chain, every record is interpreted.
REFUSED = [
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.add.fields": "op,after.id"},  # from the row
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.add.headers": "op,db"},
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.route.by.field": "id"},
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.drop.fields.header.name": "drop"},
    {"transforms": "unwrap", **UNWRAP, "transforms.unwrap.replace.null.with.default": "false"},
    {"transforms": "unwrap,route", **UNWRAP, **ROUTE, "transforms.route.predicate": "t",
     "predicates": "t", "predicates.t.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"},
    {"transforms": "route", **ROUTE},
    {"transforms": "unwrap,u2", **UNWRAP, "transforms.u2.type": "io.debezium.transforms.ExtractNewRecordState"},
]
# key/value.converter.schemas.enable
OUTPUTS = [(True, True), (False, False), (True, False), (False, True)]


class Recording:
    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append((topic, key, value, list(headers or ()), partition))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def both(props: dict[str, str], records: list[tuple[Any, ...]], key_schemas: bool = True,
         value_schemas: bool = True) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
    """(compiled sink's output, interpreted sink's output, records the compiled path sent itself)."""
    outs = []
    fast_sent = 0
    for compiled in (True, False):
        chain = build_chain(props, key_schemas)
        assert chain is not None
        out = Recording()
        sink = TransformingSink(out, chain, key_schemas=key_schemas, value_schemas=value_schemas)
        if not compiled:
            sink.__dict__["fast"] = None
        elif sink.fast is not None:
            def counting(*args: Any, real: Any = sink.fast) -> bool:
                nonlocal fast_sent
                sent: bool = real(*args)
                fast_sent += sent
                return sent
            sink.__dict__["fast"] = counting
        for r in records:
            try:
                sink.send(*r)
            except Exception as exc:  # the same error, at the same record, both ways
                out.records.append(("error", str(exc)))
        outs.append(out.records)
    return outs[0], outs[1], fast_sent


# -- pgcdc's records of every kind, from pgoutput messages ----------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
KEYS = st.sampled_from(["after", "source", "before", "__deleted", "payload", "x", ',"source":', "é"])


def _float_text(f: float) -> str:
    return "NaN" if f != f else "Infinity" if f == float("inf") else "-Infinity" if f == float("-inf") else repr(f)


def _hstore(d: dict[str, str | None]) -> str:
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return ", ".join(f"{q(k)}=>{'NULL' if v is None else q(v)}" for k, v in d.items())


# type -> (pgoutput text strategy, type modifier)
TYPES: dict[str, tuple[Any, int]] = {
    "int8": (st.integers(-(2**63), 2**63 - 1).map(str), -1),
    "text": (TEXT, -1),
    "float8": (st.floats().map(_float_text), -1),
    "numeric": (st.decimals(min_value=-10**8, max_value=10**8, places=2, allow_nan=False).map(str),
                ((12 << 16) | 2) + 4),
    "bool": (st.sampled_from(("t", "f")), -1),
    "jsonb": (st.dictionaries(KEYS, st.one_of(st.integers(), TEXT), max_size=3).map(json.dumps), -1),
    "hstore": (st.dictionaries(KEYS, st.one_of(st.none(), TEXT), max_size=3).map(_hstore), -1),
    "_int4": (st.lists(st.integers(-5, 5), max_size=3).map(lambda xs: "{" + ",".join(map(str, xs)) + "}"), -1),
    "timestamptz": (st.just("2024-01-02 03:04:05.5+00"), -1),
}
NAMES = st.one_of(st.sampled_from(["after", "source", "before", "__deleted", "op", "payload", "v"]), TEXT.filter(bool))
# hstore twice as likely: in map mode its keys are data, the one thing that can mimic the envelope's own keys.
COLUMNS = st.lists(st.tuples(NAMES, st.one_of(st.just("hstore"), st.sampled_from(sorted(TYPES))), st.booleans()),
                   max_size=5,
                   unique_by=lambda c: c[0]).map(lambda cs: [c for c in cs if c[0] != "id"])


@st.composite
def streams(draw: Any) -> tuple[list[Any], dict[int, Any], bool]:
    """pgoutput messages: two versions of one table (a schema change mid-stream), changes of every kind."""
    versions = [draw(COLUMNS), draw(COLUMNS)]
    identity = draw(st.sampled_from(("d", "f")))
    msgs: list[Any] = []
    specs: dict[int, Any] = {}
    lsn = itertools.count(1000, 7)
    ident = itertools.count(1)
    for v, cols in enumerate(versions):
        oid = 16384  # the same table, altered
        columns = (m.Column(1, "id", 0, -1), *(m.Column(0, n, 0, -1) for n, _, _ in cols))
        specs[v] = [ColumnSpec("id", "int8", "int8", -1, True),
                    *(ColumnSpec(n, t, t, TYPES[t][1], nn) for n, t, nn in cols)]
        for _ in range(draw(st.integers(1, 2))):
            msgs.append(("begin", next(lsn)))
            msgs.append((m.Relation(None, oid, "s", "t", identity, columns), v))
            for _ in range(draw(st.integers(1, 5))):
                kind = draw(st.sampled_from(("I", "U", "UK", "UO", "UO", "D", "T", "M", "H")))
                def row(toast: bool = False, cols: list[Any] = cols) -> tuple[Any, ...]:
                    out: list[Any] = [str(next(ident))]
                    for _, t, nn in cols:
                        # (not a NOT NULL numeric: it has no placeholder, and the event fails, test_placeholders.py)
                        if toast and not (nn and t == "numeric") and draw(st.booleans()):
                            out.append(UNCHANGED_TOAST)
                        else:
                            strategy = TYPES[t][0] if nn else st.one_of(st.none(), TYPES[t][0])
                            out.append(draw(strategy))
                    return tuple(out)
                new = row(kind in ("U", "UK"))
                if kind == "I":
                    msg: Any = m.Insert(None, oid, new)
                elif kind == "U":
                    msg = m.Update(None, oid, None, None, new)
                elif kind == "UK":  # the key changed: a delete, a tombstone and a create with key headers
                    msg = m.Update(None, oid, (str(int(new[0]) + 10_000), *(None for _ in cols)), "K", new)
                elif kind == "UO":
                    msg = m.Update(None, oid, row(), "O", new)
                elif kind == "D":
                    msg = m.Delete(None, oid, new, "O" if identity == "f" else "K")
                elif kind == "T":
                    msg = m.Truncate(None, 0, (oid,))
                elif kind == "M":
                    msg = m.LogicalMessage(None, True, 0, "p", b"x")
                else:
                    msg = "heartbeat"
                msgs.append((msg, v))
            msgs.append(("commit", next(lsn)))
    return msgs, specs, draw(st.booleans())


def capture_records(msgs: list[Any], specs: dict[int, Any], tx_metadata: bool, hstore: str, tick: int = 1_234_567,
                    sink: Any = None, rows: Any = None) -> list[tuple[Any, ...]]:
    """The records of `msgs` (into `sink`: a Recording unless given; `rows`: ChangeCapture's); the clock moves
    by `tick` ns per reading."""
    sink = Recording() if sink is None else sink
    version = [0]

    def lookup(rel: m.Relation) -> TableEvents:
        return TableEvents(rel.namespace, rel.name, specs[version[0]], ("id",),
                           EnvelopeSettings("p", Modes(hstore=hstore)))

    capture = ChangeCapture(sink=sink, tables=lookup, topic_prefix="p", database="db", skipped_operations=frozenset(),
                            tombstones_on_delete=True, transaction_metadata=tx_metadata,
                            context_headers=context_headers("p", "run", True), rows=rows)
    clock = itertools.count(1_700_000_000_000_000_000, tick)
    lsn = itertools.count(2000, 3)
    with ExitStack() as stack:
        stack.enter_context(mock.patch("pgcdc.capture.changes.time.time_ns", lambda: next(clock)))
        for msg, arg in msgs:
            if msg == "begin":
                capture.handle(m.Begin(arg + 5000, 1_000_000 + arg, 700 + arg), next(lsn))
            elif msg == "commit":
                capture.handle(m.Commit(0, arg + 5000, arg + 5100, 1_000_000 + arg), next(lsn))
            elif msg == "heartbeat":
                capture.heartbeat("__debezium-heartbeat.p", next(lsn))
            else:
                if isinstance(msg, m.Relation):
                    version[0] = arg
                capture.handle(msg, next(lsn))
    return sink.records


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(), hstore=st.sampled_from(("json", "map")), chain=st.sampled_from(COMPILED + REFUSED),
       outputs=st.sampled_from(OUTPUTS))
def test_compiled_chain_writes_the_interpreted_bytes(stream: Any, hstore: str, chain: dict[str, str],
                                                     outputs: tuple[bool, bool]) -> None:
    msgs, specs, tx_metadata = stream
    records = capture_records(msgs, specs, tx_metadata, hstore)
    compiled, interpreted, _ = both(chain, records, *outputs)
    assert compiled == interpreted


class Catching:
    """The transforming sink, a failing record noted as an error the way `both` notes it."""

    def __init__(self, sink: TransformingSink, out: Recording) -> None:
        self.sink, self.out = sink, out
        self.records = out.records

    def send(self, *args: Any, **kwargs: Any) -> None:
        try:
            self.sink.send(*args, **kwargs)
        except Exception as exc:
            self.out.records.append(("error", str(exc)))


def rows_alone(props: dict[str, str], msgs: list[Any], specs: dict[int, Any], tx_metadata: bool, hstore: str,
               key_schemas: bool = True, value_schemas: bool = True) -> tuple[list[tuple[Any, ...]], int]:
    """(what the capture writes through the chain when it hands rows alone to it, records sent as rows)."""
    chain = build_chain(props, key_schemas)
    assert chain is not None
    out = Recording()
    sink = TransformingSink(out, chain, key_schemas=key_schemas, value_schemas=value_schemas)
    sent = 0

    def senders(topic: str, head: bytes) -> Any:
        real = sink.row_sender(topic, head)
        if real is None:
            return None

        def counting(*args: Any) -> bool:
            nonlocal sent
            ok: bool = real(*args)
            sent += ok
            return ok
        return counting
    capture_records(msgs, specs, tx_metadata, hstore, 0, Catching(sink, out), senders)
    return out.records, sent


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=streams(), hstore=st.sampled_from(("json", "map")), chain=st.sampled_from(COMPILED + REFUSED),
       outputs=st.sampled_from(OUTPUTS))
def test_rows_alone_write_the_interpreted_bytes(stream: Any, hstore: str, chain: dict[str, str],
                                                outputs: tuple[bool, bool]) -> None:
    """The capture handing inserts' and updates' rows alone to the compiled chain (capture/rows.py), without
    writing their envelopes, makes what the interpreted chain makes of the whole events (a still clock: the
    rows alone read none)."""
    msgs, specs, tx_metadata = stream
    _, interpreted, _ = both(chain, capture_records(msgs, specs, tx_metadata, hstore, 0), *outputs)
    assert rows_alone(chain, msgs, specs, tx_metadata, hstore, *outputs)[0] == interpreted


def test_the_compiled_path_takes_inserts_and_updates_and_only_them() -> None:
    """Without this, the test above could pass with the compiled path never used."""
    for fourth, hstore, fast_expected in (("h", "json", 3), ("h", "map", 2), ("after", "json", 2)):
        # An update's `before` row is cut only when no key inside it can be "after" (a map's keys are data).
        cols = [("v", "text", False), ("d", "float8", False), ("x", "hstore", False), (fourth, "hstore", False)]
        msgs: list[Any] = [("begin", 1), (m.Relation(None, 16384, "s", "t", "f", (
            m.Column(1, "id", 0, -1), *(m.Column(0, n, 0, -1) for n, _, _ in cols))), 0)]
        msgs += [(m.Insert(None, 16384, ("1", "a", "1e+20", '"x"=>"1"', '"after"=>"1"')), 0),
                 (m.Update(None, 16384, None, None, ("1", "b", "-0", None, None)), 0),
                 (m.Update(None, 16384, ("1", "b", "2.5", None, None), "O", ("1", "c", "NaN", None, '"a"=>NULL')), 0),
                 (m.Delete(None, 16384, ("1", "c", "NaN", None, None), "O"), 0), (m.Truncate(None, 0, (16384,)), 0),
                 (m.LogicalMessage(None, True, 0, "p", b"x"), 0), ("heartbeat", 0), ("commit", 1)]
        specs = {0: [ColumnSpec("id", "int8", "int8", -1, True), *(ColumnSpec(n, t, t, -1, nn) for n, t, nn in cols)]}
        records = capture_records(msgs, specs, True, hstore)
        still = capture_records(msgs, specs, False, hstore, 0)
        for chain in COMPILED[:-5] + COMPILED[-3:-1]:
            for outputs in OUTPUTS:
                compiled, interpreted, fast = both(chain, records, *outputs)
                assert compiled == interpreted
                assert fast == fast_expected, (chain, outputs, hstore, fourth)
                # Rows alone: the insert and the update without a `before` row, unless add.fields are asked.
                alone, sent = rows_alone(chain, msgs, specs, False, hstore, *outputs)
                assert alone == both(chain, still, *outputs)[1]
                assert sent == (0 if "transforms.unwrap.add.fields" in chain else 2), (chain, outputs)
                assert rows_alone(chain, msgs, specs, True, hstore, *outputs)[1] == 0  # transaction metadata
        for chain in REFUSED:
            assert both(chain, records)[2] == 0
            assert rows_alone(chain, msgs, specs, False, hstore)[1] == 0


@pytest.mark.parametrize("scenario", sorted(p.name.removesuffix(".input.jsonl") for p in DATA.glob("*.input.jsonl")))
def test_recorded_inputs_compiled_and_interpreted(scenario: str) -> None:
    """pgcdc's records of the Debezium comparison runs (snapshots, outbox tables, transaction metadata, …)."""
    def enc(t: str | None) -> bytes | None:
        return None if t is None else t.encode()
    records = [(r["topic"], enc(r["key"]), enc(r["value"]), [(n, v.encode()) for n, v in r["headers"]],
                r["partition"]) for r in map(orjson.loads, (DATA / f"{scenario}.input.jsonl").read_text().splitlines())]
    route = {**ROUTE, "transforms.route.regex": r"dbserver1\.public\.(.*)"}
    taken = 0
    for chain in [*COMPILED, {"transforms": "unwrap,route", **UNWRAP, **route}, *REFUSED]:
        for outputs in OUTPUTS:
            compiled, interpreted, fast = both(chain, records, *outputs)
            assert compiled == interpreted
            taken += fast
    assert taken > 0
