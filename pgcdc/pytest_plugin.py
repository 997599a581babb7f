"""pytest fixtures for asserting on change events (registered through the `pytest11` entry point).

    def test_order_is_published(pgcdc_postgres, pgcdc_capture):
        pgcdc_postgres.execute("INSERT INTO orders VALUES (1, 'new')")
        event = pgcdc_capture.wait_for(table="orders", op="c", where={"id": 1})
        assert event.after["status"] == "new"

Fixtures:
- `pgcdc_postgres` (session): a PostgreSQL with wal_level=logical. `--pgcdc-postgres` (or the ini option
  `pgcdc_postgres`, or the environment variable PGCDC_TEST_POSTGRES) chooses: `auto` (default: a
  testcontainers container when a Docker engine answers, else local server binaries), `docker`, `local`, or a
  `postgresql://` URL of a running server.
- `pgcdc_properties`: the Debezium properties of the capture; override this fixture, or mark a test with
  `@pytest.mark.pgcdc({"decimal.handling.mode": "string"})`, to change them.
- `pgcdc_capture`: a running capture (`pgcdc.testing.Capture`) with its own slot and publication, dropped
  after the test. It sees changes committed after it started (snapshot.mode=no_data unless set).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from pgcdc.testing import Capture, PostgresServer


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pgcdc", "pgcdc change-event fixtures")
    group.addoption("--pgcdc-postgres", dest="pgcdc_postgres", default=None,
                    help="PostgreSQL for pgcdc fixtures: auto, local, docker or a postgresql:// URL")
    parser.addini("pgcdc_postgres", "PostgreSQL for pgcdc fixtures (auto, local, docker, or a URL)", default="")
    parser.addini("pgcdc_postgres_image", "container image when pgcdc_postgres is docker", default="postgres:16")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "pgcdc(properties): Debezium properties for the pgcdc_capture fixture")


@pytest.fixture(scope="session")
def pgcdc_postgres(pytestconfig: pytest.Config) -> Iterator[PostgresServer]:
    how = (pytestconfig.getoption("pgcdc_postgres") or pytestconfig.getini("pgcdc_postgres")
           or os.environ.get("PGCDC_TEST_POSTGRES") or "auto")
    server = PostgresServer.choose(str(how), image=str(pytestconfig.getini("pgcdc_postgres_image")))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pgcdc_properties(pgcdc_postgres: PostgresServer, request: pytest.FixtureRequest) -> dict[str, Any]:
    props: dict[str, Any] = {"topic.prefix": "test", **pgcdc_postgres.connection_properties()}
    for mark in reversed(list(request.node.iter_markers("pgcdc"))):
        for arg in mark.args:
            props.update(arg)
        props.update(mark.kwargs)
    return props


@pytest.fixture
def pgcdc_capture(pgcdc_properties: dict[str, Any]) -> Iterator[Capture]:
    with Capture.start(pgcdc_properties) as capture:
        yield capture
