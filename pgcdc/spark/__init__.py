"""PySpark downstream of pgcdc: Debezium topics -> typed DataFrames -> exact current-state tables.

Needs the `spark` extra (pyspark>=4, pyarrow, pandas<3, deltalake); the rest of pgcdc never imports it, and
`pgcdc.spark.verify` needs only pyarrow/deltalake and psycopg. Names below load on first use.

    spark = local_session()
    raw = spark.read.format("kafka" or "pgcdc_kafka").option(...).load()   # same columns either way
    decoded = decode_changes(raw)                                         # typed rows per table + quarantine
    decoded = decode_changes(raw, fmt=AvroFormat(registry_url))           # Confluent's Avro wire format
    decoded = decode_changes(raw, fmt=CloudEventsAvroFormat(registry_url))  # CloudEvents with Avro data
    decoded = decode_changes(raw, fmt=ProtobufFormat(registry_url))       # Confluent's Protobuf wire format
    decoded = decode_changes(raw, fmt=JsonSchemaFormat(registry_url))     # Confluent's JSON Schema wire format
    apply_changes(spark, decoded, "/data/tables", fmt="delta")            # current state, idempotent
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "apply_changes": "apply", "read_quarantine": "apply", "read_table": "apply", "table_path": "apply",
    "Decoded": "changes", "TableChanges": "changes", "decode_changes": "changes",
    "AvroFormat": "avro", "avro_package": "avro", "KafkaDataSource": "reader", "DecodeOptions": "fieldcodec",
    "CloudEventsAvroFormat": "cloudevents_avro", "ProtobufFormat": "protobuf", "JsonSchemaFormat": "jsonschema",
    "row_codec": "schema",
    "local_session": "session", "stream_to_tables": "session", "kafka_package": "session",
    "delta_package": "session",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pgcdc.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pgcdc.spark.{module}"), name)
