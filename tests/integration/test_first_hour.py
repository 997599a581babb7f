"""The first hour with pgcdc, tried as a new user would, through the real CLI: Kafka unreachable, several mistakes
in one config, the README's no-Kafka hint, a forgotten password."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.local.postgres import free_port
from tests.harness import wait_for


def pgcdc(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**clean, **(env or {})}, cwd=cwd)


def sets(props: dict[str, str]) -> list[str]:
    return [arg for k, v in props.items() for arg in ("--set", f"{k}={v}")]


def test_kafka_unreachable_fails_within_seconds_with_one_line(pg: PostgresCluster, dbname: str) -> None:
    """Was: validate 40 s and 776 librdkafka lines, run 31 s and 581 lines, before the line that matters."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    servers = f"127.0.0.1:{free_port()}"
    props = {**pg.connection_properties(dbname), "topic.prefix": "fh", "bootstrap.servers": servers,
             "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}", "snapshot.mode": "no_data"}
    for command in ("validate", "run"):
        started = time.monotonic()
        proc = pgcdc(command, *sets(props))
        took = time.monotonic() - started
        assert proc.returncode != 0, proc.stderr
        out = (proc.stdout + proc.stderr).splitlines()
        assert "rdkafka" not in proc.stderr and len(out) <= 3, out[:20]
        mentions = [ln for ln in out if f"bootstrap.servers: cannot reach Kafka at {servers}" in ln]
        assert len(mentions) == 1, out
        assert "pgcdc.kafka.reach.timeout.ms" in mentions[0]
        # The default wait is 5 s; the rest is the interpreter and PostgreSQL (a loaded machine is slower).
        assert took < 15, (command, took)
    assert pg.execute(f"SELECT slot_name FROM pg_replication_slots WHERE slot_name = 's_{dbname}'") == []


def test_kafka_reach_timeout_is_a_setting(pg: PostgresCluster, dbname: str) -> None:
    props = {**pg.connection_properties(dbname), "topic.prefix": "fh", "bootstrap.servers":
             f"127.0.0.1:{free_port()}", "pgcdc.kafka.reach.timeout.ms": "1000", "offset.storage": "memory",
             "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}"}
    started = time.monotonic()
    proc = pgcdc("run", *sets(props))
    assert "within 1 s" in proc.stderr, proc.stderr
    assert time.monotonic() - started < 10


def test_validate_reports_every_configuration_problem_at_once(pg: PostgresCluster, dbname: str) -> None:
    """Was: three errors took three runs."""
    props = {**pg.connection_properties(dbname), "topic.prefix": "fh", "database.port": "five",
             "max.batch.size": "-5", "snapshot.mode": "sometimes", "tombstones.on.delete": "maybe"}
    for command in ("validate", "run"):
        proc = pgcdc(command, *sets(props))
        assert proc.returncode != 0
        lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pgcdc: error:")]
        assert len(lines) == 4, proc.stderr
        for name in ("database.port:", "max.batch.size:", "snapshot.mode:", "tombstones.on.delete:"):
            assert sum(name in ln for ln in lines) == 1, (name, lines)


def test_readme_file_sink_without_kafka(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """The README: `sink.type=file` with `sink.file.path=-` writes records to stdout, no Kafka. Was refused until
    offset.storage and offset.storage.file.filename were set too; offsets now default to ./offsets.dat."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    conn = pg.connection_properties(dbname)
    env = {"PGCDC_DATABASE_PASSWORD": conn.pop("database.password")}
    props = {**conn, "topic.prefix": "fh", "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}",
             "snapshot.mode": "no_data", "sink.type": "file", "sink.file.path": "-"}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    proc = subprocess.Popen([sys.executable, "-m", "pgcdc.cli", "run", *sets(props)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**clean, **env}, cwd=tmp_path)
    try:
        wait_for(lambda: proc.poll() is not None or pg.execute(
            f"SELECT active FROM pg_replication_slots WHERE slot_name = 's_{dbname}'") == [(True,)], 60, "streaming")
        assert proc.poll() is None, proc.communicate()
        pg.execute("INSERT INTO t VALUES (7)", dbname)
        wait_for((tmp_path / "offsets.dat").exists, 30, "the offset file")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    (record,) = [orjson.loads(line) for line in out.splitlines()]
    assert record["topic"] == "fh.public.t" and record["value"]["payload"]["after"] == {"id": 7}
    assert (tmp_path / "offsets.dat").stat().st_size > 0


def test_missing_password_says_none_was_given(pg: PostgresCluster, dbname: str, broker: TansuBroker) -> None:
    props = {**pg.connection_properties(dbname), "topic.prefix": "fh", "bootstrap.servers": broker.bootstrap_servers}
    props.pop("database.password")
    proc = pgcdc("run", *sets(props), env={"PGPASSFILE": "/nonexistent"})
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("pgcdc: error:")]
    assert "authentication failed" in line and "no password was given" in line, line
    for option in ("database.password", "PGCDC_DATABASE_PASSWORD", "database.password.file"):
        assert option in line
    wrong = pgcdc("run", *sets({**props, "database.password": "wrong"}))
    assert "no password was given" not in wrong.stderr  # a wrong password gets no such hint
