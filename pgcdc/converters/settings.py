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

from pgcdc.converters.json_numeric import base64_only, decimal_format
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
JSONSCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
REGISTRY_CLASSES = (AVRO, PROTOBUF, JSONSCHEMA)
APICURIO_AVRO = "io.apicurio.registry.utils.converter.AvroConverter"
APICURIO_JSON = "io.apicurio.registry.utils.converter.ExtJsonConverter"
APICURIO_CLASSES = (APICURIO_AVRO, APICURIO_JSON)
SIDES = ("key", "value", "header")
ENGINE_PREFIX = "converter."
PREFIXES = (*(f"{side}.converter." for side in SIDES), ENGINE_PREFIX)

# Classes users name that pgcdc does not write yet: refused with one line.
NOT_YET = frozenset({
    "io.apicurio.registry.utils.converter.ProtobufConverter",
})

# Class names users may expect that no release has: refused with what to use instead.
NO_SUCH_CLASS = {"io.apicurio.registry.utils.converter.JsonConverter":
                 "no such class in Apicurio Registry's converters (3.0.9 to 3.3.1); its JSON converter is "
                 + APICURIO_JSON}

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
    if cls in NO_SUCH_CLASS:
        raise ValueError(NO_SUCH_CLASS[cls])
    if cls in APICURIO_CLASSES:  # they would need the record's JSON text, which a delegate is not handed
        raise ValueError(f"{cls} is not supported yet as a delegate")
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
    JSON: {**_COMMON, "schemas.enable": _bool, "schemas.cache.size": _int, "decimal.format": decimal_format,
           "replace.null.with.default": _bool},
    SIMPLE_HEADER: dict(_COMMON),
    STRING: {**_COMMON, "converter.encoding": _encoding},
    BYTE_ARRAY: dict(_COMMON),
    **{cls: dict(_COMMON) for cls in (*NUMBERS, BOOLEAN)},
    # `delegate.converter.type.<option>`: the delegate's options (checked against its own table)
    **{cls: {**_COMMON, "delegate.converter.type": _class} for cls in (DBZ_BINARY, DBZ_BYTE_ARRAY)},
    AVRO: {**_COMMON, **REGISTRY, **_SERDE, "connect.meta.data": _bool, "enhanced.avro.schema.support": _bool,
           "scrub.invalid.names": _bool, "avro.remove.java.properties": _bool, "normalize.schemas": _bool},
    # ProtobufConverter writes with the schema it derives; with use.latest.version (and auto.register.schemas=false)
    # Confluent's writes the latest schema's id and the message's index in it, which pgcdc does not look up yet
    # (refused in converter_specs). skip.known.types=false registers
    # the well-known imports as references, which pgcdc does not do yet; with them skipped (the default) there are
    # no references, so reference.lookup.only has nothing to look up.
    PROTOBUF: {**_COMMON, **REGISTRY, **_SERDE,
               "enhanced.protobuf.schema.support": _bool, "optional.for.nullables": _bool,
               "optional.for.proto2": _bool, "wrapper.for.nullables": _bool, "scrub.invalid.names": _bool,
               "wrapper.for.raw.primitives": _bool, "skip.known.types": _only("true"),
               "reference.lookup.only": _bool},
    # JsonSchemaConverter 7.0.16 reads JsonSchemaDataConfig, KafkaJsonSchemaSerializerConfig and its deserializer's
    # config; the value is written from the envelope's JsonConverter payload, which is BASE64 decimals and
    # compact JSON, and never validated against the schema (json.fail.invalid.schema: Confluent's then fails
    # records holding a decimal or a NaN).
    JSONSCHEMA: {**_COMMON, **REGISTRY, **_SERDE, "object.additional.properties": _bool,
                 "use.optional.for.nonrequired": _bool, "schemas.cache.size": _int,
                 "decimal.format": base64_only("JsonSchemaConverter"),
                 "json.fail.invalid.schema": _only("false"), "json.indent.output": _only("false"),
                 "json.write.dates.iso8601": _bool, "json.schema.spec.version": _any, "json.oneof.for.nullables": _bool,
                 "json.default.property.inclusion": _not_yet, "json.fail.unknown.properties": _bool,
                 "json.key.type": _any, "json.value.type": _any},
    CLOUDEVENTS: {**_COMMON, "serializer.type": _only("json", "avro"), "data.serializer.type": _only("json", "avro"),
                  "extension.attributes.enable": _bool, "schema.cloudevents.name": _any,
                  "schema.name.adjustment.mode": _only("none", "avro", "avro_unicode"),
                  "metadata.source": _metadata_source, "opentelemetry.tracing.attributes.enable": _only("false"),
                  "schema.data.name.source.header.enable": _only("false"), "schemas.enable": _any,
                  "json.*": _not_yet, "avro.*": _not_yet},  # documentation rows: the sub-options are below
}
# A converter's options handed to the converters it holds (CloudEventsConverter's `json.*` and `avro.*`: the
# latter Apicurio's AvroConverter's when `avro.apicurio.registry.url` is set, else Confluent's).
SUB_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {CLOUDEVENTS: (("json.", JSON), ("avro.", AVRO))}
APICURIO_SUB_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    CLOUDEVENTS: (("json.", JSON), ("avro.", APICURIO_AVRO))}
CE_APICURIO_URL = "avro.apicurio.registry.url"
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


