"""From flat `property -> string` maps to a ConnectorConfig: sorting property names (model fields, pass-through
client settings, per-table and per-column families, accepted-but-inert names, typos) and collecting every
problem, so that one run reports them all (ConfigError.problems, one line each)."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pgcdc import config_values, framework_properties, topic_creation
from pgcdc.config import (COLUMN_RULE, JSON_CONVERTER, PASSTHROUGH_PREFIXES, SELECT_OVERRIDE_PREFIX, TRANSFORM_ERRORS,
                          ConnectorConfig)
from pgcdc.converters.settings import PREFIXES as CONVERTER_PREFIXES
from pgcdc.custom_plugins import refuse_custom_plugins
from pgcdc.converters.settings import SIDES as CONVERTER_SIDES
from pgcdc.converters.settings import converter_specs
from pgcdc.config_sources import env_overrides, read_config_file, read_password_file
from pgcdc.errors import ConfigError
from pgcdc.properties import ACCEPTED_NOT_IMPLEMENTED, ACCEPTED_PREFIXES
from pgcdc.topic_creation.config import PREFIX as TOPIC_CREATION_PREFIX
from pgcdc.transforms.config import build_chain

log = logging.getLogger("pgcdc.config")


def build(props: Mapping[str, str]) -> ConnectorConfig:
    """Validate flat properties. Unknown names are errors (with a suggestion); known-but-inert ones warn.

    Every problem is collected before raising, so that one run of `pgcdc validate` (or `run`) lists them all:
    ConfigError.problems holds one line per problem."""
    fields: dict[str, Any] = {}
    kafka: dict[str, str] = {}
    statements: dict[str, str] = {}
    column_rules: dict[str, str] = {}
    transform_props: dict[str, str] = {}
    topic_creation_props: dict[str, str] = {}
    converter_props: dict[str, str] = {}
    ignored: list[str] = []
    problems: list[str] = []
    aliases = {f.alias: name for name, f in ConnectorConfig.model_fields.items() if f.alias}
    if props.get("database.password.file"):
        try:
            props = {**props, "database.password": read_password_file(props)}
        except ConfigError as exc:
            problems.append(str(exc))
    if "internal.legacy.snapshot.max.threads" in props:  # Field.withDeprecatedAliases: the new name wins
        old = props["internal.legacy.snapshot.max.threads"]
        props = {k: v for k, v in props.items() if k != "internal.legacy.snapshot.max.threads"}
        bad = config_values.problems({"internal.legacy.snapshot.max.threads": old})
        problems += bad
        if not bad:
            props.setdefault("legacy.snapshot.max.threads", old)
    for mapping in (framework_properties.map_offsets_topic, framework_properties.map_mismatch_strategy,
                    refuse_custom_plugins):
        props, mapped = mapping(props)
        problems += mapped
    for key, value in props.items():
        if key in framework_properties.INERT:  # before the converter prefixes: <side>.converter.plugin.version
            ignored.append(key)
        elif key.startswith(CONVERTER_PREFIXES):
            converter_props[key] = value
        elif key in aliases:
            fields[key] = value
        elif key == "kafka.bootstrap.servers":
            fields.setdefault("bootstrap.servers", value)
        elif COLUMN_RULE.match(key):
            column_rules[key] = value
        elif key.startswith(SELECT_OVERRIDE_PREFIX):
            statements[key[len(SELECT_OVERRIDE_PREFIX):]] = value
        elif key.startswith(PASSTHROUGH_PREFIXES):
            kafka[key.split(".", 1)[1] if not key.startswith("producer.override.") else key[18:]] = value
        elif key.startswith(TOPIC_CREATION_PREFIX):
            topic_creation_props[key] = value
        elif key in ("transforms", "predicates") or key.startswith(("transforms.", "predicates.")) \
                or key in TRANSFORM_ERRORS:
            transform_props[key] = value
        elif key in ACCEPTED_NOT_IMPLEMENTED or key.startswith((*ACCEPTED_PREFIXES, *framework_properties.PREFIXES)):
            ignored.append(key)
        elif key in framework_properties.REFUSED:
            problems.append(framework_properties.REFUSED[key])
        elif key == "database.server.name":
            problems.append("database.server.name was replaced by topic.prefix in Debezium 2.0, which ignores it; "
                            + ("remove it (topic.prefix is set)" if "topic.prefix" in props else "set topic.prefix"))
        else:
            hint = difflib.get_close_matches(key, [*aliases, *ACCEPTED_NOT_IMPLEMENTED, *framework_properties.INERT],
                                             n=1)
            problems.append(f"unknown property {key!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
    problems += config_values.problems(props)
    problems += framework_properties.problems(props)
    fields["kafka"] = kafka
    fields["snapshot_select_statements"] = statements
    fields["column_rules"] = column_rules
    fields["transform_props"] = transform_props
    fields["topic_creation_props"] = topic_creation_props
    _, creation_problems, not_read = topic_creation.parse(topic_creation_props)
    problems += creation_problems
    ignored += not_read
    try:
        specs = converter_specs({side: props.get(f"{side}.converter", JSON_CONVERTER) for side in CONVERTER_SIDES},
                                converter_props)
    except ConfigError as exc:
        problems += exc.problems
    else:
        fields["converter_specs"] = specs
        # What the envelope writes for each side: JsonConverter's schemas.enable, or the schema another
        # converter reads (the JSON it is handed carries it).
        fields["key.converter.schemas.enable"] = specs["key"].schemas_enable
        fields["value.converter.schemas.enable"] = specs["value"].schemas_enable
    # ConnectorConfigValidationHelper.validateExcludeField: an include list and its exclude list are exclusive.
    for a, b in (("schema.include.list", "schema.exclude.list"), ("table.include.list", "table.exclude.list"),
                 ("column.include.list", "column.exclude.list"),
                 ("message.prefix.include.list", "message.prefix.exclude.list")):
        if fields.get(a) and fields.get(b):
            problems.append(f"{a} and {b} cannot both be set")
    # Every transforms/predicates problem too, before anything starts (the chain is built again at start).
    try:
        build_chain(transform_props, fields.get("key.converter.schemas.enable", True))
    except ConfigError as exc:
        problems += exc.problems
    try:
        config = ConnectorConfig.model_validate(fields)
    except ValidationError as exc:
        problems += [_problem(err) for err in exc.errors()]
        raise ConfigError(*_once_per_property(_split(problems))) from None
    if problems:
        raise ConfigError(*_once_per_property(problems))
    if ignored:
        log.warning("accepted but not acted on by pgcdc: %s", ", ".join(sorted(ignored)))
    return config


def _problem(err: Any) -> str:
    """One pydantic error as a line naming the property (and the value, unless it is a secret)."""
    loc = ".".join(str(x) for x in err["loc"])
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        return f"{loc}: required property is missing"
    if not loc:  # a cross-check of several properties: its message names them
        return msg
    shown = "" if "password" in loc else f" (got {err.get('input')!r})" if err["type"] != "value_error" else ""
    return f"{loc}: {msg}{shown}"


def _once_per_property(problems: list[str]) -> list[str]:
    # A value can be checked twice (Debezium's rule in config_values, and the model or the transforms' own):
    # one line per property, the first.
    seen: set[str] = set()
    out = []
    for p in problems:
        name = p.split(":", 1)[0]
        if name not in seen:
            seen.add(name)
            out.append(p)
    return out


def _split(problems: list[str]) -> list[str]:
    # The cross-checks report several problems as one pydantic error, a line each.
    return [line for p in problems for line in p.splitlines()]


def load(path: str | Path | None, environ: Mapping[str, str] | None = None,
                extra: Mapping[str, str] | None = None) -> ConnectorConfig:
    props: dict[str, str] = read_config_file(path) if path else {}
    props.update(env_overrides(os.environ if environ is None else environ))
    props.update(extra or {})
    return build(props)
