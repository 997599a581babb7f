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
SIDES = ("key", "value", "header")
ENGINE_PREFIX = "converter."
PREFIXES = (*(f"{side}.converter." for side in SIDES), ENGINE_PREFIX)

# Classes users name that pgcdc does not write yet: refused with one line.
NOT_YET = frozenset({
    "io.confluent.connect.protobuf.ProtobufConverter",
    "io.confluent.connect.json.JsonSchemaConverter",
    "io.apicurio.registry.utils.converter.AvroConverter",
    "io.apicurio.registry.utils.converter.ExtJsonConverter",
    "io.apicurio.registry.utils.converter.JsonConverter",
    "io.apicurio.registry.utils.converter.ProtobufConverter",
    "io.debezium.converters.CloudEventsConverter",
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
OPTIONS: dict[str, dict[str, Check]] = {
    JSON: {**_COMMON, "schemas.enable": _bool, "schemas.cache.size": _int, "decimal.format": _only("base64"),
           "replace.null.with.default": _bool},
    SIMPLE_HEADER: dict(_COMMON),
    STRING: {**_COMMON, "converter.encoding": _encoding},
    BYTE_ARRAY: dict(_COMMON),
    **{cls: dict(_COMMON) for cls in (*NUMBERS, BOOLEAN)},
    # `delegate.converter.type.<option>`: the delegate's options (checked against its own table)
    **{cls: {**_COMMON, "delegate.converter.type": _class} for cls in (DBZ_BINARY, DBZ_BYTE_ARRAY)},
    AVRO: {**_COMMON, "schema.registry.url": _any, "auto.register.schemas": _bool, "use.latest.version": _bool,
           "latest.compatibility.strict": _bool, "key.subject.name.strategy": _strategy,
           "value.subject.name.strategy": _strategy, "basic.auth.credentials.source": _only("url", "user_info"),
           "basic.auth.user.info": _any, "schema.registry.basic.auth.user.info": _any,
           "schemas.cache.config": _int, "max.schemas.per.subject": _int, "connect.meta.data": _only("true"),
           "enhanced.avro.schema.support": _only("false"), "normalize.schemas": _only("false"),
           "scrub.invalid.names": _only("false"), "avro.remove.java.properties": _only("false"),
           "schemas.enable": _any},  # JsonConverter's, handed to every converter by `converter.*`
}
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
    "use.latest.version": "write with the subject's latest schema id (default false)",
    "latest.compatibility.strict": "with use.latest.version: the registry must find the record's schema compatible "
                                   "with the latest (default true)",
    "key.subject.name.strategy": "TopicNameStrategy (default), RecordNameStrategy or TopicRecordNameStrategy "
                                 "(`io.confluent.kafka.serializers.subject.*`)",
    "value.subject.name.strategy": "as key.subject.name.strategy",
    "basic.auth.credentials.source": "`URL` (default: user info in the URL) or `USER_INFO`",
    "basic.auth.user.info": "`user:password` with basic.auth.credentials.source=USER_INFO (a secret)",
    "schema.registry.basic.auth.user.info": "same as basic.auth.user.info",
    "schemas.cache.config": "no effect (a schema version is compiled and registered once per process)",
    "max.schemas.per.subject": "no effect",
    "connect.meta.data": "only `true`, the default",
    "enhanced.avro.schema.support": "only `false`, the default",
    "normalize.schemas": "only `false`, the default",
    "scrub.invalid.names": "only `false`, the default",
    "avro.remove.java.properties": "only `false`, the default",
}
_SIMPLE = (STRING, BYTE_ARRAY, DBZ_BINARY, DBZ_BYTE_ARRAY, *NUMBERS, BOOLEAN)
_SIDE_CLASSES = {"key": (JSON, AVRO, *_SIMPLE), "value": (JSON, AVRO, *_SIMPLE),
                 "header": (JSON, SIMPLE_HEADER, *_SIMPLE)}
_DELEGATE = "delegate.converter.type."


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
        raw.update({k: kv for k, kv in engine.items() if k in OPTIONS[cls] or k.startswith(_DELEGATE)})
        options = _checked(cls, raw)
        delegate = None
        if dict(options).get("delegate.converter.type"):
            sub = {k[len(_DELEGATE):]: kv for k, kv in raw.items() if k.startswith(_DELEGATE)}
            dcls = dict(options)["delegate.converter.type"]
            delegate = ConverterSpec(side, dcls, tuple(_checked(dcls, sub)))
            if dcls == AVRO and not delegate.get("schema.registry.url"):
                raise ConfigError(f"{prefix}{_DELEGATE}schema.registry.url: required by {dcls}")
        spec = ConverterSpec(side, cls, tuple(options), delegate)
        if cls == AVRO and not spec.get("schema.registry.url"):
            raise ConfigError(f"{prefix}schema.registry.url: required by {cls}")
        specs[side] = spec
    for name, (full, _) in engine.items():
        if not any(name in OPTIONS[s.cls] or (s.delegate is not None and name.startswith(_DELEGATE))
                   for s in specs.values()):
            raise ConfigError(f"{full}: unknown option {name!r} of the configured converters")
    return specs


def _checked(cls: str, raw: Mapping[str, tuple[str, str]]) -> list[tuple[str, Any]]:
    """A class's options (name -> (property, value)), each checked by its table; a delegate's options
    (`delegate.converter.type.*`) are left to the delegate's table."""
    known = OPTIONS[cls]
    options = []
    for name, (full, value) in sorted(raw.items()):
        if name.startswith(_DELEGATE) and "delegate.converter.type" in known:
            continue
        check = known.get(name)
        if check is None:
            if name.startswith(_REGISTRY_NOT_YET) and cls == AVRO:
                raise ConfigError(f"{full}: is not supported yet by {cls}")
            raise ConfigError(f"{full}: unknown option {name!r} of {cls}")
        try:
            options.append((name, check(str(value))))
        except ValueError as exc:
            raise ConfigError(f"{full}: {exc} (got {value!r})") from None
    return options
