"""`transforms`, `transforms.<alias>.*`, `predicates`, `predicates.<name>.*` and errors.* read as Kafka Connect
reads them (ConnectorConfig: alias lists, `type`, `predicate`, `negate`, the rest handed to the transform), each
problem one line naming the alias and option. Nothing is created before this runs (config validation)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pgcdc.errors import ConfigError
from pgcdc.transforms import Predicate, Transform
from pgcdc.transforms import kafka_connect as kc
from pgcdc.transforms import kafka_fields as kf
from pgcdc.transforms.kafka_cast import cast
from pgcdc.transforms.kafka_flatten import flatten
from pgcdc.transforms.kafka_headers import header_from
from pgcdc.transforms.kafka_time import timestamp_router
from pgcdc.transforms.kafka_timestamp import OPTIONS as TSC_OPTIONS
from pgcdc.transforms.kafka_timestamp import timestamp_converter
from pgcdc.transforms.chain import Chain, Step
from pgcdc.transforms.changed import OPTIONS as CHANGED_OPTIONS
from pgcdc.transforms.changed import ExtractChangedRecordState
from pgcdc.transforms.header_to_value import OPTIONS as HTV_OPTIONS
from pgcdc.transforms.header_to_value import HeaderToValue
from pgcdc.transforms.outbox import OPTIONS as OUTBOX_OPTIONS
from pgcdc.transforms.outbox import EventRouter
from pgcdc.transforms.partitions import OPTIONS as PARTITION_OPTIONS
from pgcdc.transforms.partitions import PartitionRouting
from pgcdc.transforms.predicates import PREDICATES
from pgcdc.transforms.timezone import OPTIONS as TZ_OPTIONS
from pgcdc.transforms.timezone import TimezoneConverter
from pgcdc.transforms.router import OPTIONS as ROUTER_OPTIONS
from pgcdc.transforms.router import ByLogicalTableRouter
from pgcdc.transforms.unwrap import OPTIONS as UNWRAP_OPTIONS
from pgcdc.transforms.unwrap import REMOVED, ExtractNewRecordState

K = "org.apache.kafka.connect.transforms."
D = "io.debezium.transforms."


@dataclass(frozen=True, slots=True)
class Context:
    header_schemas: bool


Factory = Callable[[str, Mapping[str, str], Context], Transform]


def _unwrap(where: str, opts: Mapping[str, str], ctx: Context) -> Transform:
    return ExtractNewRecordState(where, opts, ctx.header_schemas)


_SIDE_OPTS = ("replace.null.with.default",)
_INSERT_OPTS = ("topic.field", "partition.field", "offset.field", "timestamp.field", "static.field", "static.value",
                *_SIDE_OPTS)
# type -> (factory, accepted options)
TRANSFORMS: dict[str, tuple[Factory, tuple[str, ...]]] = {
    D + "ExtractNewRecordState": (_unwrap, (*UNWRAP_OPTIONS, *REMOVED)),
    K + "RegexRouter": (kc.regex_router, ("regex", "replacement")),
    K + "Filter": (kc.filter_, ()),
    K + "InsertHeader": (kc.insert_header, ("header", "value.literal")),
    K + "DropHeaders": (kc.drop_headers, ("headers",)),
    K + "ExtractField$Key": (kc.extract_field(True), ("field", "field.syntax.version", *_SIDE_OPTS)),
    K + "ExtractField$Value": (kc.extract_field(False), ("field", "field.syntax.version", *_SIDE_OPTS)),
    K + "HoistField$Key": (kc.hoist_field(True), ("field",)),
    K + "HoistField$Value": (kc.hoist_field(False), ("field",)),
    K + "ReplaceField$Key": (kc.replace_field(True), ("exclude", "include", "renames", *_SIDE_OPTS)),
    K + "ReplaceField$Value": (kc.replace_field(False), ("exclude", "include", "renames", *_SIDE_OPTS)),
    K + "InsertField$Key": (kf.insert_field(True), _INSERT_OPTS),
    K + "InsertField$Value": (kf.insert_field(False), _INSERT_OPTS),
    K + "MaskField$Key": (kf.mask_field(True), ("fields", "replacement")),
    K + "MaskField$Value": (kf.mask_field(False), ("fields", "replacement")),
    K + "ValueToKey": (kf.value_to_key, ("fields", *_SIDE_OPTS)),
    K + "SetSchemaMetadata$Key": (kc.set_schema_metadata(True), ("schema.name", "schema.version", *_SIDE_OPTS)),
    K + "SetSchemaMetadata$Value": (kc.set_schema_metadata(False), ("schema.name", "schema.version",
                                                                    *_SIDE_OPTS)),
    K + "Cast$Key": (cast(True), ("spec", "replace.null.with.default")),
    K + "Cast$Value": (cast(False), ("spec", "replace.null.with.default")),
    K + "Flatten$Key": (flatten(True), ("delimiter",)),
    K + "Flatten$Value": (flatten(False), ("delimiter",)),
    K + "HeaderFrom$Key": (header_from(True), ("fields", "headers", "operation")),
    K + "HeaderFrom$Value": (header_from(False), ("fields", "headers", "operation")),
    K + "TimestampConverter$Key": (timestamp_converter(True), TSC_OPTIONS),
    K + "TimestampConverter$Value": (timestamp_converter(False), TSC_OPTIONS),
    K + "TimestampRouter": (timestamp_router, ("topic.format", "timestamp.format")),
    D + "ByLogicalTableRouter": (lambda where, opts, ctx: ByLogicalTableRouter(where, opts), ROUTER_OPTIONS),
    D + "ExtractChangedRecordState": (lambda where, opts, ctx: ExtractChangedRecordState(
        where, opts, ctx.header_schemas), CHANGED_OPTIONS),
    D + "partitions.PartitionRouting": (lambda where, opts, ctx: PartitionRouting(where, opts), PARTITION_OPTIONS),
    D + "HeaderToValue": (lambda where, opts, ctx: HeaderToValue(where, opts), HTV_OPTIONS),
    D + "TimezoneConverter": (lambda where, opts, ctx: TimezoneConverter(where, opts), TZ_OPTIONS),
    D + "outbox.EventRouter": (lambda where, opts, ctx: EventRouter(where, opts, ctx.header_schemas),
                               OUTBOX_OPTIONS),
}

NOT_YET: tuple[str, ...] = ()
SCRIPTING = (D + "Filter", D + "ContentBasedRouter")


def _split(value: str) -> list[str]:
    """ConfigDef.Type.LIST: comma-separated, trimmed; an empty string is an empty list."""
    return [] if not value.strip() else [x.strip() for x in value.split(",")]


def _aliases(props: Mapping[str, str], name: str) -> list[str]:
    aliases = _split(props.get(name, ""))
    seen: set[str] = set()
    for a in aliases:
        if not a:
            raise ConfigError(f"{name}: an empty alias in {props[name]!r}")
        if a in seen:
            raise ConfigError(f"{name}: duplicate alias {a!r}")
        seen.add(a)
    return aliases


# String.trim(): every character up to U+0020 (Python's str.strip() takes Unicode's whitespace instead).
_JAVA_TRIM = "".join(map(chr, range(0x21)))


def _options(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}


def _configdef(opts: Mapping[str, str]) -> dict[str, str]:
    """A Kafka Connect transform's or predicate's settings as its configure() sees them: ConfigDef.parseType
    trims a setting's text whatever its type (STRING, LIST before splitting, CLASS, numbers, booleans), measured
    on Kafka Connect 4.3 (" cdc_$1 " routes to cdc_t). Debezium's own transforms parse theirs their own way
    (ExtractNewRecordState with spaced settings measured equal without this)."""
    return {k: v.strip(_JAVA_TRIM) for k, v in opts.items()}


def _python(where: str, type_: str) -> Transform:
    module, _, func = type_.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}.type: cannot load the Python callable {type_!r}: {exc}") from None
    if not callable(fn):
        raise ConfigError(f"{where}.type: {type_!r} is not callable")
    return fn  # type: ignore[no-any-return]


def _bool(where: str, value: str) -> bool:
    if value.strip().lower() not in ("true", "false"):
        raise ConfigError(f"{where}: expected true or false (got {value!r})")
    return value.strip().lower() == "true"


def _predicates(props: Mapping[str, str]) -> dict[str, Predicate]:
    out: dict[str, Predicate] = {}
    names = _aliases(props, "predicates")
    for name in names:
        where = f"predicates.{name}"
        opts = _options(props, where + ".")
        type_ = opts.pop("type", "").strip()
        if not type_:
            raise ConfigError(f"{where}.type: required (one of {', '.join(PREDICATES)})")
        if type_ not in PREDICATES:
            raise ConfigError(f"{where}.type: unknown predicate {type_!r} (accepted: {', '.join(PREDICATES)})")
        factory, accepted = PREDICATES[type_]
        for opt in opts:
            if opt not in accepted:
                raise ConfigError(f"{where}.{opt}: unknown option for {type_.rsplit('.', 1)[1]} "
                                  f"(accepted: {', '.join(accepted) or 'none'})")
        out[name] = factory(where, _configdef(opts))
    for key in props:
        if key.startswith("predicates.") and key.split(".")[1] not in names:
            raise ConfigError(f"{key}: predicate {key.split('.')[1]!r} is not listed in predicates")
    return out


def build_chain(props: Mapping[str, str], header_schemas: bool = True) -> Chain | None:
    """The chain `props` configure (None without `transforms`); ConfigError naming the first bad property."""
    tolerance = props.get("errors.tolerance", "none").strip().lower()
    if tolerance not in ("none", "all"):
        raise ConfigError(f"errors.tolerance: expected none or all (got {props['errors.tolerance']!r})")
    log_errors = _bool("errors.log.enable", props.get("errors.log.enable", "false"))
    log_messages = _bool("errors.log.include.messages", props.get("errors.log.include.messages", "false"))
    predicates = _predicates(props)
    aliases = _aliases(props, "transforms")
    for key in props:
        if key.startswith("transforms.") and key.split(".")[1] not in aliases:
            raise ConfigError(f"{key}: transform {key.split('.')[1]!r} is not listed in transforms")
    if not aliases:
        return None
    ctx = Context(header_schemas)
    steps = []
    for alias in aliases:
        where = f"transforms.{alias}"
        opts = _options(props, where + ".")
        type_ = opts.pop("type", "").strip()
        predicate_name = opts.pop("predicate", "").strip()
        negate = _bool(f"{where}.negate", opts.pop("negate", "false"))
        if not type_:
            raise ConfigError(f"{where}.type: required (a transform class, or module:function for Python)")
        if predicate_name and predicate_name not in predicates:
            raise ConfigError(f"{where}.predicate: {predicate_name!r} is not listed in predicates "
                              f"(listed: {', '.join(predicates) or 'none'})")
        if negate and not predicate_name:
            raise ConfigError(f"{where}.negate: needs {where}.predicate")
        if type_ in SCRIPTING:
            raise ConfigError(f"{where}.type: {type_} needs a JVM scripting engine; use "
                              f"{K}Filter with a predicate, or a Python callable (module:function)")
        if type_ in NOT_YET:
            raise ConfigError(f"{where}.type: {type_} is not supported by pgcdc yet")
        if type_ in TRANSFORMS:
            factory, accepted = TRANSFORMS[type_]
            for opt in opts:
                if opt in ("blacklist", "whitelist") and "ReplaceField" in type_:
                    raise ConfigError(f"{where}.{opt}: removed in Kafka Connect 4.0 (which ignores it); use "
                                      f"{'exclude' if opt == 'blacklist' else 'include'}")
                if opt not in accepted:
                    raise ConfigError(f"{where}.{opt}: unknown option for {type_.rsplit('.', 1)[1]} "
                                      f"(accepted: {', '.join(accepted) or 'none'})")
            transform = factory(where, _configdef(opts) if type_.startswith(K) else opts, ctx)
        elif ":" in type_ and "." not in type_.partition(":")[2]:
            transform = _python(where, type_)
        else:
            raise ConfigError(f"{where}.type: unknown transform {type_!r} (accepted: {', '.join(TRANSFORMS)}, "
                              "or module:function for a Python callable)")
        steps.append(Step(alias, type_, transform, predicates.get(predicate_name) if predicate_name else None,
                          negate))
    return Chain(tuple(steps), tolerance == "all", log_errors, log_messages)


def transform_properties(props: Mapping[str, str]) -> dict[str, str]:
    """The properties build_chain reads."""
    return {k: v for k, v in props.items() if k in ("transforms", "predicates") or
            k.startswith(("transforms.", "predicates.")) or k in ERRORS}


ERRORS = ("errors.tolerance", "errors.log.enable", "errors.log.include.messages")


