"""Debezium's CloudEventsConverter (io.debezium.converters.CloudEventsConverter, Debezium 3.6) for the
PostgreSQL connector's change events: CloudEvents 1.0 in structured mode, the event in JSON or Avro and its
`data` (the envelope's `before` and `after`) in JSON or Avro.

What Debezium writes, in this order (CloudEventsConverter.convertToCloudEventsFormat, PostgresCloudEventsMaker):
`id` (`name:<topic.prefix>;lsn:<lsn>;txId:<txId>;sequence:<sequence>`, Java's text of each source field, `null`
when absent), `source` (`/debezium/postgresql/<topic.prefix>`), `specversion` (`1.0`), `type`
(`io.debezium.connector.postgresql.DataChangeEvent`), `time` (source `ts_ms` as `yyyy-MM-dd'T'HH:mm:ss.SSSZ`,
UTC), `datacontenttype` (`application/json` or `application/avro`), `dataschema` (Avro data only:
`<registry urls>/schemas/ids/<id>`), then with `extension.attributes.enable` `iodebeziumop`, one
`iodebezium<field>` per source field (the name's ASCII letters and digits; int64 values as strings) and
`iodebeziumtxid`, `iodebeziumtxtotalorder`, `iodebeziumtxdatacollectionorder`; last `data`.

A record whose schema is not a change event envelope (keys, transaction metadata, heartbeats, logical-decoding
messages) and a tombstone are written as null, as Debezium's converter returns null for them.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.converters.avro import AvroConverter
from pgcdc.converters.settings import APICURIO_AVRO, AVRO, ConverterSpec
from pgcdc.envelope.connect import dumps
from pgcdc.envelope.jsontext import jackson
from pgcdc.envelope.naming import adjust_name
from pgcdc.errors import ConversionError
from pgcdc.transforms.codec import float_fixer

CONNECTOR = "postgresql"  # the source's `connector`, which names the CloudEvents provider Debezium picks
TYPE = f"io.debezium.connector.{CONNECTOR}.DataChangeEvent"
DATA_SCHEMA_NAME = f"io.debezium.connector.{CONNECTOR}.Data"
CONTENT_TYPE = {"json": "application/json", "avro": "application/avro"}
# TransactionMonitor.TRANSACTION_BLOCK_SCHEMA's fields; every one an optional extension attribute.
APICURIO_URL = "avro.apicurio.registry.url"  # CloudEventsConverter: Apicurio's converter, not Confluent's
TX_FIELDS = (("id", "string"), ("total_order", "int64"), ("data_collection_order", "int64"))
# convertToCeExtensionSchema: CloudEvents has no 64-bit integers, so int64 attributes are strings.
_EXTENSION_TYPE = {"boolean": "boolean", "int8": "int32", "int16": "int32", "int32": "int32", "int64": "string",
                   "string": "string"}
_NOT_NAME = re.compile(r"[^A-Za-z0-9]")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# (source, op, transaction, id, type, the source's extension attributes)
Meta = tuple[dict[str, Any], str, Any, str, str, list[Any]]


def extension_name(field: str) -> str:
    """CloudEventsConverter.adjustExtensionName: `iodebezium` and the field name's ASCII letters and digits."""
    return "iodebezium" + _NOT_NAME.sub("", field)


def event_time(ts_ms: int) -> str:
    """SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX") in UTC: milliseconds and `Z`."""
    t = _EPOCH + dt.timedelta(milliseconds=ts_ms)
    return f"{t.year:04d}-{t:%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"


def _text(v: Any) -> str:
    return "null" if v is None else str(v)


def _null(topic: str, value: Any, headers: Any = None) -> bytes | None:
    return None


def metadata_sources(text: str) -> tuple[str, str, str]:
    """CloudEventsConverterConfig.metadataSource: (global, id's, type's) source, each `value`, `header` or
    `generate` (the settings have checked the list)."""
    items = [i.strip() for i in text.split(",")]
    custom = {n.strip(): src.strip().lower() for n, _, src in (i.partition(":") for i in items[1:])}
    glob = items[0].lower()
    return glob, custom.get("id", glob), custom.get("type", glob)


def header_value(headers: dict[str, bytes], name: str, optional: bool = False) -> Any:
    """A header the header converter wrote (JsonConverter with schemas: its payload); KeyError if absent."""
    raw = headers.get(name)
    if raw is None:
        if optional:
            return None
        raise ConversionError(f"CloudEventsConverter: header `{name}` was not provided")
    value = orjson.loads(raw)
    return value["payload"] if isinstance(value, dict) and value.keys() == {"schema", "payload"} else value


