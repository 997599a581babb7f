"""The pytest plugin as a user's suite sees it: fixtures, helpers and failure messages, run through pytester."""

from __future__ import annotations

import pytest

from pgcdc.errors import LocalServiceError
from pgcdc.local import PostgresCluster
from pgcdc.testing import PostgresServer, docker_available

USER_SUITE = '''
import datetime as dt
from decimal import Decimal

import pytest


@pytest.fixture(autouse=True)
def schema(pgcdc_postgres):
    pgcdc_postgres.execute("CREATE TABLE IF NOT EXISTS orders (id int PRIMARY KEY, status text, total numeric(8,2), "
                           "placed timestamp)")
    pgcdc_postgres.execute("TRUNCATE orders")


def test_writes_produce_events(pgcdc_postgres, pgcdc_capture):
    pgcdc_postgres.execute("INSERT INTO orders VALUES (1, 'new', 9.99, '2026-01-02 03:04:05')")
    created = pgcdc_capture.wait_for(table="orders", op="c", where={"id": 1})
    assert created.after == {"id": 1, "status": "new", "total": Decimal("9.99"),
                             "placed": dt.datetime(2026, 1, 2, 3, 4, 5)}
    pgcdc_postgres.execute("UPDATE orders SET status = 'paid' WHERE id = 1")
    pgcdc_postgres.execute("DELETE FROM orders WHERE id = 1")
    rest = pgcdc_capture.drain()
    assert [(e.kind, e.op) for e in rest] == [("change", "u"), ("change", "d"), ("tombstone", None)]
    assert rest[0].after["status"] == "paid" and rest[1].before["id"] == 1
    assert pgcdc_capture.drain() == []


@pytest.mark.pgcdc({"decimal.handling.mode": "string", "topic.prefix": "shop"})
def test_marker_sets_properties(pgcdc_postgres, pgcdc_capture):
    pgcdc_postgres.execute("INSERT INTO orders VALUES (2, 'new', 1.50, NULL)")
    event = pgcdc_capture.wait_for(table="public.orders", where=lambda e: e.after["total"] == "1.50")
    assert event.topic == "shop.public.orders"


def test_failure_shows_what_arrived(pgcdc_postgres, pgcdc_capture):
    pgcdc_postgres.execute("INSERT INTO orders VALUES (3, 'new', 2.00, NULL)")
    pgcdc_capture.wait_for(table="orders", op="d", timeout=3)


def test_server_choice(pgcdc_postgres):
    assert pgcdc_postgres.kind == EXPECTED_KIND
'''


def run_user_suite(pytester: pytest.Pytester, option: str, expected_kind: str) -> pytest.RunResult:
    pytester.makepyfile(test_app=USER_SUITE.replace("EXPECTED_KIND", repr(expected_kind)))
    return pytester.runpytest_subprocess(f"--pgcdc-postgres={option}", "-p", "no:cacheprovider", timeout=300)


def check(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*test_failure_shows_what_arrived*",
        "*no event matching table='orders', op='d' within 3s; 1 unmatched event(s) arrived:*",
        "*c public.orders key={'id': 3} after={'id': 3, 'status': 'new', 'total': Decimal('2.00'), 'placed': None}*",
    ])


def test_plugin_on_a_running_server(pytester: pytest.Pytester, pg: PostgresCluster, dbname: str) -> None:
    url = f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{dbname}"
    check(run_user_suite(pytester, url, "external"))
    # Every capture dropped its slot and its publication.
    assert pg.execute(f"SELECT slot_name FROM pg_replication_slots WHERE database = '{dbname}'") == []
    assert pg.execute("SELECT pubname FROM pg_publication", dbname) == []


def test_plugin_starts_its_own_server(pytester: pytest.Pytester) -> None:
    # `auto` takes a container where a Docker engine answers; here, and wherever none does, local binaries.
    check(run_user_suite(pytester, "auto", "docker" if docker_available() else "local"))


def test_unknown_server_choice_is_one_clear_error() -> None:
    with pytest.raises(LocalServiceError, match="'mysql' is not auto, local, docker or a postgresql:// URL"):
        PostgresServer.choose("mysql")
