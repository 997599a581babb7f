"""`key.converter`, `value.converter`, `header.converter` and their options, read as Kafka Connect reads them.

A side's options are the properties under its prefix with the prefix stripped (`value.converter.schemas.enable`
is JsonConverter's `schemas.enable` for values); Debezium's engine also passes every `converter.*` property to
its key, value and header converters, over the per-side ones (`converter.schemas.enable`). Each class has a
table of the options it knows: an unknown class or option is a one-line error before anything is created, and
so is a class or option pgcdc does not support yet. A `converter.*` option is an error only when no side's
converter knows it (Connect hands it to all three).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pgcdc.errors import ConfigError

JSON = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"
AVRO = "io.confluent.connect.avro.AvroConverter"
APICURIO_AVRO = "io.apicurio.registry.utils.converter.AvroConverter"
SIDES = ("key", "value", "header")
ENGINE_PREFIX = "converter."
PREFIXES = (*(f"{side}.converter." for side in SIDES), ENGINE_PREFIX)

# Classes users name that pgcdc does not write yet: refused with one line.
NOT_YET = frozenset({
    "io.confluent.connect.protobuf.ProtobufConverter",
    "io.confluent.connect.json.JsonSchemaConverter",
    "io.apicurio.registry.utils.converter.ExtJsonConverter",
    "io.apicurio.registry.utils.converter.JsonConverter",
    "io.apicurio.registry.utils.converter.ProtobufConverter",
    "io.debezium.converters.CloudEventsConverter",
    "io.debezium.converters.BinaryDataConverter",
    "io.debezium.converters.ByteArrayConverter",
    "org.apache.kafka.connect.converters.DoubleConverter",
    "org.apache.kafka.connect.converters.FloatConverter",
    "org.apache.kafka.connect.converters.IntegerConverter",
    "org.apache.kafka.connect.converters.LongConverter",
    "org.apache.kafka.connect.converters.ShortConverter",
    "org.apache.kafka.connect.converters.BooleanConverter",
    STRING,  # Struct.toString of Debezium's records: not written yet
})

Check = Callable[[str], Any]


def _bool(v: str) -> bool:
    low = v.strip().lower()
    if low not in ("true", "false"):
        raise ValueError("must be true or false")
    return low == "true"


def _int(v: str) -> int:
    return int(v)


def _any(v: str) -> str:
    return v


def _only(*allowed: str) -> Check:
    def check(v: str) -> str:
        if v.strip().lower() not in allowed:
            raise ValueError(f"only {' or '.join(allowed)} is supported yet")
        return v.strip().lower()
    return check


def _not_yet(v: str) -> Any:
    raise ValueError("is not supported yet")


def _strategy(v: str) -> str:
    if v not in SUBJECT_STRATEGIES:
        raise ValueError(f"unknown subject name strategy; use one of {', '.join(SUBJECT_STRATEGIES)}")
    return v


SUBJECT_STRATEGIES = tuple(f"io.confluent.kafka.serializers.subject.{s}"
                           for s in ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy"))

_COMMON = {"converter.type": _any}  # set by a Connect worker itself
_REGISTRY_NOT_YET = ("bearer.auth.", "schema.registry.ssl.", "schema.registry.bearer.auth.", "proxy.",
                     "context.name.strategy", "use.latest.with.metadata", "use.schema.id", "key.subject.name.strategy.",
                     "value.subject.name.strategy.")
_STORE_TYPE = _only("jks", "pkcs12", "pem")
# The schema registry client's settings (pgcdc/converters/registry.py), shared by the registry converters.
REGISTRY: dict[str, Check] = {
    "schema.registry.url": _any, "basic.auth.credentials.source": _only("url", "user_info"),
    "basic.auth.user.info": _any, "schema.registry.basic.auth.user.info": _any,
    "bearer.auth.credentials.source": _only("static_token"), "bearer.auth.token": _any,
    "bearer.auth.logical.cluster": _any, "bearer.auth.identity.pool.id": _any,
    "http.connect.timeout.ms": _int, "http.read.timeout.ms": _int,
    "schema.registry.ssl.truststore.location": _any, "schema.registry.ssl.truststore.password": _any,
    "schema.registry.ssl.truststore.type": _STORE_TYPE, "schema.registry.ssl.truststore.certificates": _any,
    "schema.registry.ssl.keystore.location": _any, "schema.registry.ssl.keystore.password": _any,
    "schema.registry.ssl.keystore.type": _STORE_TYPE, "schema.registry.ssl.key.password": _any,
    "schema.registry.ssl.keystore.certificate.chain": _any, "schema.registry.ssl.keystore.key": _any,
    "schema.registry.ssl.endpoint.identification.algorithm": _only("https"),
    "schema.registry.ssl.protocol": _any,
}
OPTIONS: dict[str, dict[str, Check]] = {
    JSON: {**_COMMON, "schemas.enable": _bool, "schemas.cache.size": _int, "decimal.format": _only("base64"),
           "replace.null.with.default": _bool},
    SIMPLE_HEADER: dict(_COMMON),
    STRING: {**_COMMON, "converter.encoding": _any},
    BYTE_ARRAY: dict(_COMMON),
    AVRO: {**_COMMON, **REGISTRY, "auto.register.schemas": _bool, "use.latest.version": _bool,
           "latest.compatibility.strict": _bool, "key.subject.name.strategy": _strategy,
           "value.subject.name.strategy": _strategy, "schemas.cache.config": _int, "max.schemas.per.subject": _int,
           "connect.meta.data": _only("true"),
           "enhanced.avro.schema.support": _only("false"), "normalize.schemas": _only("false"),
           "scrub.invalid.names": _only("false"), "avro.remove.java.properties": _only("false"),
           "schemas.enable": _any},  # JsonConverter's, handed to every converter by `converter.*`
}
_APICURIO_NOT_YET = ("apicurio.registry.headers.", "apicurio.registry.auth.", "apicurio.registry.fallback.",
                     "apicurio.registry.artifact.", "apicurio.registry.schema-resolver",
                     "apicurio.registry.dereference-schema", "apicurio.registry.avro-datum-provider")
_A = "apicurio.registry."


def _apicurio_strategy(v: str) -> str:
    allowed = ("io.apicurio.registry.serde.strategy.TopicIdStrategy",
               "io.apicurio.registry.serde.strategy.SimpleTopicIdStrategy")
    if v not in allowed:
        raise ValueError(f"only {' or '.join(allowed)} is supported yet")
    return v


def _id_handler(v: str) -> str:
    allowed = ("io.apicurio.registry.serde.Default4ByteIdHandler", "io.apicurio.registry.serde.Legacy8ByteIdHandler")
    if v not in allowed:
        raise ValueError(f"use {' or '.join(allowed)}")
    return v


def _use_id(v: str) -> str:
    if v not in ("contentId", "globalId"):
        raise ValueError("use contentId or globalId")
    return v


OPTIONS[APICURIO_AVRO] = {
    **_COMMON, _A + "url": _any, _A + "auto-register": _bool, _A + "find-latest": _bool,
    _A + "use-id": _use_id, _A + "id-handler": _id_handler, _A + "artifact-resolver-strategy": _apicurio_strategy,
    _A + "headers.enabled": _bool, _A + "auth.username": _any, _A + "auth.password": _any,
    _A + "artifact.artifact-id": _any, _A + "artifact.group-id": _only("default"),
    _A + "auto-register.if-exists": _only("find_or_create_version"), _A + "cache-latest": _bool,
    _A + "check-period-ms": _int, _A + "retry-count": _int, _A + "retry-backoff-ms": _int,
    _A + "avro.encoding": _only("binary"), _A + "serde.validation-enabled": _bool,
    "connect.meta.data": _only("true"), "enhanced.avro.schema.support": _only("false"), "schemas.cache.config": _int,
    "schemas.enable": _any,  # JsonConverter's, handed to every converter by `converter.*`
}
# What each option does in pgcdc, for docs/configuration.md (pgcdc/docgen.py).
MEANING: dict[str, str] = {
    "converter.type": "set by a Connect worker; no effect",
    "schemas.enable": "JsonConverter: wrap in `{schema, payload}` (default true); other converters: no effect",
    "schemas.cache.size": "no effect (schemas are compiled once per version)",
    "decimal.format": "only `BASE64`, the default",
    "replace.null.with.default": "JsonConverter: a null field whose schema has a default is written as the default "
                                 "(default true, KIP-581); false keeps the null",
    "converter.encoding": "—",
    "schema.registry.url": "required; one or more comma-separated URLs (user:password@ in a URL is basic auth; "
                           "`mock://<scope>` is confluent-kafka's in-memory registry, for tests)",
    "auto.register.schemas": "register a record's schema (default true); false: look it up, it must be registered",
    "use.latest.version": "write with the subject's latest schema id (default false)",
    "latest.compatibility.strict": "with use.latest.version: the registry must find the record's schema compatible "
                                   "with the latest (default true)",
    "key.subject.name.strategy": "TopicNameStrategy (default), RecordNameStrategy or TopicRecordNameStrategy "
                                 "(`io.confluent.kafka.serializers.subject.*`)",
    "value.subject.name.strategy": "as key.subject.name.strategy",
    "basic.auth.credentials.source": "`URL` (default: user info in the URL) or `USER_INFO`",
    "basic.auth.user.info": "`user:password` with basic.auth.credentials.source=USER_INFO (a secret)",
    "schema.registry.basic.auth.user.info": "same as basic.auth.user.info",
    "bearer.auth.credentials.source": "`STATIC_TOKEN`: send `bearer.auth.token` as `Authorization: Bearer` "
                                      "(SASL_OAUTHBEARER_INHERIT is refused: it needs Kafka's OAuth login)",
    "bearer.auth.token": "the token for STATIC_TOKEN (a secret)",
    "bearer.auth.logical.cluster": "Confluent Cloud's logical cluster, sent as `target-sr-cluster`",
    "bearer.auth.identity.pool.id": "Confluent Cloud's identity pool, sent as `Confluent-Identity-Pool-Id`",
    "http.connect.timeout.ms": "the registry request timeout (the larger of the two; default: none)",
    "http.read.timeout.ms": "as http.connect.timeout.ms",
    "schema.registry.ssl.truststore.location": "CAs to trust for an `https://` registry: PKCS12 or PEM (a JKS "
                                               "store is refused with the keytool line converting it)",
    "schema.registry.ssl.truststore.password": "the PKCS12 truststore's password",
    "schema.registry.ssl.truststore.type": "`JKS` (default; the file is read as what it is), `PKCS12` or `PEM`",
    "schema.registry.ssl.truststore.certificates": "CAs as PEM text, instead of a truststore file",
    "schema.registry.ssl.keystore.location": "client certificate and key for mutual TLS: PKCS12, or one PEM file",
    "schema.registry.ssl.keystore.password": "the PKCS12 keystore's password",
    "schema.registry.ssl.keystore.type": "as schema.registry.ssl.truststore.type",
    "schema.registry.ssl.key.password": "the PEM private key's password",
    "schema.registry.ssl.keystore.certificate.chain": "client certificate chain as PEM text (with keystore.key)",
    "schema.registry.ssl.keystore.key": "client private key as PEM text (with keystore.certificate.chain)",
    "schema.registry.ssl.endpoint.identification.algorithm": "only `https` (the default): the registry's host "
                                                             "name is checked against its certificate",
    "schema.registry.ssl.protocol": "no effect: Python's TLS negotiates the newest version both sides speak",
    "schemas.cache.config": "no effect (a schema version is compiled and registered once per process)",
    "max.schemas.per.subject": "no effect",
    "connect.meta.data": "only `true`, the default",
    "enhanced.avro.schema.support": "only `false`, the default",
    "normalize.schemas": "only `false`, the default",
    "scrub.invalid.names": "only `false`, the default",
    "avro.remove.java.properties": "only `false`, the default",
    _A + "url": "required; the registry's v2 or v3 API URL (or its root); pgcdc talks to "
                "its Confluent-compatible API (`/apis/ccompat/v7`) under the same root",
    _A + "auto-register": "register the record's schema as a version of its artifact (default false: the "
                          "schema must already be registered, found by content)",
    _A + "find-latest": "with auto-register=false: write with the artifact's latest version (default false)",
    _A + "use-id": "`contentId` (default) or `globalId` (read from the v3 API)",
    _A + "id-handler": "`io.apicurio.registry.serde.Default4ByteIdHandler` (default: magic byte, 4-byte id) or "
                       "`...Legacy8ByteIdHandler` (8-byte id, Apicurio 2.x's framing)",
    _A + "artifact-resolver-strategy": "`io.apicurio.registry.serde.strategy.TopicIdStrategy` (default: "
                                       "`<topic>-key`/`<topic>-value`) or `...SimpleTopicIdStrategy` (the topic)",
    _A + "headers.enabled": "the id in Kafka headers (`apicurio.<side>.contentId` or `.globalId`, 8 bytes, with "
                            "`apicurio.<side>.encoding: BINARY`) and the Avro binary alone as the record (default "
                            "false, as Apicurio 3.x; 2.x's default was true)",
    _A + "auth.username": "HTTP basic auth user (with auth.password); OAuth client options are refused",
    _A + "auth.password": "HTTP basic auth password (a secret)",
    _A + "artifact.artifact-id": "one artifact id for every record, instead of the strategy's",
    _A + "artifact.group-id": "only `default`",
    _A + "auto-register.if-exists": "only `FIND_OR_CREATE_VERSION`, the default",
    _A + "cache-latest": "no effect (a schema version is resolved once per process)",
    _A + "check-period-ms": "no effect (as cache-latest)",
    _A + "retry-count": "no effect: a registry that cannot be reached holds the stream and retries until it answers",
    _A + "retry-backoff-ms": "no effect (as retry-count)",
    _A + "avro.encoding": "only `BINARY`, the default",
    _A + "serde.validation-enabled": "no effect (pgcdc writes values of their own schema)",
}
_SIDE_CLASSES = {"key": (JSON, STRING, BYTE_ARRAY, AVRO, APICURIO_AVRO),
                 "value": (JSON, STRING, BYTE_ARRAY, AVRO, APICURIO_AVRO),
                 "header": (JSON, SIMPLE_HEADER)}


@dataclass(frozen=True, slots=True)
class ConverterSpec:
    """One side's converter: its class and its options (prefix stripped, values checked)."""

    side: str
    cls: str
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def is_key(self) -> bool:
        return self.side == "key"

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    @property
    def needs_schema(self) -> bool:
        """The converter reads the Connect schema (the envelope keeps it in the JSON it hands over): every
        converter but JsonConverter, which is the envelope's own output."""
        return self.cls != JSON and self.cls != SIMPLE_HEADER

    @property
    def replace_null_with_default(self) -> bool:
        """Whether a null struct field with a schema default is written as the default. JsonConverter's option
        (true by default); every other converter reads fields through Struct.get, which returns the default."""
        return bool(self.get("replace.null.with.default", True)) if self.cls == JSON else True

    @property
    def schemas_enable(self) -> bool:
        """JsonConverter's schemas.enable (true by default), or whether the side's records carry a schema."""
        return bool(self.get("schemas.enable", True)) if self.cls == JSON else self.needs_schema