# What Apicurio's serde reads for both of its converters (SerdeConfig, SchemaResolverConfig, KafkaSerdeConfig).
_APICURIO_SERDE: dict[str, Check] = {
    **_COMMON, _A + "url": _any, _A + "auto-register": _bool, _A + "find-latest": _bool,
    _A + "use-id": _use_id, _A + "id-handler": _id_handler, _A + "artifact-resolver-strategy": _apicurio_strategy,
    _A + "headers.enabled": _bool, _A + "auth.username": _any, _A + "auth.password": _any,
    _A + "artifact.artifact-id": _any, _A + "artifact.group-id": _only("default"),
    _A + "auto-register.if-exists": _only("find_or_create_version"), _A + "cache-latest": _bool,
    _A + "check-period-ms": _int, _A + "retry-count": _int, _A + "retry-backoff-ms": _int,
    _A + "serde.validation-enabled": _bool,
}
OPTIONS[APICURIO_AVRO] = {
    **_APICURIO_SERDE, _A + "avro.encoding": _only("binary"),
    "connect.meta.data": _only("true"), "enhanced.avro.schema.support": _only("false"), "schemas.cache.config": _int,
    "schemas.enable": _any,  # JsonConverter's, handed to every converter by `converter.*`
}
# ExtJsonConverter hands its options to the JsonConverter writing the payload (schemas.enable forced false).
OPTIONS[APICURIO_JSON] = {**_APICURIO_SERDE, **{k: v for k, v in OPTIONS[JSON].items() if k != "schemas.enable"},
                          "decimal.format": base64_only("ExtJsonConverter"),
                          "schemas.enable": _any}
_SIMPLE = (STRING, BYTE_ARRAY, DBZ_BINARY, DBZ_BYTE_ARRAY, *NUMBERS, BOOLEAN)
_SIDE_CLASSES = {"key": (JSON, AVRO, PROTOBUF, JSONSCHEMA, *APICURIO_CLASSES, CLOUDEVENTS, *_SIMPLE),
                 "value": (JSON, AVRO, PROTOBUF, JSONSCHEMA, *APICURIO_CLASSES, CLOUDEVENTS, *_SIMPLE),
                 "header": (JSON, SIMPLE_HEADER, *_SIMPLE)}
_DELEGATE = "delegate.converter.type."


def _knows(cls: str, name: str) -> bool:
    """Whether `cls` has the option `name`, itself or through a converter it holds (`json.schemas.enable`)."""
    if name in OPTIONS[cls] and not name.endswith("*"):
        return True
    return any(name.startswith(sub) and name[len(sub):] in OPTIONS[inner]
               for sub, inner in (*SUB_OPTIONS.get(cls, ()), *APICURIO_SUB_OPTIONS.get(cls, ())))


