"""Apicurio Registry's AvroConverter (`io.apicurio.registry.utils.converter.AvroConverter`, serde 3.x).

What Apicurio's 3.0.9 serde does with its defaults (read from its SerdeConfig, SchemaResolverConfig,
KafkaSerdeConfig and Default4ByteIdHandler): the schema is the one its AvroData derives from the Connect schema
(a copy of Confluent's: same namespace `io.confluent.connect.avro`, same `connect.*` properties, so
pgcdc/converters/avro_schema.py writes it); the artifact is `<topic>-key`/`<topic>-value` in the default group
(TopicIdStrategy; SimpleTopicIdStrategy: the topic); the record is magic byte 0, the id, then Avro binary. The
id is the content id in 4 bytes (`use-id=contentId`, `Default4ByteIdHandler`); `use-id=globalId` and
`id-handler=...Legacy8ByteIdHandler` (8 bytes) are Apicurio 2.x's framing. Ids in Kafka headers
(`headers.enabled=true`; false by default in 3.x, true in 2.x): the record is the Avro binary alone, and
the key's then the value's converter add `apicurio.<side>.<contentId|globalId>` (the id as an 8-byte long)
and `apicurio.<side>.encoding` (`BINARY`) to the record's headers (DefaultHeadersHandler, AvroSerdeHeaders).

As Apicurio's resolver does: `auto-register=true` registers the schema (or finds its version) as its serde does,
through Apicurio's own v3 API, each nested named record (`<topic>.Value`, `io.debezium.data.VariableScaleDecimal`,
the source block...) first as an artifact of its own and the schema with references to them
(pgcdc/converters/apicurio_refs.py; measured against Apicurio's AvroConverter and Registry 3.0.9,
tests/data/apicurio_avro); else `find-latest=true` writes with the artifact's latest version, else the schema must
already be registered (looked up by content). Those two look-ups go through the registry's Confluent-compatible
API (`/apis/ccompat/v7`, whose subjects are the default group's artifacts and whose schema ids are content ids)
with confluent-kafka's client, a global id read from the v3 API with httpx.
"""

from __future__ import annotations

import json
import logging
import struct
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient

from pgcdc.converters.apicurio_parts import Part, apicurio_part
from pgcdc.converters.avro_schema import avro_schema_text, datum_function
from pgcdc.converters.avro_writer import avro_writer
from pgcdc.converters.settings import APICURIO_AVRO, ConverterSpec
from pgcdc.errors import ConfigError, SinkError

try:  # the HTTP client confluent-kafka's registry client itself uses: httpx2 where installed, else httpx
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]

log = logging.getLogger(__name__)

P = "apicurio.registry."
TOPIC_ID = "io.apicurio.registry.serde.strategy.TopicIdStrategy"
SIMPLE_TOPIC_ID = "io.apicurio.registry.serde.strategy.SimpleTopicIdStrategy"
FOUR_BYTES = "io.apicurio.registry.serde.Default4ByteIdHandler"
EIGHT_BYTES = "io.apicurio.registry.serde.Legacy8ByteIdHandler"
_FRAME = {FOUR_BYTES: struct.Struct(">bI"), EIGHT_BYTES: struct.Struct(">bq")}
MAX_PAUSE_S = 30.0
T = TypeVar("T")


def retrying(base: str, artifact: str, stopping: Callable[[], bool], call: Callable[[], T]) -> T:
    """`call()` until the registry answers: a registry that is down or refuses the schema holds the stream (a
    stop ends the wait with one line)."""
    pause = 0.5
    while True:
        try:
            return call()
        except Exception as exc:
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            if stopping():
                raise SinkError(f"Apicurio Registry {base}: artifact {artifact}: {reason}") from None
            log.warning("Apicurio Registry %s: artifact %s: %s; records wait, retrying in %.1f s", base, artifact,
                        reason, pause)
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)


def refused(side: str, base: str, status: int, with_auth: bool) -> ConfigError:
    """The start-up line for a registry answering 401/403, naming the option to look at."""
    option = "auth.password" if with_auth else "auth.username"
    said = "refused the credentials" if with_auth else "asks for credentials"
    return ConfigError(f"{side}.converter.{P}{option}: Apicurio Registry at {base} {said} (HTTP {status})")


def artifact_name(artifact_id: Any, strategy: str, topic: str, is_key: bool) -> str:
    """The artifact a topic's schemas go under: `artifact.artifact-id` when set, else the topic
    (SimpleTopicIdStrategy) or `<topic>-key`/`<topic>-value` (TopicIdStrategy, the default)."""
    if artifact_id:
        return str(artifact_id)
    if strategy == SIMPLE_TOPIC_ID:
        return topic
    return f"{topic}-{'key' if is_key else 'value'}"


