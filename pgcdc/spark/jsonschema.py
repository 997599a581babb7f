"""Confluent's JSON Schema wire format (magic byte 0, 4-byte schema id, the value's JSON) as a RecordFormat for
decode_changes: what pgcdc (or Kafka Connect) writes with
`value.converter=io.confluent.connect.json.JsonSchemaConverter`.

    fmt = JsonSchemaFormat("http://registry:8081")   # one per job: it caches the schemas it fetched
    decoded = decode_changes(raw, fmt=fmt)            # the same tables as JSON

The JSON after the id is JsonConverter's payload for the same record (measured against Confluent's converter,
tests/unit/test_confluent_jsonschema.py), so each record becomes `{"payload": …}` by a Spark expression (no
Python per record) and the JSON path reads it; the Connect schema the codecs need is read back from each id's
registered JSON Schema once (pgcdc.converters.jsonschema_read). A version is (topic, value schema id, key
schema id).
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.converters.jsonschema_read import connect_schema
from pgcdc.spark.changes import PROBE_COLUMNS, JsonFormat
from pgcdc.spark.fieldcodec import DecodeOptions

_PASSED = ("topic", "partition", "offset", "key", "value")
NOT_WIRE = "not Confluent's wire format (magic byte 0, 4-byte schema id)"


def _schema_id(c: Column) -> Column:
    ok = (F.length(c) >= 6) & (F.substring(c, 1, 1) == F.lit(b"\x00"))
    return F.when(ok, F.conv(F.hex(F.substring(c, 2, 4)), 16, 10).cast("long"))


class JsonSchemaFormat:
    """Confluent's JSON Schema wire format, schemas from a registry by id. `registry`: the registry's URL (the
    Confluent API; Apicurio's is under /apis/ccompat/v7); `conf`: more of confluent-kafka's client settings
    (`basic.auth.user.info`, `ssl.*`, ...). Reuse one across batches: fetched schemas are kept."""

    def __init__(self, registry: str, **conf: Any) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.url = registry
        self.client = SchemaRegistryClient({"url": registry, **conf})
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
            self.connect[schema_id] = json.dumps(connect_schema(json.loads(text or "")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.errors[schema_id] = f"schema id {schema_id} is not a Connect JSON Schema: {exc}"
            self.connect[schema_id] = None

    def _payload(self, c: str, schema_id: str) -> Column:
        """`{"payload":<the JSON after the id>}`, null for a null record or one without a usable schema."""
        body = F.expr(f"substring(`{c}`, 6)").cast("string")
        return F.when(F.col(schema_id).isNotNull(), F.concat(F.lit('{"payload":'), body, F.lit("}")))

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        if self.decoded is not None:  # the previous batch's
            self.decoded.unpersist()
        base = raw.select(*_PASSED, _schema_id(F.col("value")).alias("vid"), _schema_id(F.col("key")).alias("kid"))
        ids = base.select(F.explode(F.array("vid", "kid")).alias("id")).filter("id IS NOT NULL").distinct()
        for row in ids.collect():
            self._fetch(row["id"])
        errors = F.create_map(*(x for i, e in self.errors.items() for x in (F.lit(i), F.lit(e)))) \
            if self.errors else F.create_map().cast(T.MapType(T.LongType(), T.StringType()))

        def problem(c: str, schema_id: str) -> Column:
            return F.when(F.col(c).isNull(), F.lit(None)).when(F.col(schema_id).isNull(), F.lit(NOT_WIRE)) \
                .otherwise(F.try_element_at(errors, F.col(schema_id)))

        decoded = base.select(*base.columns, self._payload("value", "vid").alias("vjson"),
                              self._payload("key", "kid").alias("kjson"),
                              F.coalesce(problem("value", "vid"), problem("key", "kid")).alias("perr"))
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
