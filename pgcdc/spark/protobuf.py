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
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.changes import PROBE_COLUMNS, JsonFormat
from pgcdc.spark.fieldcodec import DecodeOptions
from pgcdc.spark.proto_text import compile_proto

_PASSED = ("topic", "partition", "offset", "key", "value")
NOT_WIRE = "not Confluent's wire format (magic byte 0, 4-byte schema id)"


def _schema_id(c: Column) -> Column:
    ok = (F.length(c) >= 6) & (F.substring(c, 1, 1) == F.lit(b"\x00"))
    return F.when(ok, F.conv(F.hex(F.substring(c, 2, 4)), 16, 10).cast("long"))


class ProtobufFormat:
    """Confluent's Protobuf wire format, schemas from a registry by id. `registry`: the registry's URL (the
    Confluent API; Apicurio's is under /apis/ccompat/v7); `conf`: more of confluent-kafka's client settings
    (`basic.auth.user.info`, `ssl.*`, ...). Reuse one across batches: fetched schemas are kept."""

    def __init__(self, registry: str, **conf: Any) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.url = registry
        self.client = SchemaRegistryClient({"url": registry, **conf})
        self.texts: dict[int, str] = {}  # id -> the registered .proto text
        self.connect: dict[int, str | None] = {}  # id -> Connect schema (JSON text), None when unusable
        self.errors: dict[int, str] = {}  # id -> why it cannot be used
        self.json = JsonFormat("vjson", "kjson")
        self.decoded: DataFrame | None = None

    def _fetch(self, schema_id: int) -> None:
        if schema_id in self.connect:
            return
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            text = self.client.get_schema(schema_id).schema_str
        except SchemaRegistryError as exc:
            if exc.http_status_code != 404:
                raise RuntimeError(f"schema registry {self.url}: schema id {schema_id}: {exc}") from None
            self.errors[schema_id] = f"schema id {schema_id} is not in the schema registry"
            self.connect[schema_id] = None
            return
        try:
            self.connect[schema_id] = json.dumps(compile_proto(text).connect)
            self.texts[schema_id] = text
        except (ValueError, KeyError, TypeError) as exc:
            self.errors[schema_id] = f"schema id {schema_id} is not a Connect Protobuf schema: {exc}"
            self.connect[schema_id] = None

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        if self.decoded is not None:  # the previous batch's
            self.decoded.unpersist()
        base = raw.select(*_PASSED, _schema_id(F.col("value")).alias("vid"), _schema_id(F.col("key")).alias("kid"))
        ids = base.select(F.explode(F.array("vid", "kid")).alias("id")).filter("id IS NOT NULL").distinct()
        for row in ids.collect():
            self._fetch(row["id"])
        decoded = _decode(base, dict(self.texts), dict(self.errors))
        probed = self.json.probe(decoded, options)
        kept = [c for c in probed.columns if c not in ("vh", "kh", "malformed", "vid", "kid", "perr")]
        self.decoded = probed.select(*kept, F.col("vid").alias("vh"), F.col("kid").alias("kh"),
                                     F.col("perr").alias("malformed")).persist()
        return self.decoded.select(*PROBE_COLUMNS)

    def schemas(self, version: dict[str, Any]) -> tuple[str | None, str | None]:
        return (None if version["vh"] is None else self.connect.get(version["vh"]),
                None if version["kh"] is None else self.connect.get(version["kh"]))

    def rows(self, good: DataFrame, version: dict[str, Any]) -> DataFrame:
        assert self.decoded is not None
        return self.decoded.filter((F.col("topic") == version["topic"]) & F.col("vh").eqNullSafe(F.lit(version["vh"]))
                                   & F.col("kh").eqNullSafe(F.lit(version["kh"])))

    def parse(self, rows: DataFrame, value_raw: T.StructType | None, key_raw: T.StructType,
              flat: bool = False) -> DataFrame:
        return self.json.parse(rows, value_raw, key_raw, flat)


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
