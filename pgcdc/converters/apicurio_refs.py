"""Apicurio's AvroConverter as Debezium's CloudEventsConverter holds it (`avro.apicurio.registry.url`): the schema
registered as Apicurio's 3.0.9 serde registers it, through Apicurio's own v3 API, with references.

Apicurio's AvroSchemaParser.getSchemaFromData (serde-common-avro 3.0.9) does not register a schema whole: each
named record it reaches (a record field, a union's record branch, an array's or map's record items; not deeper in
a union's array) is a reference, registered first as an artifact named after the record's full name, its text
the record with its own references written by name (Avro's Schema.toString(known types)); the schema itself is
then registered under its artifact with that list of references (in field order, repeated as often as they
appear). DefaultSchemaResolver posts each to `/groups/default/artifacts?ifExists=FIND_OR_CREATE_VERSION&
canonical=false` and caches by the text, so a text is registered once per converter. Measured against Debezium's
CloudEventsConverter with Apicurio's converter and a running Apicurio Registry 3.0.9 (tests/data/
apicurio_cloudevents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pgcdc.converters.apicurio import ApicurioAvroConverter, artifact_name, first_shape_text, retrying
from pgcdc.converters.apicurio_parts import Part, apicurio_part
from pgcdc.converters.avro_schema import avro_schema_text, datum_function
from pgcdc.converters.avro_writer import WrittenSchemas, avro_writer
from pgcdc.converters.settings import APICURIO_AVRO
from pgcdc.errors import SinkError

try:  # the HTTP client confluent-kafka's registry client itself uses: httpx2 where installed, else httpx
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]


class ApicurioReferencingAvro:
    """Apicurio's AvroConverter for CloudEventsConverter's Avro: `prepare(schema)` gives `(topic, value)` ->
    the record framed with its id (Debezium calls the converter without headers, so Apicurio's serializer always
    frames the id, whatever `headers.enabled` says)."""

    def __init__(self, settings: ApicurioAvroConverter) -> None:
        self.settings = settings
        self.side = settings.side
        self.by_text: dict[str, dict[str, Any]] = {}  # DefaultSchemaResolver's cache: text -> version metadata
        # frame (magic byte, id) -> the parsed schema written with it, for readers of this process's records
        self.written = WrittenSchemas()
        self.frame_size = settings.frame.size

    def prepare(self, schema: dict[str, Any] | None) -> Callable[[str, Any], bytes | None]:
        if schema is None:
            raise SinkError(f"{self.side}.converter: {APICURIO_AVRO} needs the record's schema")
        return _Prepared(self, schema)

    def register(self, artifact: str, part: Part) -> dict[str, Any]:
        """The version metadata of `part` under `artifact`, its references registered first: even when the text is
        cached, as DefaultSchemaResolver resolves references before its cache by text (a new table shape is a new
        version of `<topic>.Value` while the event, whose text only names it, keeps its first id; measured)."""
        refs = [{"groupId": m.get("groupId"), "artifactId": m["artifactId"], "version": m["version"], "name": r.name}
                for r in part.refs for m in (self.register(r.name, r),)]
        known = self.by_text.get(part.text)
        if known is not None:
            return known
        content: dict[str, Any] = {"content": part.text, "contentType": "application/json"}
        if refs:
            content["references"] = refs
        body = {"artifactId": artifact, "artifactType": "AVRO", "firstVersion": {"content": content}}
        s = self.settings
        url = f"{s.base}/apis/registry/v3/groups/default/artifacts"

        def call() -> dict[str, Any]:
            s.registrations += 1
            r = httpx.post(url, params={"ifExists": "FIND_OR_CREATE_VERSION", "canonical": "false"}, json=body,
                           auth=s.auth, timeout=30)
            r.raise_for_status()
            version: dict[str, Any] = r.json()["version"]
            return version
        meta = self.by_text[part.text] = retrying(s.base, artifact, s.stopping, call)
        return meta

    def close(self) -> None:
        pass


class _Prepared:
    """One Connect schema: its registered parts, its writer's text and datum function, per topic the writer."""

    __slots__ = ("conv", "datum", "part", "text", "topics")

    def __init__(self, conv: ApicurioReferencingAvro, schema: dict[str, Any]) -> None:
        self.conv = conv
        self.part = apicurio_part(schema)
        self.text = avro_schema_text(schema)  # the whole schema: what the bytes are written with
        self.datum = datum_function(schema, tuples=False)
        self.topics: dict[str, Callable[[Any], bytes]] = {}

    def _topic(self, topic: str) -> Callable[[Any], bytes]:
        conv, s = self.conv, self.conv.settings
        meta = conv.register(artifact_name(s.artifact_id, s.strategy, topic, False), self.part)
        frame = s.frame.pack(0, int(meta["globalId" if s.global_id else "contentId"]))
        # written with the whole schema first registered under this text, as Apicurio's AvroConverter alone does
        # (apicurio.py; its serializer and resolver are the same here)
        text = first_shape_text(s, self.part.text, self.text, topic)
        conv.written.texts[frame] = text
        write = self.topics[topic] = avro_writer(text, frame)
        return write

    def __call__(self, topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        write = self.topics.get(topic) or self._topic(topic)
        datum = self.datum
        return write(value if datum is None else datum(value))
