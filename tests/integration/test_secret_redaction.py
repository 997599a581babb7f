"""Secrets stay out of what `status` and `validate` print, and out of their one-line errors: the database password
(from the environment or a file) and a Kafka SASL password."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import orjson

from pgcdc.local import PostgresCluster


def cli(pg: PostgresCluster, db: str, command: str, env: dict[str, str], user: str = "postgres"
        ) -> subprocess.CompletedProcess[str]:
    props = {**pg.connection_properties(db), "database.user": user, "topic.prefix": "sec", "sink.type": "file",
             "offset.storage": "memory", "slot.name": f"slot_{db}", "publication.name": f"pub_{db}",
             "kafka.sasl.password": env["SASL"]}
    props.pop("database.password")
    sets = [arg for k, v in props.items() for arg in ("--set", f"{k}={v}")]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", "--log-level", "debug", command, *sets],
                          env={**clean, **env}, capture_output=True, text=True, timeout=120)


def test_status_with_password_file(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    user, password = f"r_{uuid.uuid4().hex[:8]}", "Pw-" + uuid.uuid4().hex
    pg.execute(f"CREATE ROLE {user} LOGIN REPLICATION PASSWORD '{password}'")
    secret = tmp_path / "pgpass"
    secret.write_text(password + "\n")
    sasl = "Sasl-" + uuid.uuid4().hex
    proc = cli(pg, dbname, "status", {"PGCDC_DATABASE_PASSWORD_FILE": str(secret), "SASL": sasl}, user)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["slot.name"] == f"slot_{dbname}"
    assert password not in proc.stdout + proc.stderr and sasl not in proc.stdout + proc.stderr


def test_wrong_password_from_env_in_status_and_validate(pg: PostgresCluster, dbname: str) -> None:
    wrong, sasl = "Wrong-" + uuid.uuid4().hex, "Sasl-" + uuid.uuid4().hex
    env = {"PGCDC_DATABASE_PASSWORD": wrong, "SASL": sasl}
    status = cli(pg, dbname, "status", env)
    assert status.returncode != 0
    errors = [ln for ln in status.stderr.splitlines() if ln.startswith("pgcdc: error:")]
    assert errors == ["pgcdc: error: database.password: authentication failed for user 'postgres' at "
                      f"{pg.host}:{pg.port}"], status.stderr
    validate = cli(pg, dbname, "validate", env)
    assert validate.returncode == 1
    assert "error: database.password: authentication failed for user 'postgres'" in validate.stdout
    for proc in (status, validate):
        assert wrong not in proc.stdout + proc.stderr and sasl not in proc.stdout + proc.stderr
