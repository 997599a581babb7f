"""Bad input: one clear line naming the cause, a non-zero exit, and no slot or publication left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.postgres import free_port


def run_cli(tmp_path: Path, config: dict[str, str] | str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "connector.json"
    path.write_text(config if isinstance(config, str) else json.dumps({"name": "bad", "config": config}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", "run", "--config", str(path)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def leftovers(pg: PostgresCluster, db: str) -> tuple[list, list]:
    slots = pg.execute(f"SELECT slot_name FROM pg_replication_slots WHERE database = '{db}'")
    pubs = pg.execute("SELECT pubname FROM pg_publication", db)
    return slots, pubs


def base(pg: PostgresCluster, db: str, broker: KafkaBroker) -> dict[str, str]:
    return {**pg.connection_properties(db), "topic.prefix": "bad", "snapshot.mode": "no_data",
            "bootstrap.servers": broker.bootstrap_servers, "offset.storage": "memory"}


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pgcdc: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def replica_pg() -> Iterator[PostgresCluster]:
    with PostgresCluster(settings={"wal_level": "replica"}) as cluster:
        yield cluster


def test_wal_level_not_logical(replica_pg: PostgresCluster, broker: KafkaBroker, tmp_path: Path) -> None:
    proc = run_cli(tmp_path, base(replica_pg, "postgres", broker))
    assert proc.returncode != 0
    assert "wal_level is 'replica'" in error_line(proc)
    assert leftovers(replica_pg, "postgres") == ([], [])


@pytest.mark.parametrize(("override", "expected"), [
    ({"database.password": "wrong"}, "database.password: authentication failed for user 'postgres'"),
    ({"database.port": "1"}, "database.hostname/database.port: cannot reach PostgreSQL at 127.0.0.1:1"),
    ({"database.dbname": "nope"}, "database.dbname: database 'nope' does not exist"),
    ({"topic.prefixx": "a"}, "unknown property 'topic.prefixx'"),
    ({"decimal.handling.mode": "float"}, "decimal.handling.mode: Input should be"),
    ({"publication.autocreate.mode": "disabled"}, "publication.name: publication 'dbz_publication' does not exist"),
])
def test_bad_settings(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path,
                      override: dict[str, str], expected: str) -> None:
    proc = run_cli(tmp_path, {**base(pg, dbname, broker), **override})
    assert proc.returncode != 0
    assert expected in error_line(proc)
    assert leftovers(pg, dbname) == ([], [])


def test_no_replication_privilege(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path) -> None:
    pg.execute("DO $$BEGIN CREATE ROLE plain LOGIN PASSWORD 'plain'; EXCEPTION WHEN duplicate_object THEN NULL; "
               "END$$")
    proc = run_cli(tmp_path, {**base(pg, dbname, broker), "database.user": "plain", "database.password": "plain"})
    assert proc.returncode != 0
    assert "database.user: role 'plain' lacks the REPLICATION attribute" in error_line(proc)
    assert leftovers(pg, dbname) == ([], [])


def test_broker_unreachable(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path) -> None:
    cfg = {**base(pg, dbname, broker), "bootstrap.servers": f"127.0.0.1:{free_port()}",
           "kafka.socket.connection.setup.timeout.ms": "2000"}
    proc = run_cli(tmp_path, cfg)
    assert proc.returncode != 0
    assert "bootstrap.servers: cannot reach Kafka" in error_line(proc)
    assert leftovers(pg, dbname) == ([], [])


@pytest.mark.parametrize("text", ["{\"name\": \"x\", \"config\": {", "not json at all"])
def test_malformed_config(tmp_path: Path, text: str) -> None:
    proc = run_cli(tmp_path, text)
    assert proc.returncode != 0
    assert "malformed config file" in error_line(proc)