def registry_base(url: str) -> str:
    """The server's root from `apicurio.registry.url`, which names its v2 or v3 API (or the root itself)."""
    return url.split("/apis/", 1)[0].rstrip("/")


def _misplaced(first: Any, new: Any, path: str) -> str | None:
    """The first field (dotted path) a record of schema `new` would not put where a writer of schema `first`
    reads it, None when there is none. Apicurio's serializer writes each record field by position (Avro's
    GenericData.Record), with the schema of the first shape: fields added after the first shape's are left out,
    anything else lands under another field's name or fails (UnresolvedUnionException, measured)."""
    if isinstance(first, list) or isinstance(new, list):
        if not (isinstance(first, list) and isinstance(new, list) and len(first) == len(new)):
            return path
        return next((m for f, n in zip(first, new) if (m := _misplaced(f, n, path))), None)
    if isinstance(first, dict) and isinstance(new, dict) and first.get("type") == new.get("type"):
        kind = first["type"]
        if kind == "record":
            fields = new["fields"]
            for i, f in enumerate(first["fields"]):
                at = f"{path}.{f['name']}" if path else f["name"]
                if i >= len(fields) or fields[i]["name"] != f["name"]:
                    return at
                if found := _misplaced(f["type"], fields[i]["type"], at):
                    return found
            return None
        if kind in ("array", "map"):
            key = "items" if kind == "array" else "values"
            return _misplaced(first[key], new[key], path)
    return None if first == new else path


def first_shape_text(conv: ApicurioAvroConverter, registered: str, text: str, topic: str) -> str:
    """The whole schema records of the registered text `registered` (whole: `text`) are written with: the first
    one written under that text, as Apicurio's resolver caches it (a table's new shape that changed only a
    nested record keeps the first shape's schema; measured: tests/data/apicurio_avro/schema_change). A record
    that schema would write wrongly fails with one line where Apicurio's fails (a column dropped: measured,
    tests/data/apicurio_cloudevents/shape_*), and also where Apicurio's would write one column's value under
    another's name; a restart writes the new shape, as a restarted Apicurio converter does."""
    first = conv.written_with.setdefault(registered, text)
    if first != text and (field := _misplaced(json.loads(first), json.loads(text), "")):
        raise SinkError(f"{conv.side}.converter: {topic}: the record's schema changed at {field}, which "
                        "Apicurio's AvroConverter writes with the schema cached for the first shape (it fails "
                        "or misplaces the value); restart pgcdc to write the new shape")
    return first


