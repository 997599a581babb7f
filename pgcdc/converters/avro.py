"""Confluent's AvroConverter: Confluent wire format (magic byte 0, 4-byte schema id, Avro binary), the schema
registered in a Schema Registry (Confluent's or any serving its API) through confluent-kafka's client, the
record encoded by fastavro.

Each schema version is compiled once (Avro text, fastavro writer schema, datum function) and registered once
per subject in this process. A registry that cannot be reached, or that refuses the schema, holds the stream:
the record waits, the call retries with a growing pause and logs one line per attempt, so no record is written
without its schema id and no position after it is confirmed.
"""

from __future__ import annotations

import io
import logging
import struct
import time
from collections.abc import Callable
from typing import Any

import fastavro
from confluent_kafka.schema_registry import (Schema, record_subject_name_strategy,
                                             topic_record_subject_name_strategy, topic_subject_name_strategy)
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.converters.avro_schema import avro_schema_text, datum_function, writer_schema
from pgcdc.converters.registry import probe, registry_client
from pgcdc.converters.settings import ConverterSpec
from pgcdc.errors import SinkError

log = logging.getLogger(__name__)

_STRATEGIES = {
    "io.confluent.kafka.serializers.subject.TopicNameStrategy": topic_subject_name_strategy,
    "io.confluent.kafka.serializers.subject.RecordNameStrategy": record_subject_name_strategy,
    "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy": topic_record_subject_name_strategy,
}
_HEADER = struct.Struct(">bI")
MAX_PAUSE_S = 30.0


class AvroConverter:
    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        self.is_key = spec.is_key
        self.field = MessageField.KEY if spec.is_key else MessageField.VALUE
        self.url = spec.get("schema.registry.url")
        try:
            self.client = registry_client(spec)
        except ValueError as exc:
            raise SinkError(f"{spec.side}.converter.schema.registry.url: {exc}") from None
        probe(self.client, spec)
        name = "key.subject.name.strategy" if spec.is_key else "value.subject.name.strategy"
        self.strategy = _STRATEGIES[spec.get(name, "io.confluent.kafka.serializers.subject.TopicNameStrategy")]
        self.auto_register = spec.get("auto.register.schemas", True)
        self.use_latest = spec.get("use.latest.version", False)
        self.latest_strict = spec.get("latest.compatibility.strict", True)
        self.stopping = stopping
        self.side = spec.side
        self.registrations = 0  # registry calls made: once per schema version and subject

    def prepare(self, schema: dict[str, Any] | None) -> PreparedAvro:
        return PreparedAvro(self, schema)

    def schema_id(self, subject: str, text: str) -> tuple[int, str]:
        """(the id records are written with, the schema text they are encoded with), retried until the
        registry answers."""
        pause = 0.5
        while True:
            try:
                self.registrations += 1
                return self._schema_id(subject, text)
            except Exception as exc:  # the registry's refusal or a network error: hold the stream and retry
                if self.stopping():
                    raise SinkError(f"schema registry {self.url}: subject {subject}: {_reason(exc)}") from None
                log.warning("schema registry %s: subject %s: %s; records wait, retrying in %.1f s", self.url,
                            subject, _reason(exc), pause)
                time.sleep(pause)
                pause = min(pause * 2, MAX_PAUSE_S)

    def _schema_id(self, subject: str, text: str) -> tuple[int, str]:
        schema = Schema(text, "AVRO")
        if self.use_latest:
            latest = self.client.get_latest_version(subject)
            if self.latest_strict and not self.client.test_compatibility(subject, schema, "latest"):
                raise ValueError("the latest registered schema cannot read this record's schema "
                                 "(latest.compatibility.strict=true)")
            return latest.schema_id, latest.schema.schema_str
        if self.auto_register:
            return self.client.register_schema(subject, schema), text
        return self.client.lookup_schema(subject, schema).schema_id, text

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            close()


def _reason(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


class PreparedAvro:
    """One Connect schema: its Avro text and datum function, and per subject the id and the fastavro writer."""

    __slots__ = ("connect_schema", "conv", "datum", "record_name", "subjects", "text")

    def __init__(self, conv: AvroConverter, schema: dict[str, Any] | None) -> None:
        if schema is None:
            raise SinkError(f"{conv.side}.converter: io.confluent.connect.avro.AvroConverter needs the record's "
                            "schema")
        self.conv = conv
        self.connect_schema = schema
        self.text = avro_schema_text(schema)
        self.datum = datum_function(schema) or (lambda v: v)
        self.record_name = schema.get("name")
        self.subjects: dict[str, tuple[bytes, Any]] = {}  # topic -> (wire header, parsed writer schema)

    def _subject(self, topic: str) -> tuple[bytes, Any]:
        conv = self.conv
        subject = conv.strategy(SerializationContext(topic, conv.field), self.record_name)
        if subject is None:  # a record-name strategy and a schema without a name (never a Debezium struct)
            raise SinkError(f"{conv.side}.converter: topic {topic}: the subject name strategy needs a named schema")
        schema_id, text = conv.schema_id(subject, self.text)
        parsed = fastavro.parse_schema(writer_schema(text))
        entry = self.subjects[topic] = (_HEADER.pack(0, schema_id), parsed)
        return entry

    def __call__(self, topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        entry = self.subjects.get(topic)
        if entry is None:
            entry = self._subject(topic)
        header, parsed = entry
        out = io.BytesIO()
        out.write(header)
        fastavro.schemaless_writer(out, parsed, self.datum(value))
        return out.getvalue()

