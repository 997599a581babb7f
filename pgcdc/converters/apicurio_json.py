"""Apicurio Registry's ExtJsonConverter (`io.apicurio.registry.utils.converter.ExtJsonConverter`, serde 3.x).

What Apicurio's 3.0.9 converter does (read from ExtJsonConverter, PrettyFormatStrategy and DefaultSchemaResolver,
and measured: tests/unit/test_apicurio_ext_json.py): the record is `{"schemaId":<content id>,"payload":<JSON>}`,
where the payload is Kafka's JsonConverter with schemas.enable=false (so byte for byte the `payload` part of the
envelope's own JsonConverter output, options such as replace.null.with.default applying) and the schema is the
Connect schema as JsonConverter's JSON (`asJsonSchema(...).toString()`: byte for byte the envelope's `schema` part),
registered as a `KCONNECT` artifact. The id is always the content id in that JSON field: `use-id`, `id-handler`
and `headers.enabled` are read by the serde's configuration but never used by this converter, which writes no
Kafka headers.

A KCONNECT artifact has no Confluent-compatible form, so the registry is reached through Apicurio's own v3 API
(httpx), as its resolver does: `auto-register=true` creates the artifact or finds/creates the version
(`ifExists=FIND_OR_CREATE_VERSION`), else `find-latest=true` takes the artifact's latest version, else the
schema is searched by content (canonical first, then as written) and must already be registered.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from urllib.parse import quote

from pgcdc.converters.apicurio import P, TOPIC_ID, artifact_name, refused, registry_base, retrying
from pgcdc.converters.settings import ConverterSpec
from pgcdc.errors import ConfigError

try:  # the HTTP client confluent-kafka's registry client itself uses: httpx2 where installed, else httpx
    import httpx2 as httpx
except ImportError:
    import httpx  # type: ignore[no-redef]

log = logging.getLogger(__name__)

_JSON = {"Content-Type": "application/json"}
# An escaped backslash, or a character beyond the BMP as Jackson's UTF-8 generator escapes it (a surrogate pair).
_SURROGATES = re.compile(rb"(\\\\)|\\u(D[89AB][0-9A-F]{2})\\u(D[C-F][0-9A-F]{2})")


def _combined(m: re.Match[bytes]) -> bytes:
    if m.group(1):
        return m.group(1)
    high, low = int(m.group(2), 16), int(m.group(3), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).encode()


def registered_text(schema: bytes) -> bytes:
    """The schema text ExtJsonConverter registers from the schema JsonConverter writes: the same JSON, but
    `JsonNode.toString()` goes through Jackson's character writer, which writes a character beyond the BMP as it
    is, where JsonConverter's byte serializer (the envelope's form) escapes it as a surrogate pair (measured:
    a column named `c🎉`)."""
    return _SURROGATES.sub(_combined, schema) if b"\\u" in schema else schema


class ApicurioExtJsonConverter:
    """Takes the envelope's JSON text itself (`takes_json`): the schema and payload bytes pass through unparsed,
    so Java's number spellings (1.0E20) stay as JsonConverter wrote them."""

    takes_json = True

    def __init__(self, spec: ConverterSpec, stopping: Callable[[], bool] = lambda: False) -> None:
        self.is_key = spec.is_key
        self.side = spec.side
        self.base = registry_base(spec.get(P + "url"))
        self.api = f"{self.base}/apis/registry/v3"
        user, password = spec.get(P + "auth.username"), spec.get(P + "auth.password")
        if user is not None and password is None:
            raise ConfigError(f"{spec.side}.converter.{P}auth.password: required with {P}auth.username")
        self.http = httpx.Client(auth=(user, password) if user is not None else None, timeout=30)
        self.strategy = spec.get(P + "artifact-resolver-strategy", TOPIC_ID)
        self.artifact_id = spec.get(P + "artifact.artifact-id")
        self.auto_register = spec.get(P + "auto-register", False)
        self.find_latest = spec.get(P + "find-latest", False)
        self.stopping = stopping
        self._probe(spec, user is not None)
        self.registrations = 0  # registry calls made: once per schema version and artifact

    def _probe(self, spec: ConverterSpec, with_auth: bool) -> None:
        """One request at start-up: refused credentials end the start with one line; a registry that is down is
        only logged (the stream waits for it)."""
        try:
            status = self.http.get(f"{self.api}/search/artifacts", params={"limit": 1}).status_code
        except Exception as exc:
            log.warning("Apicurio Registry %s: not reachable yet (%s); records will wait for it", self.base, exc)
            return
        if status in (401, 403):
            raise refused(spec.side, self.base, status, with_auth)

    def prepare(self, schema: bytes | None) -> PreparedExtJson:
        return PreparedExtJson(self, schema)

    def artifact(self, topic: str) -> str:
        return artifact_name(self.artifact_id, self.strategy, topic, self.is_key)

    def content_id(self, artifact: str, text: bytes) -> int:
        """The content id of `text` as a version of `artifact`, retried until the registry answers."""
        def call() -> int:
            self.registrations += 1
            return self._content_id(artifact, text)
        return retrying(self.base, artifact, self.stopping, call)

    def _content_id(self, artifact: str, text: bytes) -> int:
        group = f"{self.api}/groups/default/artifacts"
        if self.auto_register:
            body = {"artifactId": artifact, "artifactType": "KCONNECT",
                    "firstVersion": {"content": {"content": text.decode(), "contentType": "application/json"}}}
            response = self.http.post(group, json=body,
                                      params={"ifExists": "FIND_OR_CREATE_VERSION", "canonical": "false"})
            response.raise_for_status()
            return int(response.json()["version"]["contentId"])
        if self.find_latest:
            response = self.http.get(f"{group}/{quote(artifact, safe='')}/versions/branch=latest")
            response.raise_for_status()
            return int(response.json()["contentId"])
        for canonical in ("true", "false"):
            response = self.http.post(f"{self.api}/search/versions", content=text, headers=_JSON, params={
                "groupId": "default", "artifactId": artifact, "canonical": canonical, "artifactType": "KCONNECT",
                "orderby": "globalId", "order": "desc"})
            response.raise_for_status()
            found = response.json()
            if found["count"]:
                return int(found["versions"][0]["contentId"])
        raise ValueError(f"Could not resolve artifact reference by content: {text.decode()[:200]}")

    def close(self) -> None:
        self.http.close()


def record_head(content_id: int) -> bytes:
    """What precedes the payload in PrettyFormatStrategy's record (Jackson's compact object, id first)."""
    return b'{"schemaId":%d,"payload":' % content_id


class PreparedExtJson:
    """One Connect schema's JSON text: per topic the record's opening `{"schemaId":<id>,"payload":`."""

    __slots__ = ("conv", "schema", "topics")

    def __init__(self, conv: ApicurioExtJsonConverter, schema: bytes | None) -> None:
        self.conv = conv
        self.schema = None if schema is None else registered_text(schema)
        self.topics: dict[str, bytes] = {}

    def _topic(self, topic: str) -> bytes:
        if self.schema is None:  # JsonConverter writes no schema for a schemaless value: nothing to register
            raise ValueError("a record without a schema")
        head = self.topics[topic] = record_head(self.conv.content_id(self.conv.artifact(topic), self.schema))
        return head

    def __call__(self, topic: str, payload: bytes | None) -> bytes | None:
        if payload is None:
            return None
        return (self.topics.get(topic) or self._topic(topic)) + payload + b"}"
