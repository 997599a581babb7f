"""publish.via.partition.root on the publication pgcdc creates, as PostgresReplicationConnection.initPublication
does: `WITH (publish_via_partition_root = true)` on CREATE PUBLICATION in each autocreate mode; an existing
publication is left as it is, and the filtered mode's ALTER PUBLICATION ... SET TABLE does not change it.

The option, and a partitioned table in a publication, need PostgreSQL 13: on an older tier's server these tests
run on the newest Debian PostgreSQL installed (./dev installs postgresql-15), started for this module."""

from __future__ import annotations

import glob
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgcdc.local import PostgresCluster
from pgcdc.ops import validate
from pgcdc.source import slot as slots
from tests.harness import make_config

@pytest.fixture(scope="module")
def cluster(pg: PostgresCluster) -> Iterator[PostgresCluster]:
    if pg.major >= 13:
        yield pg
        return
    newest = max(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda b: int(Path(b).parent.name), default=None)
    assert newest is not None, f"PostgreSQL {pg.major} has no publish_via_partition_root and no Debian PostgreSQL 13+"
    with PostgresCluster(bindir=Path(newest)) as newer:
        assert newer.major >= 13, f"the newest Debian PostgreSQL is {newer.major}"
        yield newer


@pytest.fixture
def db(cluster: PostgresCluster) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:10]}"
    cluster.create_database(name)
    yield name
    cluster.drop_database(name)


SETUP = ("CREATE TABLE pt (id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);"
         "CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10); CREATE TABLE other (id int PRIMARY KEY)")


def _viaroot_and_tables(conn: psycopg.Connection, name: str) -> tuple[bool, list[str]]:
    via = conn.execute("SELECT pubviaroot FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
    assert via is not None
    tables = conn.execute("SELECT prrelid::regclass::text FROM pg_publication_rel r JOIN pg_publication p "
                          "ON p.oid = r.prpubid WHERE pubname = %s ORDER BY 1", (name,)).fetchall()
    return via[0], [t for (t,) in tables]


@pytest.mark.parametrize(("mode", "via", "tables"), [
    ("all_tables", "true", []), ("filtered", "true", ["pt", "pt_1"]), ("no_tables", "true", []),
    ("filtered", "false", ["pt", "pt_1"]), ("all_tables", "false", [])])
def test_created_publication_gets_the_option(cluster: PostgresCluster, db: str, mode: str, via: str,
                                             tables: list[str]) -> None:
    pg, dbname = cluster, db
    pg.execute(SETUP, dbname)
    config = make_config(pg, dbname, **{"publication.autocreate.mode": mode, "publish.via.partition.root": via,
                                        "table.include.list": "public.pt.*"})
    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
        assert slots.ensure_publication(conn, config)
        assert _viaroot_and_tables(conn, config.publication_name) == (via == "true", tables)


def test_existing_publication_is_not_changed(cluster: PostgresCluster, db: str) -> None:
    pg, dbname = cluster, db
    pg.execute(SETUP + f";CREATE PUBLICATION pub_{dbname} FOR TABLE other", dbname)
    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn:
        for mode in ("all_tables", "filtered"):
            config = make_config(pg, dbname, **{"publication.autocreate.mode": mode,
                                                "publish.via.partition.root": "true",
                                                "table.include.list": "public.pt.*"})
            assert not slots.ensure_publication(conn, config)
        # filtered: the table list follows the filters, the option stays as the publication was created
        assert _viaroot_and_tables(conn, f"pub_{dbname}") == (False, ["pt", "pt_1"])


@pytest.mark.parametrize("via", ["true", "false"])
def test_validate_sees_partitions_published_through_their_tree(cluster: PostgresCluster, db: str, via: str) -> None:
    """pg_publication_tables lists a partitioned table's leaves, or its root alone with publish_via_partition_root:
    `pgcdc validate` counts the root and its partitions (all captured tables) as published either way."""
    pg, dbname = cluster, db
    pg.execute(SETUP + f";CREATE PUBLICATION pub_{dbname} FOR TABLE pt WITH (publish_via_partition_root = {via})",
               dbname)
    config = make_config(pg, dbname, **{"publication.autocreate.mode": "disabled", "table.include.list": "public.pt.*"})
    assert [p.text for p in validate(config) if "publication" in p.text] == []
    config = make_config(pg, dbname, **{"publication.autocreate.mode": "disabled"})
    assert [p.text for p in validate(config) if "publication" in p.text] == [
        f"publication.name: publication 'pub_{dbname}' lacks captured table(s) public.other"]
