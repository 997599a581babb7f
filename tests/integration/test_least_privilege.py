"""The privileges docs/security.md says pgcdc needs, checked on a real server with a role that has only those.

Each missing privilege must stop `pgcdc run` with one line naming what to grant.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_records

PASSWORD = "Lp-" + uuid.uuid4().hex


def _setup(pg: PostgresCluster, dbname: str, *grants: str) -> str:
    """Tables in two schemas (public.a, app.b, one row each) and a LOGIN REPLICATION role given `grants`."""
    role = f"cdc_{uuid.uuid4().hex[:8]}"
    pg.execute("CREATE SCHEMA app; CREATE TABLE public.a (id int PRIMARY KEY, v text); "
               "CREATE TABLE app.b (id int PRIMARY KEY, v text); "
               "INSERT INTO public.a VALUES (1, 'x'); INSERT INTO app.b VALUES (1, 'y')", dbname)
    pg.execute(f"CREATE ROLE {role} LOGIN REPLICATION PASSWORD '{PASSWORD}'")
    for grant in grants:
        pg.execute(grant.format(role=role, db=dbname), dbname)
    assert pg.execute(f"SELECT rolsuper FROM pg_roles WHERE rolname = '{role}'") == [(False,)]
    return role


def _ops(records: list[dict]) -> list[tuple[str, str, int]]:
    return sorted((r["topic"], r["value"]["payload"]["op"], r["value"]["payload"]["after"]["id"])
                  for r in records if r["value"] is not None)


def test_snapshot_and_streaming_with_replication_connect_usage_select(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(f'REVOKE CONNECT ON DATABASE "{dbname}" FROM PUBLIC')  # so that the CONNECT grant is the one used
    pg.execute(f"CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)  # by a superuser, beforehand
    role = _setup(pg, dbname, 'GRANT CONNECT ON DATABASE "{db}" TO {role}', "GRANT USAGE ON SCHEMA app TO {role}",
                  "GRANT SELECT ON ALL TABLES IN SCHEMA public, app TO {role}")
    config = make_config(pg, dbname, **{"database.user": role, "database.password": PASSWORD,
                                        "snapshot.mode": "initial", "publication.autocreate.mode": "disabled"})
    sink = MemorySink()
    with Running(config, sink=sink):
        wait_records(sink, 2)
        pg.execute("INSERT INTO public.a VALUES (2, 'x'); INSERT INTO app.b VALUES (2, 'y')", dbname)
        wait_records(sink, 4)
    assert _ops(sink.records) == [("test.app.b", "c", 2), ("test.app.b", "r", 1),
                                  ("test.public.a", "c", 2), ("test.public.a", "r", 1)]


def test_streaming_alone_needs_no_table_privileges(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(f"CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    role = _setup(pg, dbname)  # REPLICATION and LOGIN only (CONNECT through PUBLIC's default)
    config = make_config(pg, dbname, **{"database.user": role, "database.password": PASSWORD,
                                        "snapshot.mode": "no_data", "publication.autocreate.mode": "disabled"})
    sink = MemorySink()
    with Running(config, sink=sink):
        pg.execute("INSERT INTO public.a VALUES (2, 'x'); UPDATE app.b SET v = 'z'", dbname)
        wait_records(sink, 2)
    assert _ops(sink.records) == [("test.app.b", "u", 1), ("test.public.a", "c", 2)]


def test_filtered_publication_created_with_create_on_database_and_table_ownership(pg: PostgresCluster,
                                                                                 dbname: str) -> None:
    role = _setup(pg, dbname, 'GRANT CREATE ON DATABASE "{db}" TO {role}', "GRANT USAGE ON SCHEMA app TO {role}",
                  "ALTER TABLE public.a OWNER TO {role}", "ALTER TABLE app.b OWNER TO {role}")
    config = make_config(pg, dbname, **{"database.user": role, "database.password": PASSWORD,
                                        "snapshot.mode": "initial", "publication.autocreate.mode": "filtered",
                                        "table.include.list": "public.a,app.b"})
    sink = MemorySink()
    with Running(config, sink=sink):
        wait_records(sink, 2)
        pg.execute("INSERT INTO app.b VALUES (2, 'y')", dbname)
        wait_records(sink, 3)
    assert pg.execute(f"SELECT pubowner::regrole::text FROM pg_publication WHERE pubname = 'pub_{dbname}'",
                      dbname) == [(role,)]
    assert _ops(sink.records) == [("test.app.b", "c", 2), ("test.app.b", "r", 1), ("test.public.a", "r", 1)]


ALL = ("GRANT USAGE ON SCHEMA app TO {role}", "GRANT SELECT ON ALL TABLES IN SCHEMA public, app TO {role}")
PREBUILT = "CREATE PUBLICATION pub_{db} FOR ALL TABLES"
FILTERED = {"publication.autocreate.mode": "filtered", "table.include.list": "public.a,app.b"}


@pytest.mark.parametrize(("grants", "props", "expected"), [
    pytest.param(("ALTER ROLE {role} NOREPLICATION", PREBUILT, *ALL), {},
                 r"database\.user: role 'cdc_\w+' lacks the REPLICATION attribute \(ALTER ROLE cdc_\w+ REPLICATION\)",
                 id="no-replication"),
    pytest.param(('REVOKE CONNECT ON DATABASE "{db}" FROM PUBLIC', PREBUILT, *ALL), {},
                 r"cannot connect to PostgreSQL at .*: DETAIL:  User does not have CONNECT privilege\.",
                 id="no-connect"),
    pytest.param((PREBUILT, ALL[0], "GRANT SELECT ON public.a TO {role}"), {},
                 r"PostgreSQL refused: permission denied for table b \(the privileges pgcdc needs: docs/security\.md\)",
                 id="no-select-for-the-snapshot"),
    pytest.param((PREBUILT, ALL[1]), {},
                 r"PostgreSQL refused: permission denied for schema app \(the privileges pgcdc needs: ",
                 id="no-usage-on-the-schema"),
    pytest.param((*ALL, 'GRANT CREATE ON DATABASE "{db}" TO {role}'), {"publication.autocreate.mode": "all_tables"},
                 r"publication\.name: must be superuser to create FOR ALL TABLES publication", id="all-tables"),
    pytest.param((ALL[0], "ALTER TABLE public.a OWNER TO {role}", "ALTER TABLE app.b OWNER TO {role}"), FILTERED,
                 r"publication\.name: permission denied for database t_\w+", id="filtered-without-create"),
    pytest.param((*ALL, 'GRANT CREATE ON DATABASE "{db}" TO {role}'), FILTERED,
                 r"publication\.name: must be owner of table (a|b)", id="filtered-without-ownership"),
])
def test_a_missing_privilege_stops_run_with_one_line(pg: PostgresCluster, dbname: str, grants: tuple[str, ...],
                                                     props: dict[str, str], expected: str) -> None:
    role = _setup(pg, dbname, *grants)
    settings = {**pg.connection_properties(dbname), "database.user": role, "topic.prefix": "lp",
                "sink.type": "file", "offset.storage": "memory", "snapshot.mode": "initial",
                "slot.name": f"s_{dbname}", "publication.name": f"pub_{dbname}",
                "publication.autocreate.mode": "disabled", **props}
    settings.pop("database.password")
    sets = [arg for k, v in settings.items() for arg in ("--set", f"{k}={v}")]
    proc = subprocess.run([sys.executable, "-m", "pgcdc.cli", "run", *sets], capture_output=True, text=True,
                          env={**os.environ, "PGCDC_DATABASE_PASSWORD": PASSWORD}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and PASSWORD not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"pgcdc: error: " + expected + ".*", last), last
    assert pg.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 's_{dbname}'") == [(0,)]


def test_compose_init_script_gives_the_sidecar_what_it_needs(pg: PostgresCluster, dbname: str) -> None:
    """docker/postgres-init.sh, run as the postgres image runs it, then pgcdc as its `cdc` role (compose settings)."""
    script = Path(__file__).resolve().parents[2] / "docker" / "postgres-init.sh"
    psql = pg.bindir / "psql" if (pg.bindir / "psql").exists() else shutil.which("psql")
    assert psql, "psql is needed to run docker/postgres-init.sh (Debian postgresql-client)"
    env = {**os.environ, "PATH": f"{Path(psql).parent}:{os.environ['PATH']}", "PGHOST": pg.host,
           "PGPORT": str(pg.port), "PGPASSWORD": pg.password, "POSTGRES_USER": pg.user, "POSTGRES_DB": dbname,
           "CDC_PASSWORD": PASSWORD}
    subprocess.run(["sh", str(script)], env=env, check=True, capture_output=True, timeout=60)
    try:
        assert pg.execute("SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = 'cdc'") == [(False, True)]
        config = make_config(pg, dbname, **{"database.user": "cdc", "database.password": PASSWORD,
                                            "snapshot.mode": "initial", "publication.name": "dbz_publication",
                                            "publication.autocreate.mode": "disabled"})
        sink = MemorySink()
        with Running(config, sink=sink):
            wait_records(sink, 4)
            pg.execute("CREATE TABLE later (id int PRIMARY KEY); INSERT INTO later VALUES (7)", dbname)
            wait_records(sink, 5)
        assert [(t, op) for t, op, _ in _ops(sink.records)] == [
            ("test.public.customers", "r"), ("test.public.customers", "r"), ("test.public.later", "c"),
            ("test.public.orders", "r"), ("test.public.orders", "r")]
    finally:
        pg.execute("DROP OWNED BY cdc", dbname)
        pg.drop_database(dbname)
        pg.execute("DROP ROLE IF EXISTS cdc")
