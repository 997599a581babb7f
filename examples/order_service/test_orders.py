"""An application's integration test: its writes must produce the change events downstream consumers expect.

Run with `pytest examples/order_service` (pgcdc's plugin provides the fixtures; `--pgcdc-postgres` picks the
server: a container where Docker runs, local PostgreSQL binaries otherwise, or a postgresql:// URL).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest
from app import SCHEMA, cancel_order, place_order

from pgcdc.testing import Capture, PostgresServer


@pytest.fixture
def conn(pgcdc_postgres: PostgresServer) -> Iterator[psycopg.Connection]:
    pgcdc_postgres.execute(SCHEMA)
    pgcdc_postgres.execute("TRUNCATE order_lines, orders")
    with psycopg.connect(pgcdc_postgres.dsn(), autocommit=True) as c:
        yield c


def test_placing_an_order_publishes_the_order_and_its_lines(conn: psycopg.Connection,
                                                            pgcdc_capture: Capture) -> None:
    order_id = place_order(conn, "ada", [("tea", 2, Decimal("3.50")), ("cake", 1, Decimal("4.25"))])
    order = pgcdc_capture.wait_for(table="orders", op="c", where={"id": order_id})
    assert order.after["status"] == "placed"
    assert order.after["total"] == Decimal("11.25")  # exact: Connect decimals come back as Decimal
    lines = [pgcdc_capture.wait_for(table="order_lines", op="c") for _ in range(2)]
    assert [(e.key_values, e.after["sku"]) for e in lines] == [
        ({"order_id": order_id, "line": 1}, "tea"), ({"order_id": order_id, "line": 2}, "cake")]
    assert order.source["txId"] == lines[0].source["txId"] == lines[1].source["txId"]  # one transaction


def test_cancelling_deletes_lines_then_updates_the_order(conn: psycopg.Connection, pgcdc_capture: Capture) -> None:
    order_id = place_order(conn, "bob", [("tea", 1, Decimal("3.50"))])
    pgcdc_capture.drain()  # forget the creation
    cancel_order(conn, order_id)
    events = pgcdc_capture.drain()
    assert [(e.table or e.topic.rsplit(".", 1)[-1], e.op or e.kind) for e in events] == [
        ("order_lines", "d"), ("order_lines", "tombstone"), ("orders", "u")]
    assert events[-1].after["status"] == "cancelled"


@pytest.mark.pgcdc({"decimal.handling.mode": "string"})
def test_consumers_configured_for_string_decimals(conn: psycopg.Connection, pgcdc_capture: Capture) -> None:
    order_id = place_order(conn, "cy", [("cake", 3, Decimal("4.25"))])
    assert pgcdc_capture.wait_for(table="orders", where={"id": order_id}).after["total"] == "12.75"