def source_fields(fields: list[dict[str, Any]], side: str) -> list[tuple[str, str, bool, dict[str, Any]]]:
    """Per source field: (attribute name, field, int64, the attribute's Connect schema)."""
    try:
        return [(extension_name(f["field"]), f["field"], f["type"] == "int64",
                 _field(extension_name(f["field"]), _EXTENSION_TYPE[f["type"]], bool(f.get("optional"))))
                for f in fields]
    except KeyError as exc:
        raise ConversionError(f"{side}.converter: a source field of type {exc} cannot be a CloudEvents "
                              "extension attribute") from None


def _field(name: str, connect_type: str, optional: bool) -> dict[str, Any]:
    return {"type": connect_type, "optional": optional, "field": name}


class CloudEventsConverter:
    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.events = spec.get("serializer.type", "json")
        self.data = spec.get("data.serializer.type", "json")
        self.extensions = bool(spec.get("extension.attributes.enable", True))
        self.schema_name = spec.get("schema.cloudevents.name")
        self.name_mode = spec.get("schema.name.adjustment.mode", "avro")
        self.data_schemas = bool(spec.get("json.schemas.enable", True))
        self.metadata, self.id_source, self.type_source = metadata_sources(spec.get(
            "metadata.source", "value,id:generate,type:generate,traceparent:header,dataSchemaName:generate"))
        self.wants_headers = "header" in (self.metadata, self.id_source, self.type_source)
        self.header_sources: dict[bytes, list[Any]] = {}  # a `source` header's schema JSON -> its attributes
        self.avro: Any = None  # AvroConverter, or Apicurio's (ApicurioReferencingAvro)
        self.urls = ""
        if "avro" in (self.events, self.data):
            # The converter configures its Avro converter with the `avro.*` options, always as a value converter:
            # Apicurio's when `avro.apicurio.registry.url` is set (whatever else is), else Confluent's.
            inner = tuple((k[5:], v) for k, v in spec.options if k.startswith("avro."))
            url = spec.get(APICURIO_URL)
            if url is not None:
                from pgcdc.converters.apicurio import ApicurioAvroConverter
                from pgcdc.converters.apicurio_refs import ApicurioReferencingAvro

                self.avro = ApicurioReferencingAvro(ApicurioAvroConverter(
                    ConverterSpec("value", APICURIO_AVRO, inner), stopping))
            else:
                url = spec.get("avro.schema.registry.url")
                self.avro = AvroConverter(ConverterSpec("value", AVRO, inner), stopping)
            # Configuration.getStrings splits the list without trimming; `dataschema` joins it again with ","
            self.urls = ",".join(u for u in url.split(",") if u.strip())

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return _null
        if self.metadata == "header":  # an event wherever the headers hold `source` and `op`
            if schema.get("type") != "struct":
                return self._not_a_struct
            return PreparedEvents(self, schema)
        # Envelope.isEnvelopeSchema: the schema name ends with `.Envelope`; anything else is not an event.
        if schema.get("type") != "struct" or not str(schema.get("name")).endswith(".Envelope"):
            return _null
        return PreparedEvents(self, schema)

    def _not_a_struct(self, topic: str, value: Any, headers: Any = None) -> bytes | None:
        h = dict(headers or ())
        if value is None or "source" not in h or "op" not in h:  # not an event: checked first, as Debezium does
            return None
        raise ConversionError(f"{self.side}.converter: topic {topic}: CloudEventsConverter: mismatching schema "
                              "(not a struct)")

    def close(self) -> None:
        if self.avro is not None:
            self.avro.close()