class ApicurioAvroConverter:
    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.base = registry_base(spec.get(P + "url"))
        conf: dict[str, Any] = {"url": f"{self.base}/apis/ccompat/v7"}
        user, password = spec.get(P + "auth.username"), spec.get(P + "auth.password")
        if user is not None:
            if password is None:
                raise ConfigError(f"{spec.side}.converter.{P}auth.password: required with {P}auth.username")
            conf["basic.auth.user.info"] = f"{user}:{password}"
        self.auth = (user, password) if user is not None else None
        self.client = SchemaRegistryClient(conf)
        self.strategy = spec.get(P + "artifact-resolver-strategy", TOPIC_ID)
        self.artifact_id = spec.get(P + "artifact.artifact-id")
        self.frame = _FRAME[spec.get(P + "id-handler", FOUR_BYTES)]
        self.global_id = spec.get(P + "use-id", "contentId") == "globalId"
        self.writes_headers = spec.get(P + "headers.enabled", False)
        side = "key" if spec.is_key else "value"
        self.id_header = f"apicurio.{side}.{'globalId' if self.global_id else 'contentId'}"
        self.encoding_header = (f"apicurio.{side}.encoding", b"BINARY")
        self.auto_register = spec.get(P + "auto-register", False)
        self.find_latest = spec.get(P + "find-latest", False)
        self._probe(spec)
        self.stopping = stopping
        self.registrations = 0  # registry calls made: once per schema version and artifact
        # Registration with references, shared with CloudEventsConverter's Apicurio delegate (which imports this
        # module, hence the import here).
        from pgcdc.converters.apicurio_refs import ApicurioReferencingAvro
        self.referencing = ApicurioReferencingAvro(self)
        self.written_with: dict[str, str] = {}  # registered text -> the whole schema first written with it

    def _probe(self, spec: ConverterSpec) -> None:
        """One request at start-up, before anything is created: refused credentials end the start with one line;
        a registry that is down is only logged (the stream waits for it)."""
        try:
            self.client.get_subjects()
        except Exception as exc:
            status = getattr(exc, "http_status_code", None)
            if status in (401, 403):
                raise refused(spec.side, self.base, status, bool(self.auth)) from None
            log.warning("Apicurio Registry %s: not reachable yet (%s); records will wait for it", self.base, exc)

    def prepare(self, schema: dict[str, Any] | None) -> PreparedApicurio:
        return PreparedApicurio(self, schema)

    def artifact(self, topic: str) -> str:
        return artifact_name(self.artifact_id, self.strategy, topic, self.is_key)

    def schema_id(self, artifact: str, text: str, part: Part) -> tuple[int, str]:
        """(the id records carry, the schema text they are written with) of a registered schema (auto-register
        off), retried until the registry answers."""
        def call() -> tuple[int, str]:
            self.registrations += 1
            return self._schema_id(artifact, text, part)
        return retrying(self.base, artifact, self.stopping, call)

    def _schema_id(self, artifact: str, text: str, part: Part) -> tuple[int, str]:
        if self.find_latest:
            latest = self.client.get_latest_version(artifact)
            content_id, version = latest.schema_id, latest.version
            if not latest.schema.references:  # a version with references is not a schema by itself: ours
                text = latest.schema.schema_str or text
        else:  # found by the text and references Apicurio's serde registers, as its resolver does
            content_id, version = self._lookup(artifact, part)
        if content_id is None:
            raise ValueError("the registry answered without a schema id")
        if not self.global_id:
            return content_id, text
        return self._global_id(artifact, version), text

    def _lookup(self, artifact: str, part: Part) -> tuple[int | None, int | None]:
        """(content id, version) of `part` under `artifact`, its references (artifacts named after the records)
        looked up first: a version's content is its text with its references."""
        refs = [SchemaReference(r.name, r.name, self._lookup(r.name, r)[1]) for r in part.refs]
        found = self.client.lookup_schema(artifact, Schema(part.text, "AVRO", refs))
        return found.schema_id, found.version

    def _global_id(self, artifact: str, version: int | None) -> int:
        url = f"{self.base}/apis/registry/v3/groups/default/artifacts/{quote(artifact, safe='')}/versions/{version}"
        response = httpx.get(url, auth=self.auth, timeout=30)
        response.raise_for_status()
        return int(response.json()["globalId"])

    def close(self) -> None:
        pass


class PreparedApicurio:
    """One Connect schema: its Avro text and datum function, and per topic the framing and fastavro writer."""

    __slots__ = ("conv", "datum", "part", "text", "topics")
    _LONG = struct.Struct(">q")

    def __init__(self, conv: ApicurioAvroConverter, schema: dict[str, Any] | None) -> None:
        if schema is None:
            raise SinkError(f"{conv.side}.converter: {APICURIO_AVRO} needs the record's schema")
        self.conv = conv
        self.text = avro_schema_text(schema)
        self.datum = datum_function(schema, tuples=False)  # None: JsonConverter's form is already the datum
        # the schema as Apicurio's serde registers (and looks up) it: parts with references; records are written
        # with the whole
        self.part = apicurio_part(schema)
        self.topics: dict[str, tuple[Callable[[Any], bytes], tuple[tuple[str, bytes], ...]]] = {}

    def _topic(self, topic: str) -> tuple[Callable[[Any], bytes], tuple[tuple[str, bytes], ...]]:
        conv = self.conv
        if conv.auto_register:
            meta = conv.referencing.register(conv.artifact(topic), self.part)
            text = first_shape_text(conv, self.part.text, self.text, topic)
            schema_id = int(meta["globalId" if conv.global_id else "contentId"])
        else:
            schema_id, text = conv.schema_id(conv.artifact(topic), self.text, self.part)
        headers: tuple[tuple[str, bytes], ...] = ()
        if conv.writes_headers:
            headers = ((conv.id_header, self._LONG.pack(schema_id)), conv.encoding_header)
        frame = b"" if conv.writes_headers else conv.frame.pack(0, schema_id)
        entry = self.topics[topic] = (avro_writer(text, frame), headers)
        return entry

    def headers(self, topic: str) -> tuple[tuple[str, bytes], ...]:
        """The Kafka headers of this schema's records on `topic` (none unless headers.enabled)."""
        return self.topics[topic][1]

    def __call__(self, topic: str, value: Any) -> bytes | None:
        if value is None:
            return None
        write = (self.topics.get(topic) or self._topic(topic))[0]
        datum = self.datum
        return write(value if datum is None else datum(value))
