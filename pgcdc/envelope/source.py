"""The `source` and `transaction` blocks, and the schemas of the transaction and message topics."""

from __future__ import annotations

from typing import Any

# The Debezium release whose events pgcdc reproduces; reported in source.version (docs/compatibility.md).
DEBEZIUM_VERSION = "3.6.3.Final"

SNAPSHOT_ENUM = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

SOURCE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "version"},
        {"type": "string", "optional": False, "field": "connector"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
        {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
         "parameters": {"allowed": SNAPSHOT_ENUM}, "default": "false", "field": "snapshot"},
        {"type": "string", "optional": False, "field": "db"},
        {"type": "string", "optional": True, "field": "sequence"},
        {"type": "int64", "optional": True, "field": "ts_us"},
        {"type": "int64", "optional": True, "field": "ts_ns"},
        {"type": "string", "optional": False, "field": "schema"},
        {"type": "string", "optional": False, "field": "table"},
        {"type": "int64", "optional": True, "field": "txId"},
        {"type": "int64", "optional": True, "field": "lsn"},
        {"type": "int64", "optional": True, "field": "xmin"},
    ],
    "optional": False,
    "name": "io.debezium.connector.postgresql.Source",
    "version": 1,
}

TRANSACTION_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": False, "field": "total_order"},
        {"type": "int64", "optional": False, "field": "data_collection_order"},
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
}

TX_KEY_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"type": "string", "optional": False, "field": "id"}],
    "optional": False,
    "name": "io.debezium.connector.common.TransactionMetadataKey",
}

TX_VALUE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "status"},
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": True, "field": "event_count"},
        {"type": "array", "items": {
            "type": "struct",
            "fields": [
                {"type": "string", "optional": False, "field": "data_collection"},
                {"type": "int64", "optional": False, "field": "event_count"},
            ],
            "optional": False,
        }, "optional": True, "field": "data_collections"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
    ],
    "optional": False,
    "name": "io.debezium.connector.common.TransactionMetadataValue",
}

MESSAGE_KEY_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"type": "string", "optional": True, "field": "prefix"}],
    "optional": False,
    "name": "io.debezium.connector.postgresql.MessageKey",
}


def message_value_schema() -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {**SOURCE_SCHEMA, "field": "source"},
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            {"type": "int64", "optional": True, "field": "ts_us"},
            {"type": "int64", "optional": True, "field": "ts_ns"},
            {"type": "struct", "fields": [
                {"type": "string", "optional": False, "field": "prefix"},
                {"type": "bytes", "optional": False, "field": "content"},
            ], "optional": True, "name": "io.debezium.connector.postgresql.Message", "field": "message"},
        ],
        "optional": False,
        "name": "io.debezium.connector.postgresql.MessageValue",
    }
