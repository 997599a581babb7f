"""Where an Avro record's CPU goes: pgcdc's real change events of stream.py's workloads, converted in this process.

Each workload's rows are streamed once into a sink that keeps the records (JsonConverter's bytes, as the envelope
writes them), then each record goes through the stages of the Avro path and the time of each is taken in this
thread's CPU time (best of `--repeat`; the machines are shared, and CPU time moves less with the load than wall
time): cutting the payload out of JsonConverter's bytes and parsing it (`split+loads`), JsonConverter's form to
fastavro's datum (`datum`, less the parse it starts from), fastavro writing the value (`fastavro`), spavro writing
it (`spavro`, the converters' writer: pgcdc/converters/avro_writer.py), and the whole
value and key as the converting sink does them (`value`, `key`: all of the above plus the Confluent header).
`tagged` is fastavro writing the same value with every non-null optional primitive given as its union branch
`(name, value)`, and `tagging` what giving them costs in Python. Prints µs per event.

Run: `.venv/bin/python benchmarks/avro_cost.py [--rows N] [--workloads narrow,...] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from typing import Any

import fastavro
import orjson
import psycopg
from stream import WORKLOADS, write_workload  # benchmarks/ is first on sys.path

from pgcdc.config import build_config
from pgcdc.converters.avro_schema import avro_schema_text, datum_function, writer_schema
from pgcdc.converters.avro_writer import avro_writer
from pgcdc.converters.sink import _Side, make_converters, split_json
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import DropSink

_PRIMITIVES = ("int", "long", "string", "double", "float", "boolean", "bytes")


class Keep(DropSink):
    def __init__(self) -> None:
        self.records: list[tuple[str, bytes, bytes]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        if key is not None and value is not None:
            self.records.append((topic, key, value))


def capture(pg: PostgresCluster, name: str, rows: int) -> list[tuple[str, bytes, bytes]]:
    w = WORKLOADS[name]
    db = pg.create_database(f"cost_{name}")
    pg.execute(w.ddl + f"; CREATE PUBLICATION pub_{name} FOR ALL TABLES", db)
    with psycopg.connect(pg.dsn(db), replication="database", autocommit=True) as repl:
        repl.execute(f"CREATE_REPLICATION_SLOT cost_{name} LOGICAL pgoutput NOEXPORT_SNAPSHOT")
    end = write_workload(pg, db, w, rows, w.per_txn or 1000)
    config = build_config({"name": "cost", "topic.prefix": "bench", **pg.connection_properties(db),
                           "slot.name": f"cost_{name}", "publication.name": f"pub_{name}",
                           "snapshot.mode": "no_data", "bootstrap.servers": "127.0.0.1:9", "offset.storage": "memory"})
    sink = Keep()
    Connector(config, stop_at_lsn=end, sink=sink).run()  # type: ignore[arg-type]
    return sink.records


def tagger(schema: Any, named: dict[str, Any]) -> Callable[[Any], Any]:
    """A function giving each non-null optional primitive of a datum of `schema` as `(branch, value)`."""
    if isinstance(schema, str):
        schema = named.get(schema, schema)
    if not (isinstance(schema, dict) and schema.get("type") == "record"):
        return lambda v: v
    named[schema["name"]] = schema
    work: list[tuple[str, Any]] = []
    for f in schema["fields"]:
        t = f["type"]
        if isinstance(t, list):
            branch = next(b for b in t if b != "null")
            kind = branch if isinstance(branch, str) else branch["type"]
            work.append((f["name"], kind if kind in _PRIMITIVES else tagger(branch, named)))
        elif isinstance(t, dict) and t.get("type") == "record":
            work.append((f["name"], tagger(t, named)))

    def tag(v: Any) -> Any:
        for name, how in work:
            x = v.get(name)
            if x is not None:
                if type(how) is str:
                    v[name] = (how, x)
                else:
                    how(x[1] if type(x) is tuple else x)
        return v

    return tag


def cpu(fn: Callable[[], None], n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best / n * 1e6


def measure(records: list[tuple[str, bytes, bytes]], repeat: int) -> dict[str, float]:
    values = [v for _, _, v in records]
    schema = orjson.loads(split_json(values[0])[0])
    parsed = fastavro.parse_schema(writer_schema(avro_schema_text(schema)))
    datum = datum_function(schema) or (lambda v: v)
    payloads = [split_json(v)[1] for v in values]
    datums = [datum(orjson.loads(p)) for p in payloads]
    tagged = [datum(orjson.loads(p)) for p in payloads]
    plain_datum = datum_function(schema, tuples=False) or (lambda v: v)
    plains = [plain_datum(orjson.loads(p)) for p in payloads]
    spavro_write = avro_writer(avro_schema_text(schema), b"")
    tag = tagger(writer_schema(avro_schema_text(schema)), {})
    config = build_config({"name": "cost", "topic.prefix": "bench", "database.hostname": "127.0.0.1",
                           "database.user": "u", "database.dbname": "d", "bootstrap.servers": "127.0.0.1:9",
                           "key.converter": "io.confluent.connect.avro.AvroConverter",
                           "value.converter": "io.confluent.connect.avro.AvroConverter",
                           "converter.schema.registry.url": "mock://cost"})
    key_conv, value_conv, _ = make_converters(config, lambda: False)
    assert key_conv is not None and value_conv is not None
    key_side, value_side = _Side(key_conv, "key"), _Side(value_conv, "value")
    write = fastavro.schemaless_writer

    def loads() -> None:
        for v in values:
            orjson.loads(split_json(v)[1])

    def parse() -> None:
        for p in payloads:
            orjson.loads(p)

    def to_datum() -> None:
        for p in payloads:
            datum(orjson.loads(p))

    def fastavro_of(ds: list[Any]) -> Callable[[], None]:
        def run() -> None:
            for d in ds:
                out = io.BytesIO()
                write(out, parsed, d)
                out.getvalue()
        return run

    def spavro_run() -> None:
        for d in plains:
            spavro_write(d)

    def tagging() -> None:
        for p in payloads:
            tag(datum(orjson.loads(p)))

    def side(s: _Side, which: int) -> Callable[[], None]:
        def run() -> None:
            for rec in records:
                s(rec[0], rec[which])
        return run

    n = len(records)
    side(key_side, 1)()  # registers the schemas before the timing
    side(value_side, 2)()
    for d in tagged:
        tag(d)
    return {"split+loads": cpu(loads, n, repeat), "datum": cpu(to_datum, n, repeat) - cpu(parse, n, repeat),
            "fastavro": cpu(fastavro_of(datums), n, repeat), "spavro": cpu(spavro_run, n, repeat),
            "tagged": cpu(fastavro_of(tagged), n, repeat),
            "tagging": cpu(tagging, n, repeat) - cpu(to_datum, n, repeat),
            "value": cpu(side(value_side, 2), n, repeat), "key": cpu(side(key_side, 1), n, repeat)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    names = args.workloads.split(",")
    with PostgresCluster() as pg:
        captured = {name: capture(pg, name, args.rows) for name in names}
    print(f"{'workload':10} " + " ".join(f"{c:>11}" for c in ("split+loads", "datum", "fastavro", "spavro", "tagged",
                                                              "tagging", "value", "key")), flush=True)
    for name in names:
        cost = measure(captured[name], args.repeat)
        print(f"{name:10} " + " ".join(f"{v:11.1f}" for v in cost.values()), flush=True)


if __name__ == "__main__":
    main()