def converter_specs(classes: Mapping[str, str], props: Mapping[str, str]) -> dict[str, ConverterSpec]:
    """The three sides' converters from their class properties and every `<side>.converter.*`/`converter.*`
    property. Raises ConfigError naming the property."""
    engine = {k[len(ENGINE_PREFIX):]: (k, v) for k, v in props.items() if k.startswith(ENGINE_PREFIX)}
    specs: dict[str, ConverterSpec] = {}
    for side in SIDES:
        prop = f"{side}.converter"
        cls = classes.get(side) or JSON
        if cls in NOT_YET:
            raise ConfigError(f"{prop}: {cls} is not supported yet")
        if cls not in OPTIONS:
            raise ConfigError(f"{prop}: unknown converter class {cls!r}")
        if cls not in _SIDE_CLASSES[side]:
            raise ConfigError(f"{prop}: {cls} cannot be a {side} converter")
        known = OPTIONS[cls]
        prefix = prop + "."
        raw = {k[len(prefix):]: (k, v) for k, v in props.items() if k.startswith(prefix)}
        raw.update({k: kv for k, kv in engine.items() if k in known})
        options = []
        for name, (full, value) in sorted(raw.items()):
            check = known.get(name)
            if check is None:
                if ((name.startswith(_REGISTRY_NOT_YET) and cls == AVRO)
                        or (name.startswith(_APICURIO_NOT_YET) and cls == APICURIO_AVRO)):
                    raise ConfigError(f"{full}: is not supported yet by {cls}")
                raise ConfigError(f"{full}: unknown option {name!r} of {cls}")
            try:
                options.append((name, check(str(value))))
            except ValueError as exc:
                raise ConfigError(f"{full}: {exc} (got {value!r})") from None
        spec = ConverterSpec(side, cls, tuple(options))
        if cls == AVRO and not spec.get("schema.registry.url"):
            raise ConfigError(f"{prefix}schema.registry.url: required by {cls}")
        if cls == APICURIO_AVRO and not spec.get(_A + "url"):
            raise ConfigError(f"{prefix}{_A}url: required by {cls}")
        specs[side] = spec
    for name, (full, _) in engine.items():
        if not any(name in OPTIONS[s.cls] for s in specs.values()):
            raise ConfigError(f"{full}: unknown option {name!r} of the configured converters")
    return specs
