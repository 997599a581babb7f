"""The `source` and `transaction` blocks, and the schemas of the transaction and message topics."""

from __future__ import annotations

import time
from collections.abc import Callable
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
        {"type": "string", "optional": True, "field": "origin"},
        {"type": "int64", "optional": True, "field": "origin_lsn"},
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

def id_key_schema(name: str) -> dict[str, Any]:
    """Debezium's key of a record about the connector (a transaction, a notification): one string `id`."""
    return {
        "type": "struct",
        "fields": [{"type": "string", "optional": False, "field": "id"}],
        "optional": False,
        "name": name,
        "version": 1,
    }


TX_KEY_SCHEMA = id_key_schema("io.debezium.connector.common.TransactionMetadataKey")

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
            "optional": True,
            "name": "event.collection",
            "version": 1,
        }, "optional": True, "field": "data_collections"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
    ],
    "optional": False,
    "name": "io.debezium.connector.common.TransactionMetadataValue",
    "version": 1,
}

MESSAGE_KEY_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"type": "string", "optional": True, "field": "prefix"}],
    "optional": False,
    "name": "io.debezium.connector.postgresql.MessageKey",
    "version": 1,
}


def message_content(binary_mode: str) -> Callable[[bytes], str]:
    """A logical-decoding message's content in JsonConverter's JSON: Debezium converts it as a bytea column of
    binary.handling.mode (bytes: base64 in the JSON; base64, base64-url-safe, hex: a string; measured on 3.6)."""
    import base64

    return {"hex": lambda b: b.hex(), "base64-url-safe": lambda b: base64.urlsafe_b64encode(b).decode()}.get(
        binary_mode, lambda b: base64.b64encode(b).decode())


def message_value_schema(binary_mode: str = "bytes") -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            {**SOURCE_SCHEMA, "field": "source"},
            {**TRANSACTION_SCHEMA, "field": "transaction"},
            {"type": "struct", "fields": [
                {"type": "string", "optional": True, "field": "prefix"},
                {"type": "bytes" if binary_mode == "bytes" else "string", "optional": True, "field": "content"},
            ], "optional": False, "name": "io.debezium.connector.postgresql.Message", "version": 1,
             "field": "message"},
        ],
        "optional": False,
        "name": "io.debezium.connector.postgresql.MessageValue",
        "version": 1,
    }


HEARTBEAT_KEY_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"type": "string", "optional": False, "field": "serverName"}],
    "optional": False,
    "name": "io.debezium.connector.common.ServerNameKey",
    "version": 1,
}

HEARTBEAT_VALUE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [{"type": "int64", "optional": False, "field": "ts_ms"}],
    "optional": False,
    "name": "io.debezium.connector.common.Heartbeat",
    "version": 1,
}

STRING_HEADER_SCHEMA: dict[str, Any] = {"type": "string", "optional": False}


def context_headers(topic_prefix: str, run_id: str, with_schema: bool = True) -> list[tuple[str, bytes]]:
    """Debezium 3.x's `__debezium.context.*` headers, on every change record and tombstone."""
    import orjson

    def value(text: str) -> bytes:
        return orjson.dumps({"schema": STRING_HEADER_SCHEMA, "payload": text} if with_schema else text)

    return [
        ("__debezium.context.connectorLogicalName", value(topic_prefix)),
        ("__debezium.context.taskId", value("0")),
        ("__debezium.context.connectorName", value("postgresql")),
        ("__debezium.context.runId", value(run_id)),
    ]


def uuid7() -> str:
    """A time-ordered UUID (version 7, RFC 9562): 48-bit milliseconds, then random bits."""
    import os
    import uuid

    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))
