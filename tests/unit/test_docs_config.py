"""docs/configuration.md is generated from the config model and kept in step with it."""

from __future__ import annotations

import re
from pathlib import Path

from pgcdc import config_values, framework_properties
from pgcdc.config import ConnectorConfig, build_config, env_overrides
from pgcdc.docgen import COMMAND, reference
from pgcdc.properties import ACCEPTED_NOT_IMPLEMENTED, ACCEPTED_PREFIXES

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_configuration_reference_is_up_to_date() -> None:
    assert DOC.read_text() == reference(), f"docs/configuration.md is stale: run `{COMMAND}`"


def test_every_property_has_a_description_and_a_row() -> None:
    text = reference()
    for name, info in ConnectorConfig.model_fields.items():
        if info.alias:
            assert info.description, f"{info.alias}: add a docstring under field {name} in pgcdc/config.py"
            assert f"| `{info.alias}` |" in text
    for prop in ACCEPTED_NOT_IMPLEMENTED:
        assert f"| `{prop}` |" in text
    for prefix in ACCEPTED_PREFIXES:
        assert f"| `{prefix}*` |" in text


def _valid_value(prop: str) -> str:
    """A value an accepted-but-inert property takes: "x", or one its Debezium rule (config_values) passes."""
    if prop not in config_values.RULES and prop not in framework_properties.RULES:
        return "x"
    return next(v for v in ("1", "100000", "true", "none", "fail", "columns_diff", "select_all", "disabled",
                            "INSERT_INSERT", "serializable", "k=v", "public.t:FULL", "requested", "poll", "memory",
                            "false", "", "90", "no_validation", "latest", framework_properties.PG_SOURCE_INFO,
                            framework_properties.TX_FACTORY)
                if not config_values.problems({prop: v}) and not framework_properties.problems({prop: v}))


def test_every_documented_property_is_accepted() -> None:
    base = {"topic.prefix": "x", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
            "bootstrap.servers": "b:9092"}
    rows = [line.split("|")[1].strip().strip("`") for line in reference().splitlines()
            if line.startswith("| `") and "`*" not in line.split("|")[1] and "<" not in line.split("|")[1]]
    refused = {"transforms`, `transforms.<alias>.*`, `predicates`, `predicates.<name>.*", "database.server.name",
               "errors.tolerance`, `errors.log.enable`, `errors.log.include.messages"}
    for prop in rows:
        if prop in refused or prop in base or prop == "database.password.file":
            continue
        # A property is accepted when its name is known: its default (or any valid value) validates.
        field = next((f for f in ConnectorConfig.model_fields.values() if f.alias == prop), None)
        if field is None:
            build_config({**base, prop: _valid_value(prop)})
        # The environment spelling maps back to the same name (not for the few camelCase names, all inert).
        if prop == prop.lower():
            assert env_overrides({"PGCDC_" + prop.upper().replace(".", "_"): "v"}) == {prop: "v"}


def test_documents_named_in_the_readme_exist() -> None:
    root = DOC.parents[1]
    named = re.findall(r"`(docs/[\w./-]+)`", (root / "README.md").read_text())
    assert "docs/configuration.md" in named and "docs/security.md" in named
    assert [n for n in named if not (root / n).exists()] == []
