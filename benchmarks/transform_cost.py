"""CPU per streamed insert in the capture, untransformed and through the compiled transform chains, no services.

`ChangeCapture.handle(Insert)` for 20,000 inserts of a `narrow`, `toast` or `wide40` row (stream.py's tables,
values of the same kinds), into a sink that drops records: untransformed, `unwrap` (ExtractNewRecordState)
and `unwrap_route` (+ a RegexRouter), each the best of 5 rounds of process CPU time. Decoding pgoutput and the
stream are left out: what is left is the envelope, the chain and the call into the sink. Run:
`.venv/bin/python benchmarks/transform_cost.py [--workloads narrow,toast,wide40] [--rows N]`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from pgcdc.capture.changes import ChangeCapture
from pgcdc.envelope.source import context_headers
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import messages as m
from pgcdc.sink.memory import DropSink
from pgcdc.transforms.chain import TransformingSink
from pgcdc.transforms.config import build_chain

UNWRAP = {"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}
CHAINS: dict[str, dict[str, str] | None] = {
    "untransformed": None,
    "unwrap": {"transforms": "unwrap", **UNWRAP},
    "unwrap_route": {"transforms": "unwrap,route", **UNWRAP,
                     "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                     "transforms.route.regex": r"p\.(.*)", "transforms.route.replacement": "cdc_$1"},
}
_NUMERIC = ((12 << 16) | 2) + 4  # numeric(12,2)
_WIDE = [("int4", -1), ("int8", -1), ("text", -1), ("numeric", _NUMERIC), ("float8", -1), ("bool", -1),
         ("timestamptz", -1), ("jsonb", -1)] * 5
TS = "2024-01-02 03:04:05.5+00"
# workload -> (columns after `id`, pgoutput text of row g)
WORKLOADS: dict[str, tuple[list[tuple[str, str, int]], Callable[[int], tuple[str, ...]]]] = {
    "narrow": ([("a", "int4", -1), ("b", "text", -1), ("c", "timestamptz", -1)],
               lambda g: (str(g), str(g % 1000), f"{g * 7919:032x}", TS)),
    "toast": ([("a", "int4", -1), ("doc", "text", -1)], lambda g: (str(g), str(g % 1000), f"{g:032x}" * 128)),
    "wide40": ([(f"c{i:02}", t, mod) for i, (t, mod) in enumerate(_WIDE)],
               lambda g: (str(g), *[v for i in range(5) for v in (
                   str(g % 1000 + i), str(g * i), f"{g + i:032x}", f"{g // 7}.{i:02d}", str(g * 1.5 + i),
                   "t", TS, f'{{"i": {i}, "k": {g}}}')])),
}


def cost(workload: str, props: dict[str, str] | None, rows: int) -> float:
    """CPU microseconds per insert, best of 5 rounds."""
    cols, row = WORKLOADS[workload]
    specs = [ColumnSpec("id", "int8", "int8", -1, True), *(ColumnSpec(c, t, t, mod, False) for c, t, mod in cols)]
    sink: Any = DropSink()
    if props is not None:
        chain = build_chain(props, True)
        assert chain is not None
        sink = TransformingSink(sink, chain)
    capture = ChangeCapture(
        sink=sink, topic_prefix="p", database="db", skipped_operations=frozenset(), tombstones_on_delete=True,
        tables=lambda rel: TableEvents(rel.namespace, rel.name, specs, ("id",), EnvelopeSettings("p", Modes())),
        transaction_metadata=False, context_headers=context_headers("p", "run", True),
        rows=sink.row_sender if props is not None else None)  # as the runner wires it
    capture.handle(m.Begin(10**9, 1_000_000, 700), 1)
    capture.handle(m.Relation(None, 16384, "public", "t", "d",
                              (m.Column(1, "id", 0, -1), *(m.Column(0, c, 0, -1) for c, _, _ in cols))), 2)
    inserts = [m.Insert(None, 16384, row(g)) for g in range(rows)]
    handle = capture.handle
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for msg in inserts:
            handle(msg, 5000)
        best = min(best, time.process_time() - t0)
    return best / rows * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--rows", type=int, default=20_000)
    args = ap.parse_args()
    for name in args.workloads.split(","):
        base = cost(name, None, args.rows)
        line = f"{name:8} untransformed {base:6.2f} us"
        for chain, props in CHAINS.items():
            if props is not None:
                us = cost(name, props, args.rows)
                line += f"  {chain} {us:6.2f} us ({base / us:.2f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
