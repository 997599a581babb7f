"""Where properties come from, as flat `property -> string` maps: a Kafka Connect connector JSON
(`{"name":…, "config":{…}}`) or a flat JSON object, a `.properties` file, YAML (nested keys joined with dots),
environment variables `PGCDC_<PROPERTY>` (upper case, dots as underscores), and a password file."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pgcdc.errors import ConfigError

ENV_PREFIX = "PGCDC_"
# Variables of the tooling (./dev, the tests and soak runs), not properties.
RESERVED_ENV = frozenset({"PGCDC_TANSU_BIN", "PGCDC_S3RVER_BIN", "PGCDC_KAFKA_HOME", "PGCDC_APICURIO_JAR",
                          "PGCDC_LOG_LEVEL", "PGCDC_LOG_FORMAT"})
RESERVED_ENV_PREFIXES = ("PGCDC_PG_", "PGCDC_TEST_", "PGCDC_SOAK_")


def _flatten(obj: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _stringify(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties: key=value or key: value, # and ! comments, trailing backslash continues."""
    out: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if not m:
            out[line] = ""
            continue
        out[m.group(1)] = m.group(2)
    return out


def read_config_file(path: str | Path) -> dict[str, str]:
    """Read a config file into flat `property -> string` form. Raises ConfigError on malformed input."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror}") from None
    suffix = p.suffix.lower()
    try:
        if suffix == ".properties":
            return parse_properties(text)
        if suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    except (ValueError, Exception) as exc:  # yaml.YAMLError subclasses Exception
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"malformed config file {p}: {first}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"malformed config file {p}: expected an object of properties")
    if "config" in data and isinstance(data["config"], Mapping):  # Kafka Connect connector JSON
        flat = _flatten(data["config"])
        if "name" in data and "name" not in flat:
            flat["name"] = data["name"]
    else:
        flat = _flatten(data)
    return {k: _stringify(v) for k, v in flat.items() if v is not None}


def env_overrides(environ: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for k, v in environ.items():
        if k.startswith(ENV_PREFIX) and k not in RESERVED_ENV and not k.startswith(RESERVED_ENV_PREFIXES):
            out[k[len(ENV_PREFIX):].lower().replace("_", ".")] = v
    return out


def read_password_file(props: Mapping[str, str]) -> str:
    path = props["database.password.file"]
    if props.get("database.password"):
        raise ConfigError("database.password.file: set either database.password or database.password.file")
    try:
        return Path(path).read_text().rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(f"database.password.file: cannot read {path}: {exc.strerror}") from None
