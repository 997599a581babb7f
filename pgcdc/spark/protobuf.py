"""Confluent's Protobuf wire format (magic byte 0, 4-byte schema id, the message-index array, the Protobuf
message) as a RecordFormat for decode_changes: what pgcdc (or Kafka Connect) writes with
`value.converter=io.confluent.connect.protobuf.ProtobufConverter`.

    fmt = ProtobufFormat("http://registry:8081")   # one per job: it caches the schemas it fetched
    decoded = decode_changes(raw, fmt=fmt)          # the same tables as JSON (but see docs/spark.md, "Protobuf")

A version is the (topic, value schema id, key schema id) of a record, read from its first bytes in the JVM.
Each id's schema (the .proto text the converter registered) is fetched from the registry once (confluent-kafka's
client) and parsed (proto-schema-parser) into the message classes the protobuf runtime reads the records with
(pgcdc.converters.protobuf_schema builds them, as the writer side does) and into the Connect schema
ProtobufData.toConnectSchema gives, so the codecs of pgcdc.spark.schema apply unchanged. The records are decoded
in mapInArrow, one Arrow batch at a time, into the JsonConverter's payload JSON, which the JSON path then reads:
Protobuf records become the same change rows as JSON ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from pgcdc.spark.proto_text import compile_proto
from pgcdc.spark.wire import NOT_WIRE, WireFormat


class ProtobufFormat(WireFormat):
    """Confluent's Protobuf wire format, schemas from a registry by id (wire.py: the registry and the JSON path)."""

    kind = "Protobuf"

    def connect_schema(self, text: str) -> dict[str, Any]:
        return compile_proto(text).connect

    def decode(self, base: DataFrame) -> DataFrame:
        return _decode(base, dict(self.texts), dict(self.errors))


def _decode(base: DataFrame, texts: dict[int, str], errors: dict[int, str]) -> DataFrame:
    """`vjson`/`kjson`: each record's value and key as the JsonConverter's `{"payload": ...}`; `perr`: why a
    record could not be read (null when it was)."""
    out_schema = T.StructType([*base.schema.fields, T.StructField("vjson", T.StringType()),
                               T.StructField("kjson", T.StringType()), T.StructField("perr", T.StringType())])

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        readers: dict[int, Any] = {}  # id -> compiled schema, built once per task

        def read(record: bytes | None, schema_id: int | None) -> tuple[str | None, str | None]:
            if record is None:
                return None, None
            if schema_id is None:
                return None, NOT_WIRE
            if schema_id in errors:
                return None, errors[schema_id]
            reader = readers.get(schema_id)
            if reader is None:
                reader = readers[schema_id] = compile_proto(texts[schema_id])
            try:
                return json.dumps({"payload": reader.read(record, 5)}), None
            except Exception:  # bytes the schema cannot read (protobuf's DecodeError, a bad index): quarantined
                return None, f"cannot decode Protobuf with schema id {schema_id}"

        for batch in batches:
            values, keys = batch.column("value").to_pylist(), batch.column("key").to_pylist()
            vids, kids = batch.column("vid").to_pylist(), batch.column("kid").to_pylist()
            vjson, kjson, perr = [], [], []
            for v, k, vid, kid in zip(values, keys, vids, kids):
                vj, verr = read(v, vid)
                kj, kerr = read(k, kid)
                vjson.append(vj)
                kjson.append(kj)
                perr.append(verr or kerr)
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, pa.array(vjson, pa.string()), pa.array(kjson, pa.string()),
                 pa.array(perr, pa.string())], names=[*batch.schema.names, "vjson", "kjson", "perr"])

    return base.mapInArrow(decode, out_schema)