@dataclass(frozen=True, slots=True)
class ConverterSpec:
    """One side's converter: its class and its options (prefix stripped, values checked)."""

    side: str
    cls: str
    options: tuple[tuple[str, Any], ...] = ()
    delegate: ConverterSpec | None = None  # Debezium's BinaryDataConverter/ByteArrayConverter's
    # JsonConverter writing the headers again: they hold the key as the envelope wrote it, with the schema a
    # NUMERIC key converter reads (converter_specs).
    rewrite: bool = False

    @property
    def is_key(self) -> bool:
        return self.side == "key"

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    @property
    def needs_schema(self) -> bool:
        """The converter reads the Connect schema (the envelope keeps it in the JSON it hands over): every
        converter but JsonConverter, which is the envelope's own output unless it writes decimals as numbers."""
        return self.cls != JSON or self.get("decimal.format") == "numeric" or self.rewrite

    @property
    def json_schemas(self) -> bool:
        """JsonConverter's schemas.enable as configured (true by default): whether its output carries the schema."""
        return bool(self.get("schemas.enable", True))

    @property
    def replace_null_with_default(self) -> bool:
        """Whether a null struct field with a schema default is written as the default. JsonConverter's option
        (true by default); StringConverter writes Struct.toString, which reads the fields as they are (measured);
        Debezium's binary converters write a struct with their delegate; every other converter reads fields
        through Struct.get, which returns the default."""
        if self.cls in (JSON, APICURIO_JSON):  # ExtJsonConverter writes its payload with a JsonConverter
            return bool(self.get("replace.null.with.default", True))
        if self.delegate is not None:
            return self.delegate.replace_null_with_default
        return self.cls != STRING

    @property
    def schemas_enable(self) -> bool:
        """Whether the envelope writes the side's records with their schema: JsonConverter's schemas.enable, or
        always for a converter that reads the schema."""
        return self.json_schemas if not self.needs_schema else True


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
        if cls in NO_SUCH_CLASS:
            raise ConfigError(f"{prop}: {cls}: {NO_SUCH_CLASS[cls]}")
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
        if cls == AVRO and spec.get("scrub.invalid.names") and spec.get("use.latest.version") \
                and not spec.get("auto.register.schemas", True):
            # The subject's latest text has scrubbed names; the records' values are keyed by Connect's.
            raise ConfigError(f"{prefix}scrub.invalid.names: true is not supported yet with use.latest.version=true "
                              "and auto.register.schemas=false")
        if cls == PROTOBUF and spec.get("use.latest.version") and not spec.get("auto.register.schemas", True):
            raise ConfigError(f"{prefix}use.latest.version: true is not supported yet with auto.register.schemas="
                              f"false by {cls}")
        if cls == CLOUDEVENTS:
            _check_cloudevents(spec, prefix)
        if cls in APICURIO_CLASSES and not spec.get(_A + "url"):
            raise ConfigError(f"{prefix}{_A}url: required by {cls}")
        specs[side] = spec
    header, key = specs["header"], specs["key"]
    if header.cls == JSON and (header.needs_schema or (key.cls == JSON and key.needs_schema)):
        # The headers' JSON has its schema as the keys' does (config.header_schemas), decimals as numbers or not;
        # the envelope writes them (the old or new key) with their schema, so they are written again.
        keys = (("schemas.enable", key.json_schemas if key.cls == JSON else True),)
        specs["header"] = ConverterSpec("header", JSON, (*header.options, *keys) if header.get("schemas.enable")
                                        is None else header.options, rewrite=True)
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
    if not (avro_events or spec.get("data.serializer.type") == "avro"):
        return
    if spec.get(CE_APICURIO_URL) is None and not spec.get("avro.schema.registry.url"):
        raise ConfigError(f"{prefix}avro.schema.registry.url: required by {spec.cls} with Avro (or "
                          "avro.apicurio.registry.url for Apicurio Registry)")
    if spec.get(CE_APICURIO_URL) is not None:
        if not spec.get(CE_APICURIO_URL).strip():
            raise ConfigError(f"{prefix}{CE_APICURIO_URL}: must name Apicurio Registry's URL (got '')")
        if "," in spec.get(CE_APICURIO_URL):
            raise ConfigError(f"{prefix}{CE_APICURIO_URL}: one URL only: Apicurio's converter is handed the list "
                              "as one URL")
        if not spec.get("avro." + _A + "auto-register", False):
            raise ConfigError(f"{prefix}avro.{_A}auto-register: only true is supported yet with {spec.cls} (pgcdc "
                              "registers the schemas with their references as Apicurio's serializer does)")


def _checked(cls: str, raw: Mapping[str, tuple[str, str]]) -> list[tuple[str, Any]]:
    """A class's options (name -> (property, value)), each checked by its table; a delegate's options
    (`delegate.converter.type.*`) are left to the delegate's table, a held converter's (CloudEvents' `json.*`,
    `avro.*`) are checked by that converter's table."""
    known = OPTIONS[cls]
    options = []
    subs = (APICURIO_SUB_OPTIONS if CE_APICURIO_URL in raw else SUB_OPTIONS).get(cls, ())
    for name, (full, value) in sorted(raw.items()):
        if name.startswith(_DELEGATE) and "delegate.converter.type" in known:
            continue
        check = known.get(name) if not name.endswith("*") else None
        for sub, inner in subs:
            if check is None and name.startswith(sub):
                check = OPTIONS[inner].get(name[len(sub):])
                not_yet = {AVRO: _REGISTRY_NOT_YET, APICURIO_AVRO: _APICURIO_NOT_YET}.get(inner, ())
                if name[len(sub):].startswith(not_yet) and (inner == AVRO or check is None):
                    raise ConfigError(f"{full}: is not supported yet by {cls}")
        if check is None:
            if ((name.startswith(_REGISTRY_NOT_YET) and cls in REGISTRY_CLASSES)
                    or (name.startswith(_APICURIO_NOT_YET) and cls in APICURIO_CLASSES)):
                raise ConfigError(f"{full}: is not supported yet by {cls}")
            raise ConfigError(f"{full}: unknown option {name!r} of {cls}")
        try:
            options.append((name, check(str(value))))
        except ValueError as exc:
            raise ConfigError(f"{full}: {exc} (got {value!r})") from None
    return options
