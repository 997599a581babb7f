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
DBZ_BINARY = "io.debezium.converters.BinaryDataConverter"
DBZ_BYTE_ARRAY = "io.debezium.converters.ByteArrayConverter"
NUMBERS = tuple(f"org.apache.kafka.connect.converters.{n}Converter" for n in ("Double", "Float", "Integer", "Long",
                                                                               "Short"))
BOOLEAN = "org.apache.kafka.connect.converters.BooleanConverter"
AVRO = "io.confluent.connect.avro.AvroConverter"
CLOUDEVENTS = "io.debezium.converters.CloudEventsConverter"
PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
REGISTRY_CLASSES = (AVRO, PROTOBUF)
SIDES = ("key", "value", "header")
ENGINE_PREFIX = "converter."
PREFIXES = (*(f"{side}.converter." for side in SIDES), ENGINE_PREFIX)

# Classes users name that pgcdc does not write yet: refused with one line.
NOT_YET = frozenset({
    "io.confluent.connect.json.JsonSchemaConverter",
    "io.apicurio.registry.utils.converter.AvroConverter",
    "io.apicurio.registry.utils.converter.ExtJsonConverter",
    "io.apicurio.registry.utils.converter.JsonConverter",
    "io.apicurio.registry.utils.converter.ProtobufConverter",
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


def _metadata_source(v: str) -> str:
    """CloudEventsConverterConfig.metadataSource: `value` or `header`, then `<field>:<header|generate>` items."""
    items = [i.strip() for i in v.split(",")]
    if items[0].lower() not in ("value", "header"):
        raise ValueError(f"global metadata source can't be {items[0]!r} (value or header)")
    sources = [items[0].lower()]
    for item in items[1:]:
        name, _, source = item.partition(":")
        if source.strip().lower() not in ("header", "generate"):
            raise ValueError(f"field source {source!r} of {name!r} is not valid (header or generate)")
        if name not in ("id", "type", "traceparent", "dataSchemaName"):
            raise ValueError(f"field {name!r} is not allowed to set a custom source")
        sources.append(source.strip().lower())
    return v


def _encoding(v: str) -> str:
    import codecs

    name = v.strip().lower().replace("_", "-")
    try:
        codecs.lookup("utf-16-be" if name == "utf-16" else name)
    except LookupError:
        raise ValueError("unknown character encoding") from None
    return name


def _class(v: str) -> str:
    cls = v.strip()
    if cls in NOT_YET:
        raise ValueError(f"{cls} is not supported yet")
    if cls not in OPTIONS or cls in (SIMPLE_HEADER, DBZ_BINARY, DBZ_BYTE_ARRAY):
        raise ValueError("not a converter class pgcdc can delegate to")
    return cls


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
# What Confluent's serializers read besides the client (AbstractKafkaSchemaSerDeConfig), shared likewise.
_SERDE: dict[str, Check] = {
    "auto.register.schemas": _bool, "use.latest.version": _bool, "latest.compatibility.strict": _bool,
    "key.subject.name.strategy": _strategy, "value.subject.name.strategy": _strategy, "schemas.cache.config": _int,
    "max.schemas.per.subject": _int, "normalize.schemas": _only("false"), "scrub.invalid.names": _only("false"),
    "schemas.enable": _any}  # JsonConverter's, handed to every converter by `converter.*`
OPTIONS: dict[str, dict[str, Check]] = {
    JSON: {**_COMMON, "schemas.enable": _bool, "schemas.cache.size": _int, "decimal.format": _only("base64"),
           "replace.null.with.default": _bool},
    SIMPLE_HEADER: dict(_COMMON),
    STRING: {**_COMMON, "converter.encoding": _encoding},
    BYTE_ARRAY: dict(_COMMON),
    **{cls: dict(_COMMON) for cls in (*NUMBERS, BOOLEAN)},
    # `delegate.converter.type.<option>`: the delegate's options (checked against its own table)
    **{cls: {**_COMMON, "delegate.converter.type": _class} for cls in (DBZ_BINARY, DBZ_BYTE_ARRAY)},
    AVRO: {**_COMMON, **REGISTRY, **_SERDE, "connect.meta.data": _only("true"),
           "enhanced.avro.schema.support": _only("false"), "avro.remove.java.properties": _only("false")},
    # ProtobufConverter writes with the schema it derives; taking the subject's latest would need the message
    # re-encoded for that schema, which it does not do yet.
    PROTOBUF: {**_COMMON, **REGISTRY, **_SERDE, "use.latest.version": _only("false"),
               "enhanced.protobuf.schema.support": _only("false"), "optional.for.nullables": _only("false"),
               "optional.for.proto2": _only("false"), "wrapper.for.nullables": _only("false"),
               "wrapper.for.raw.primitives": _bool, "skip.known.types": _only("true"),
               "reference.lookup.only": _only("false")},
    CLOUDEVENTS: {**_COMMON, "serializer.type": _only("json", "avro"), "data.serializer.type": _only("json", "avro"),
                  "extension.attributes.enable": _bool, "schema.cloudevents.name": _any,
                  "schema.name.adjustment.mode": _only("none", "avro", "avro_unicode"),
                  "metadata.source": _metadata_source, "opentelemetry.tracing.attributes.enable": _only("false"),
                  "schema.data.name.source.header.enable": _only("false"), "schemas.enable": _any,
                  "json.*": _not_yet, "avro.*": _not_yet},  # documentation rows: the sub-options are below
}
# A converter's options handed to the converters it holds (CloudEventsConverter's `json.*` and `avro.*`).
SUB_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {CLOUDEVENTS: (("json.", JSON), ("avro.", AVRO))}
# What each option does in pgcdc, for docs/configuration.md (pgcdc/docgen.py).
MEANING: dict[str, str] = {
    "converter.type": "set by a Connect worker; no effect",
    "schemas.enable": "JsonConverter: wrap in `{schema, payload}` (default true); other converters: no effect",
    "schemas.cache.size": "no effect (schemas are compiled once per version)",
    "decimal.format": "only `BASE64`, the default",
    "replace.null.with.default": "JsonConverter: a null field whose schema has a default is written as the default "
                                 "(default true, KIP-581); false keeps the null",
    "converter.encoding": "StringConverter: the character set of the text (Java's names; default UTF-8)",
    "delegate.converter.type": "Debezium's BinaryDataConverter/ByteArrayConverter: the converter class of "
                               "values without a bytes schema, its options under `delegate.converter.type.`; "
                               "unset, such a value stops the connector",
    "schema.registry.url": "required; one or more comma-separated URLs (user:password@ in a URL is basic auth; "
                           "`mock://<scope>` is confluent-kafka's in-memory registry, for tests)",
    "auto.register.schemas": "register a record's schema (default true); false: look it up, it must be registered",
    "use.latest.version": "write with the subject's latest schema id (default false; ProtobufConverter: only false)",
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
    "serializer.type": "CloudEvents: `json` (default) or `avro` (the event through the `avro.*` AvroConverter)",
    "data.serializer.type": "CloudEvents: the `data` attribute in `json` (default) or `avro` (Confluent wire "
                            "bytes, registered under `<topic>-data` with avro/avro, `<topic>` with json/avro)",
    "extension.attributes.enable": "CloudEvents: the `iodebezium*` attributes (op, each source field, the "
                                   "transaction) (default true)",
    "schema.cloudevents.name": "CloudEvents: the Avro event's schema name (default "
                               "`<topic.prefix>.<database>.CloudEvents.Envelope`)",
    "schema.name.adjustment.mode": "CloudEvents: adjustment of the event's schema name: `avro` (default), "
                                   "`avro_unicode`, `none`",
    "metadata.source": "CloudEvents: where `source`, `op`, `transaction` come from, `value` (default "
                       "`value,id:generate,type:generate,traceparent:header,dataSchemaName:generate`) or `header` "
                       "(headers the header converter wrote, e.g. by HeaderFrom: then `data` is the whole value); "
                       "`id:header`, `type:header` read those attributes from headers",
    "opentelemetry.tracing.attributes.enable": "CloudEvents: only `false` (Debezium reads `traceparent` from a "
                                               "header its tracing SMT writes)",
    "schema.data.name.source.header.enable": "CloudEvents: only `false`",
    "json.*": "CloudEvents: JsonConverter's options for the event and its `data` (`json.schemas.enable`: "
              "`data` as `{schema, payload}`, default true; `json.replace.null.with.default`, …)",
    "avro.*": "CloudEvents: AvroConverter's options (`avro.schema.registry.url`, required with Avro, also "
              "written in `dataschema`; auth, subject strategies, …); `avro.apicurio.registry.url` is not "
              "supported yet",
    "enhanced.protobuf.schema.support": "only `false`, the default",
    "optional.for.nullables": "only `false`, the default (a nullable field is a plain proto3 field)",
    "optional.for.proto2": "only `false`, the default",
    "wrapper.for.nullables": "only `false`, the default (no google.protobuf wrappers for nullable fields)",
    "wrapper.for.raw.primitives": "no effect (pgcdc's records are structs, never raw primitives)",
    "skip.known.types": "only `true`, the default (well-known imports are not registered as references)",
    "reference.lookup.only": "only `false`, the default",
}
_SIMPLE = (STRING, BYTE_ARRAY, DBZ_BINARY, DBZ_BYTE_ARRAY, *NUMBERS, BOOLEAN)
_SIDE_CLASSES = {"key": (JSON, AVRO, PROTOBUF, CLOUDEVENTS, *_SIMPLE),
                 "value": (JSON, AVRO, PROTOBUF, CLOUDEVENTS, *_SIMPLE), "header": (JSON, SIMPLE_HEADER, *_SIMPLE)}
_DELEGATE = "delegate.converter.type."


def _knows(cls: str, name: str) -> bool:
    """Whether `cls` has the option `name`, itself or through a converter it holds (`json.schemas.enable`)."""
    if name in OPTIONS[cls] and not name.endswith("*"):
        return True
    return any(name.startswith(sub) and name[len(sub):] in OPTIONS[inner] for sub, inner in SUB_OPTIONS.get(cls, ()))


@dataclass(frozen=True, slots=True)
class ConverterSpec:
    """One side's converter: its class and its options (prefix stripped, values checked)."""

    side: str
    cls: str
    options: tuple[tuple[str, Any], ...] = ()
    delegate: ConverterSpec | None = None  # Debezium's BinaryDataConverter/ByteArrayConverter's

    @property
    def is_key(self) -> bool:
        return self.side == "key"

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    @property
    def needs_schema(self) -> bool:
        """The converter reads the Connect schema (the envelope keeps it in the JSON it hands over): every
        converter but JsonConverter, which is the envelope's own output."""
        return self.cls != JSON

    @property
    def replace_null_with_default(self) -> bool:
        """Whether a null struct field with a schema default is written as the default. JsonConverter's option
        (true by default); StringConverter writes Struct.toString, which reads the fields as they are (measured);
        Debezium's binary converters write a struct with their delegate; every other converter reads fields
        through Struct.get, which returns the default."""
        if self.cls == JSON:
            return bool(self.get("replace.null.with.default", True))
        if self.delegate is not None:
            return self.delegate.replace_null_with_default
        return self.cls != STRING

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
        prefix = prop + "."
        raw = {k[len(prefix):]: (k, v) for k, v in props.items() if k.startswith(prefix)}
        raw.update({k: kv for k, kv in engine.items() if _knows(cls, k) or k.startswith(_DELEGATE)})
        options = _checked(cls, raw)
        delegate = None
        if dict(options).get("delegate.converter.type"):
            sub = {k[len(_DELEGATE):]: kv for k, kv in raw.items() if k.startswith(_DELEGATE)}
            dcls = dict(options)["delegate.converter.type"]
            delegate = ConverterSpec(side, dcls, tuple(_checked(dcls, sub)))
            if dcls in REGISTRY_CLASSES and not delegate.get("schema.registry.url"):
                raise ConfigError(f"{prefix}{_DELEGATE}schema.registry.url: required by {dcls}")
        spec = ConverterSpec(side, cls, tuple(options), delegate)
        if cls in REGISTRY_CLASSES and not spec.get("schema.registry.url"):
            raise ConfigError(f"{prefix}schema.registry.url: required by {cls}")
        if cls == CLOUDEVENTS:
            _check_cloudevents(spec, prefix)
        specs[side] = spec
    for name, (full, _) in engine.items():
        if not any(_knows(s.cls, name) or (s.delegate is not None and name.startswith(_DELEGATE))
                   for s in specs.values()):
            raise ConfigError(f"{full}: unknown option {name!r} of the configured converters")
    return specs


def _check_cloudevents(spec: ConverterSpec, prefix: str) -> None:
    """CloudEventsConverter.configure's refusals, before anything starts."""
    avro_events = spec.get("serializer.type", "json") == "avro"
    if avro_events and spec.get("data.serializer.type", "json") == "json":
        raise ConfigError(f"{prefix}data.serializer.type: cannot use 'application/json' data content type within "
                          "Avro events (serializer.type=avro)")
    if (avro_events or spec.get("data.serializer.type") == "avro") and not spec.get("avro.schema.registry.url"):
        raise ConfigError(f"{prefix}avro.schema.registry.url: required by {spec.cls} with Avro")


def _checked(cls: str, raw: Mapping[str, tuple[str, str]]) -> list[tuple[str, Any]]:
    """A class's options (name -> (property, value)), each checked by its table; a delegate's options
    (`delegate.converter.type.*`) are left to the delegate's table, a held converter's (CloudEvents' `json.*`,
    `avro.*`) are checked by that converter's table."""
    known = OPTIONS[cls]
    options = []
    for name, (full, value) in sorted(raw.items()):
        if name.startswith(_DELEGATE) and "delegate.converter.type" in known:
            continue
        check = known.get(name) if not name.endswith("*") else None
        for sub, inner in SUB_OPTIONS.get(cls, ()):
            if check is None and name.startswith(sub):
                check = OPTIONS[inner].get(name[len(sub):])
                if inner == AVRO and (name[len(sub):].startswith(_REGISTRY_NOT_YET)
                                      or name == "avro.apicurio.registry.url"):
                    raise ConfigError(f"{full}: is not supported yet by {cls}")
        if check is None:
            if name.startswith(_REGISTRY_NOT_YET) and cls in REGISTRY_CLASSES:
                raise ConfigError(f"{full}: is not supported yet by {cls}")
            raise ConfigError(f"{full}: unknown option {name!r} of {cls}")
        try:
            options.append((name, check(str(value))))
        except ValueError as exc:
            raise ConfigError(f"{full}: {exc} (got {value!r})") from None
    return options
