"""What the record formats in Confluent's wire format share (magic byte 0, 4-byte schema id, then the payload):
the ids read in the JVM, each id's schema fetched from the registry once and read into a Connect schema, and the
records turned into the JsonConverter's `{"payload": …}` in columns of their own (`vjson`, `kjson`, with `perr`:
why a record cannot be read), which the JSON path then reads. A format says how a registered schema becomes a
Connect schema (`connect_schema`) and how the records become those columns (`decode`): ProtobufFormat
(protobuf.py) and JsonSchemaFormat (jsonschema.py). Avro (avro.py) decodes into the codecs' types itself.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.changes import PROBE_COLUMNS, JsonFormat
from pgcdc.spark.fieldcodec import DecodeOptions

PASSED = ("topic", "partition", "offset", "key", "value")
NOT_WIRE = "not Confluent's wire format (magic byte 0, 4-byte schema id)"


def schema_id(c: Column) -> Column:
    ok = (F.length(c) >= 6) & (F.substring(c, 1, 1) == F.lit(b"\x00"))
    return F.when(ok, F.conv(F.hex(F.substring(c, 2, 4)), 16, 10).cast("long"))


class WireFormat:
    """A RecordFormat for Confluent's wire format. `registry`: the registry's URL (the Confluent API; Apicurio's
    is under /apis/ccompat/v7); `conf`: more of confluent-kafka's client settings (`basic.auth.user.info`,
    `ssl.*`, ...). Reuse one across batches: fetched schemas are kept."""

    kind = ""  # the format's name in a quarantine reason
    json_decimals = False  # (RecordFormat) JSON Schema's decimals follow decimal.format; Protobuf's are bytes

    def __init__(self, registry: str, **conf: Any) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.url = registry
        self.client = SchemaRegistryClient({"url": registry, **conf})
        self.texts: dict[int, str] = {}  # id -> the registered schema text
        self.connect: dict[int, str | None] = {}  # id -> Connect schema (JSON text), None when unusable
        self.errors: dict[int, str] = {}  # id -> why it cannot be used
        self.json = JsonFormat("vjson", "kjson")
        self.decoded: DataFrame | None = None

    def connect_schema(self, text: str) -> dict[str, Any]:
        """The Connect schema behind a registered schema text (ValueError, KeyError, TypeError: none)."""
        raise NotImplementedError

    def decode(self, base: DataFrame) -> DataFrame:
        """`base` (PASSED, vid, kid) with `vjson`, `kjson` and `perr` added."""
        raise NotImplementedError

    def _fetch(self, schema_id: int) -> None:
        if schema_id in self.connect:
            return
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            text = self.client.get_schema(schema_id).schema_str or ""
        except SchemaRegistryError as exc:
            if exc.http_status_code != 404:
                raise RuntimeError(f"schema registry {self.url}: schema id {schema_id}: {exc}") from None
            self.errors[schema_id] = f"schema id {schema_id} is not in the schema registry"
            self.connect[schema_id] = None
            return
        try:
            self.connect[schema_id] = json.dumps(self.connect_schema(text))
            self.texts[schema_id] = text
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.errors[schema_id] = f"schema id {schema_id} is not a Connect {self.kind} schema: {exc}"
            self.connect[schema_id] = None

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        if self.decoded is not None:  # the previous batch's
            self.decoded.unpersist()
        base = raw.select(*PASSED, schema_id(F.col("value")).alias("vid"), schema_id(F.col("key")).alias("kid"))
        ids = base.select(F.explode(F.array("vid", "kid")).alias("id")).filter("id IS NOT NULL").distinct()
        for row in ids.collect():
            self._fetch(row["id"])
        probed = self.json.probe(self.decode(base), options)
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
              flat: bool = False, value_text: T.StructType | None = None,
              key_text: T.StructType | None = None) -> DataFrame:
        return self.json.parse(rows, value_raw, key_raw, flat, value_text, key_text)
