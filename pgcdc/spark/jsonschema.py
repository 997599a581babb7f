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
from pgcdc.spark.wire import NOT_WIRE, WireFormat

class JsonSchemaFormat(WireFormat):
    """Confluent's JSON Schema wire format, schemas from a registry by id (wire.py: the registry and the JSON
    path)."""

    kind = "JSON Schema"
    json_decimals = True  # the payload is JsonConverter's: decimal.format decides its decimals

    def connect_schema(self, text: str) -> dict[str, Any]:
        return connect_schema(json.loads(text))

    def decode(self, base: DataFrame) -> DataFrame:
        errors = F.create_map(*(x for i, e in self.errors.items() for x in (F.lit(i), F.lit(e)))) \
            if self.errors else F.create_map().cast(T.MapType(T.LongType(), T.StringType()))

        def payload(c: str, schema_id: str) -> Column:
            """`{"payload":<the JSON after the id>}`, null for a null record or one not in the wire format."""
            body = F.expr(f"substring(`{c}`, 6)").cast("string")
            return F.when(F.col(schema_id).isNotNull(), F.concat(F.lit('{"payload":'), body, F.lit("}")))

        def problem(c: str, schema_id: str) -> Column:
            return F.when(F.col(c).isNull(), F.lit(None)).when(F.col(schema_id).isNull(), F.lit(NOT_WIRE)) \
                .otherwise(F.try_element_at(errors, F.col(schema_id)))

        return base.select(*base.columns, payload("value", "vid").alias("vjson"), payload("key", "kid").alias("kjson"),
                           F.coalesce(problem("value", "vid"), problem("key", "kid")).alias("perr"))
