"""docs/configuration.md, generated from the config model: `python -m pgcdc.docgen > docs/configuration.md`.

Every row comes from `ConnectorConfig` (alias = Debezium's property name, default, Literal values, the field's
docstring) or from the accepted-but-inert names in `pgcdc/properties.py`; tests/unit/test_docs_config.py fails
when the committed file differs from what this prints.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Literal, get_args, get_origin

import annotated_types
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from pgcdc.config import (OFFSET_STORES, PASSTHROUGH_PREFIXES, SELECT_OVERRIDE_PREFIX, ConnectorConfig,
                          is_secret_property)
from pgcdc.properties import ACCEPTED_NOT_IMPLEMENTED, ACCEPTED_PREFIXES

COMMAND = "python -m pgcdc.docgen > docs/configuration.md"

# Properties Debezium's PostgreSQL connector does not have: pgcdc's own (besides the `pgcdc.` namespace).
PGCDC_ONLY = frozenset({"sink.type", "sink.file.path", "metrics.port", "metrics.host", "database.password.file"})


def _supported(alias: str) -> str:
    return "pgcdc only" if alias.startswith("pgcdc.") or alias in PGCDC_ONLY else "yes"


def _default(info: FieldInfo) -> str:
    value = info.default
    if value is PydanticUndefined:
        return "**required**"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (tuple, frozenset)):
        return f"`{','.join(sorted(value))}`" if value else "empty"
    if value == "":
        return "empty"
    return f"`{value}`"


def _bounds(info: FieldInfo) -> str:
    parts: list[str] = []
    for m in info.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if isinstance(m, getattr(annotated_types, attr.capitalize())):
                parts.append(f"{sign} {getattr(m, attr)}")
    if len(parts) == 2 and parts[0].startswith("≥") and parts[1].startswith("≤") and parts[0][2:] == parts[1][2:]:
        return f"= {parts[0][2:]}"
    return ", ".join(parts)


def _values(name: str, info: FieldInfo) -> str:
    ann = info.annotation
    optional = get_origin(ann) in (typing.Union, types.UnionType)
    args = [a for a in get_args(ann) if a is not type(None)] if optional else [ann]
    if name == "offset_storage":  # the validator also maps Kafka Connect's backing-store class names
        return " / ".join(f"`{k}`" for k in OFFSET_STORES if "." in k) + ", or `kafka` / `file` / `memory`"
    if len(args) == 1 and get_origin(args[0]) is Literal:
        return " / ".join(f"`{v}`" for v in get_args(args[0]))
    kind = args[0] if len(args) == 1 else ann
    if kind is bool:
        return "`true` / `false`"
    if kind is int:
        bounds = _bounds(info)
        return f"integer{' ' + bounds if bounds else ''}"
    if get_origin(kind) is tuple or name == "skipped_operations":
        return "comma-separated list"
    return "string"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference() -> str:
    out = [
        "# Configuration reference",
        "",
        f"Generated from the config model (`pgcdc/config.py`, `pgcdc/properties.py`) by `{COMMAND}`; a unit",
        "test fails when this file is stale. Do not edit it by hand.",
        "",
        "Property names are Debezium's: a Kafka Connect connector JSON (`{\"name\":…, \"config\":{…}}`), a flat JSON",
        "object, a `.properties` file or YAML (nested keys joined with dots) works unchanged. Every property can",
        "also be set as an environment variable `PGCDC_<PROPERTY>` (upper case, dots as underscores:",
        "`PGCDC_TOPIC_PREFIX`) or with `--set property=value`; the environment wins over the file, `--set` over",
        "both (the few camelCase names, all without effect, have no environment spelling). Unknown names are",
        "refused with a suggestion; so are values outside the listed ones.",
        "",
        "**supported**: `yes` — Debezium's property, acted on as Debezium does (within the values listed);",
        "`pgcdc only` — pgcdc's own, Debezium has no such property; `accepted, no effect` — accepted so that",
        "Debezium's configuration works unchanged, logged as a warning at start-up, not acted on. Their values",
        "are still checked as Debezium 3.6 checks them (`pgcdc/config_values.py`: `max.batch.size=-5` is refused",
        "as Debezium refuses it), and every problem of a configuration is reported at once, one line each.",
        "",
        "## Properties",
        "",
        "| property | default | values | supported | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, info in ConnectorConfig.model_fields.items():
        if not info.alias:
            continue
        out.append(f"| `{info.alias}` | {_default(info)} | {_values(name, info)} | {_supported(info.alias)} | "
                   f"{_cell(info.description or '')} |")
    out += [
        "",
        "## Families of properties",
        "",
        "| property | supported | meaning |",
        "| --- | --- | --- |",
        f"| `{SELECT_OVERRIDE_PREFIX}<schema>.<table>` | yes | the SELECT that snapshots that table, for the "
        "tables named in `snapshot.select.statement.overrides` |",
        "| `kafka.bootstrap.servers` | yes | same as `bootstrap.servers` (Debezium Server's spelling) |",
        "| `column.mask.with.<N>.chars` | yes | columns (regexes of `<schema>.<table>.<column>`) written as N "
        "asterisks |",
        "| `column.mask.hash[.v2].<algorithm>.with.salt.<salt>` | yes | columns written as the hex digest of salt "
        "and value (v1: Java-serialized string, v2: UTF-8), cut to the column's length |",
        "| `column.truncate.to.<N>.chars` | yes | columns cut to N characters |",
    ]
    for prefix in PASSTHROUGH_PREFIXES:
        out.append(f"| `{prefix}*` | yes | passed to the Kafka producer (librdkafka) with the prefix removed, "
                   "e.g. `" + prefix + "compression.type` |")
    out += [
        "| `transforms`, `transforms.*` | refused | pgcdc writes the raw Debezium envelope; an ignored single "
        "message transform would silently change the output |",
        "| `database.server.name` | refused | replaced by `topic.prefix` in Debezium 2.0 |",
        "",
        "## Accepted, no effect",
        "",
        "Accepted with a warning at start-up, so a Debezium connector JSON keeps working; pgcdc does not act on "
        "them. A prefix (`errors.*`) covers the names of its family other than the properties listed above.",
        "",
        "| property | supported |",
        "| --- | --- |",
    ]
    aliases = {f.alias for f in ConnectorConfig.model_fields.values() if f.alias}
    for prop in sorted(ACCEPTED_NOT_IMPLEMENTED - aliases):
        out.append(f"| `{prop}` | accepted, no effect |")
    for prefix in sorted(ACCEPTED_PREFIXES):
        out.append(f"| `{prefix}*` | accepted, no effect |")
    secret_examples = sorted(p for p in (*aliases, *ACCEPTED_NOT_IMPLEMENTED) if is_secret_property(p))
    out += [
        "",
        "## Secrets",
        "",
        "The values of properties whose name contains `password`, `secret`, `sasl.jaas.config` or `ssl.key` (here: "
        + ", ".join(f"`{p}`" for p in secret_examples) + ", and pass-through settings such as "
        "`kafka.sasl.password` or `kafka.ssl.key.pem`) are replaced by `***` in every log line and error message, "
        "and left out of the configuration's printed form. `database.password.file` (environment: "
        "`PGCDC_DATABASE_PASSWORD_FILE`) reads the password from a file instead; see `docs/security.md`.",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
