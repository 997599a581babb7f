"""The oracle's CloudEventsConverter mode: Debezium's SourceRecords through `io.debezium.converters.
CloudEventsConverter`, as a Kafka Connect worker configured with it for keys and values would write them.

The config's `"cloudevents"` member holds the converter's options (`serializer.type`, `json.*`, `avro.*`, …).
Where Avro is involved, the converter gets Confluent's AvroConverter over a MockSchemaRegistryClient (Confluent
7.0.16 refuses `mock://` URLs), configured with the `avro.*` options as the converter would configure its own;
`avro.schema.registry.url` still names the registry in the `dataschema` attribute. Record headers reach the
converter as a worker's JsonConverter header converter (schemas on) writes them, for `metadata.source=header`.

Each line: `{"topic", "key", "value", "schemas"}` with key and value as hex (null for a null record) and
`schemas` the registry's schemas registered while converting that record, `{id: text}`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.conformance.oracle import record_consumer


def cloudevents_consumer(jpype: Any, options: dict[str, str], out: Any, state: dict[str, Any],
                         max_records: int | None, enough: threading.Event) -> Any:
    JMap = jpype.JClass("java.util.HashMap")
    client = jpype.JClass("io.confluent.kafka.schemaregistry.client.MockSchemaRegistryClient")()
    JAvro = jpype.JClass("io.confluent.connect.avro.AvroConverter")
    JCloudEvents = jpype.JClass("io.debezium.converters.CloudEventsConverter")
    JJson = jpype.JClass("org.apache.kafka.connect.json.JsonConverter")
    JRecordHeaders = jpype.JClass("org.apache.kafka.common.header.internals.RecordHeaders")

    def jmap(d: dict[str, str]) -> Any:
        m = JMap()
        for k, v in d.items():
            m.put(k, v)
        return m

    uses_avro = "avro" in (options.get("serializer.type", "json").lower(),
                           options.get("data.serializer.type", "json").lower())
    converters = {}
    for side in ("key", "value"):
        avro = None
        if uses_avro:
            avro = JAvro(client)
            avro.configure(jmap({k[5:]: v for k, v in options.items() if k.startswith("avro.")}), False)
        converters[side] = JCloudEvents(avro) if avro is not None else JCloudEvents()
        converters[side].configure(jmap(options), side == "key")
    header_converter = JJson()
    header_converter.configure(jmap({"schemas.enable": "true", "converter.type": "header"}))
    known = {"n": 0}

    def new_schemas() -> dict[int, str]:
        found = {}
        while True:
            try:
                schema = client.getSchemaById(known["n"] + 1)
            except Exception:
                return found
            known["n"] += 1
            found[known["n"]] = str(schema.canonicalString())

    def kafka_headers(r: Any, topic: Any) -> Any:
        headers = JRecordHeaders()
        for h in r.headers():
            headers.add(h.key(), header_converter.fromConnectHeader(topic, h.key(), h.schema(), h.value()))
        return headers

    def hexed(data: Any) -> str | None:
        return None if data is None else bytes(data).hex()

    def line_of(event: Any) -> str:
        r = event.record()
        topic = r.topic()
        headers = kafka_headers(r, topic)
        key = converters["key"].fromConnectData(topic, headers, r.keySchema(), r.key())
        value = converters["value"].fromConnectData(topic, headers, r.valueSchema(), r.value())
        return json.dumps({"topic": str(topic), "key": hexed(key), "value": hexed(value), "schemas": new_schemas()})

    return record_consumer(jpype, line_of, out, state, max_records, enough)
