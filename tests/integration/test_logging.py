"""`pgcdc run` logs as users see them: JSON or human lines, and no secret in any of them."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import orjson

from pgcdc.local import PostgresCluster

SECRET_KAFKA = "kafka-Sasl-" + uuid.uuid4().hex[:12]


def _role(pg: PostgresCluster, *attributes: str) -> tuple[str, str]:
    name, password = f"r_{uuid.uuid4().hex[:8]}", "Pw-" + uuid.uuid4().hex
    pg.execute(f"CREATE ROLE {name} LOGIN {' '.join(attributes)} PASSWORD '{password}'")
    return name, password


def _run(pg: PostgresCluster, dbname: str, user: str, env: dict[str, str], *options: str) -> tuple[int, str]:
    props = {**pg.connection_properties(dbname), "database.user": user, "topic.prefix": "logs",
             "sink.type": "file", "offset.storage": "memory", "snapshot.mode": "no_data",
             "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}", "kafka.sasl.password": SECRET_KAFKA}
    props.pop("database.password")
    sets = [arg for k, v in props.items() for arg in ("--set", f"{k}={v}")]
    proc = subprocess.run([sys.executable, "-m", "pgcdc.cli", "--log-level", "debug", *options, "run", *sets],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr


def test_json_lines_and_no_password_on_failed_authentication(pg: PostgresCluster, dbname: str) -> None:
    user, _ = _role(pg, "REPLICATION")
    wrong = "Wrong-" + uuid.uuid4().hex
    rc, err = _run(pg, dbname, user, {"PGCDC_DATABASE_PASSWORD": wrong}, "--log-format", "json")
    assert rc == 2, err
    lines = [orjson.loads(line) for line in err.splitlines()]  # every line is one JSON object
    assert all({"ts", "level", "logger", "message"} <= set(entry) for entry in lines)
    assert any(entry["level"] == "DEBUG" and "exc_info" in entry for entry in lines)  # the traceback, at debug
    assert lines[-1]["level"] == "ERROR" and lines[-1]["message"].startswith("database.password:")
    assert wrong not in err and SECRET_KAFKA not in err


def test_password_file_and_no_password_when_failing_after_connecting(pg: PostgresCluster, dbname: str,
                                                                   tmp_path: Path) -> None:
    user, password = _role(pg)  # no REPLICATION: start-up fails after the first connection
    secret = tmp_path / "pgpass"
    secret.write_text(password + "\n")
    rc, err = _run(pg, dbname, user, {"PGCDC_DATABASE_PASSWORD_FILE": str(secret), "PGCDC_LOG_FORMAT": "human"})
    assert rc == 2, err
    assert err.splitlines()[-1] == (f"pgcdc: error: database.user: role {user!r} lacks the REPLICATION attribute "
                                    f"(ALTER ROLE {user} REPLICATION)")
    assert " DEBUG " in err and "Traceback" in err
    assert password not in err and SECRET_KAFKA not in err
