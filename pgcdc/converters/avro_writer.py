"""The Avro binary encoding of a record: spavro's writers, built once per writer schema (avro_record.py).

spavro (a maintained Cython fork of Apache Avro's Python library) compiles a schema into a tree of writer
functions once, so a record costs the writes alone: measured on Debezium change events it takes 40-50% of
fastavro's `schemaless_writer` time for the same bytes (benchmarks/avro_cost.py). Its datum is the plain
form (an optional record a dict, not fastavro's (name, datum) tuple): avro_schema.datum_function(tuples=False).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import fastavro
import orjson
import spavro.schema

from pgcdc.converters.avro_record import record_writer
from pgcdc.converters.avro_schema import writer_schema


def avro_writer(text: str, header: bytes) -> Callable[[Any], bytes]:
    """`text`'s writer: a datum -> `header` followed by the datum's Avro binary encoding. The schema is parsed
    and its writer built on the first datum: a table whose change events are written from their parts
    (avro_events.py) may never need its envelope's (about 1 ms per table, most of it compiling)."""
    write: Any = None

    def encode(datum: Any) -> bytes:
        nonlocal write
        if write is None:
            write = record_writer(spavro.schema.parse(orjson.dumps(writer_schema(text)).decode()).to_json())
        out = io.BytesIO()
        out.write(header)
        write(out, datum)
        return out.getvalue()
    return encode


class WrittenSchemas(dict[bytes, Any]):
    """Wire header -> the schema (fastavro's parsed form) the records framed with it were written with, for a
    reader of this process's records (the embedded Event view of CloudEvents). `texts[header]` is set as each
    header is first used, and parsed on the first lookup: a connector whose records nobody reads here parses
    none (about 0.06 ms per change event's schema, measured, and the parsed schema kept for the process)."""

    __slots__ = ("texts",)

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[bytes, str] = {}

    def __missing__(self, header: bytes) -> Any:
        parsed = self[header] = fastavro.parse_schema(writer_schema(self.texts[header]))
        return parsed
