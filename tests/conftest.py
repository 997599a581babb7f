"""Shared fixtures. Tiers come from the folder: unit/, integration/, conformance/, slow/, tansu/, spark/.

Fixtures start real servers (a throwaway PostgreSQL cluster, an Apache Kafka broker, Tansu for the demo's
path); when one cannot start, the test fails with the reason. Nothing that could run is mocked. Why which broker
where: docs/decisions/test-broker.md.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pgcdc.local import KafkaBroker, PostgresCluster, TansuBroker
from pgcdc.local.registry import ApicurioRegistry

TIERS = ("unit", "integration", "conformance", "slow", "tansu", "spark")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # The spark tier needs the spark extra and takes minutes: collected only when selected with -m spark.
    if collection_path.name == "spark" and collection_path.parent.name == "tests":
        markexpr = config.getoption("markexpr") or ""
        return "spark" not in markexpr or "not spark" in markexpr
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for tier in TIERS:
            if tier in parts:
                item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(scope="session")
def pg() -> Iterator[PostgresCluster]:
    with PostgresCluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def broker() -> Iterator[KafkaBroker]:
    """One Apache Kafka broker for the session: tests use topics of their own (named after their database)."""
    with KafkaBroker() as b:
        yield b


@pytest.fixture(scope="session")
def tansu() -> Iterator[TansuBroker]:
    """Tansu, the broker `pgcdc demo` starts: for the tests of that path."""
    with TansuBroker() as b:
        yield b


@pytest.fixture(scope="session")
def registry() -> Iterator[ApicurioRegistry]:
    """A real schema registry (Apicurio Registry, Confluent's API under /apis/ccompat/v7)."""
    with ApicurioRegistry() as r:
        yield r


@pytest.fixture
def dbname(pg: PostgresCluster) -> Iterator[str]:
    """A fresh database per test; its slots are dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:10]}"
    pg.create_database(name)
    yield name
    # A walsender may outlive its stopped client for a moment: end it, then drop the database's slots.
    deadline = time.monotonic() + 15
    while pg.execute(f"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                     f"WHERE database = '{name}' AND active") and time.monotonic() < deadline:
        time.sleep(0.1)
    pg.execute(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
               f"WHERE database = '{name}' AND NOT active")
    pg.drop_database(name)