class PreparedEvents:
    """One envelope schema: its `data` schema, the extension attributes it gives, the event's writer."""

    def __init__(self, conv: CloudEventsConverter, schema: dict[str, Any]) -> None:
        self.conv = conv
        fields = {f["field"]: f for f in schema["fields"]}
        # The data: `before` and `after` of an envelope; with metadata from headers, every field of the value.
        self.data_fields = [f["field"] for f in schema["fields"]] if conv.metadata == "header" else ["before", "after"]
        self.data_schema = {"type": "struct", "fields": [fields[f] for f in self.data_fields], "optional": False,
                            "name": DATA_SCHEMA_NAME}
        self.source_fields = [] if conv.metadata == "header" else source_fields(fields["source"]["fields"],
                                                                                  conv.side)
        self.fix = float_fixer(self.data_schema)
        self.data_json = b'{"schema":' + jackson(orjson.dumps(self.data_schema)) + b',"payload":'
        self.data_avro: Any = None
        if conv.avro is not None:
            self.data_avro = conv.avro.prepare(self.data_schema)
        # (server, database, source attributes) -> the event's writer
        self.event_avro: dict[tuple[str, str, int], Any] = {}

    def metadata(self, value: dict[str, Any], headers: Any) -> Meta | None:
        """(source, op, transaction, id, type, source attributes) from the value or the headers (None: no event)."""
        conv = self.conv
        h = dict(headers or ())  # the last header of a name, as Headers.lastHeader
        if conv.metadata == "header":
            if "source" not in h or "op" not in h:
                return None
            source, op, tx = header_value(h, "source"), header_value(h, "op"), header_value(h, "transaction", True)
            schema_json = h["source"].partition(b',"payload":')[0]
            fields = conv.header_sources.get(schema_json)
            if fields is None:
                schema = orjson.loads(h["source"]).get("schema") or {}
                fields = conv.header_sources[schema_json] = source_fields(schema.get("fields", []), conv.side)
        else:
            source, op, tx, fields = value["source"], value["op"], value.get("transaction"), self.source_fields
        ce_id = header_value(h, "id") if conv.id_source == "header" else (
            f"name:{source['name']};lsn:{_text(source.get('lsn'))};txId:{_text(source.get('txId'))};"
            f"sequence:{_text(source.get('sequence'))}")
        ce_type = header_value(h, "type") if conv.type_source == "header" else TYPE
        return source, op, tx, ce_id, ce_type, fields

    def attributes(self, meta: Meta, dataschema: str | None) -> dict[str, Any]:
        source, op, tx, ce_id, ce_type, fields = meta
        out = {"id": ce_id, "source": f"/debezium/{source['connector']}/{source['name']}", "specversion": "1.0",
               "type": ce_type, "time": event_time(source["ts_ms"]), "datacontenttype": CONTENT_TYPE[self.conv.data]}
        if dataschema is not None:
            out["dataschema"] = dataschema
        if self.conv.extensions:
            out["iodebeziumop"] = op
            for name, field, int64, _ in fields:
                v = source.get(field)
                out[name] = str(v) if int64 and v is not None else v
            tx = tx or {}
            for field, t in TX_FIELDS:
                v = tx.get(field)
                out[extension_name("tx" + field)] = str(v) if t == "int64" and v is not None else v
        return out

    def event_schema(self, source: dict[str, Any], source_attributes: list[Any]) -> dict[str, Any]:
        """The event's Connect schema (Avro events): the attributes' types, `data` as bytes."""
        conv = self.conv
        name = conv.schema_name or f"{source['name']}.{source['db']}.CloudEvents.Envelope"
        fields = [_field(n, "string", False) for n in ("id", "source", "specversion", "type", "time",
                                                          "datacontenttype", "dataschema")]
        if conv.extensions:
            fields.append(_field("iodebeziumop", "string", False))
            fields += [f for _, _, _, f in source_attributes]
            fields += [_field(extension_name("tx" + n), _EXTENSION_TYPE[t], True) for n, t in TX_FIELDS]
        fields.append(_field("data", "bytes", False))
        return {"type": "struct", "fields": fields, "optional": False,
                "name": adjust_name(name, conv.name_mode, field=False)}

    def _avro_data(self, topic: str, data: dict[str, Any]) -> tuple[bytes, str]:
        assert self.data_avro is not None
        wire = self.data_avro(topic, data)
        assert wire is not None
        # getSchemaIdFromAvroMessage: the 4 bytes after the magic byte as a signed int (with an 8-byte id, its
        # high half)
        return wire, f"{self.conv.urls}/schemas/ids/{int.from_bytes(wire[1:5], 'big', signed=True)}"

    def __call__(self, topic: str, value: Any, headers: Any = None) -> bytes | None:
        if value is None:
            return None
        meta = self.metadata(value, headers)
        if meta is None:
            return None
        conv = self.conv
        data = {f: value.get(f) for f in self.data_fields}
        if conv.events == "avro":  # Avro events: `data` registered under `<topic>-data`, the event under `<topic>`
            wire, dataschema = self._avro_data(topic + "-data", data)
            event = self.attributes(meta, dataschema)
            event["data"] = base64.b64encode(wire).decode()
            source = meta[0]
            key = (source["name"], source["db"], id(meta[5]))
            prepared = self.event_avro.get(key)
            if prepared is None:
                assert conv.avro is not None
                prepared = self.event_avro[key] = conv.avro.prepare(self.event_schema(source, meta[5]))
            return prepared(topic, event)
        if conv.data == "avro":
            wire, dataschema = self._avro_data(topic, data)
            event = self.attributes(meta, dataschema)
            event["data"] = base64.b64encode(wire).decode()
            return dumps(event)
        event = self.attributes(meta, None)
        if self.fix is not None:
            data = self.fix(data)
        if not conv.data_schemas:
            event["data"] = data
            return dumps(event)
        # As Debezium does: the event without `data`, then `"data":` and JsonConverter's `{schema, payload}`.
        head = dumps(event)
        return head[:-1] + b',"data":' + self.data_json + dumps(data) + b"}}"
