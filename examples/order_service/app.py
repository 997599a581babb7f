"""A tiny order service: the application code whose database writes we want to see as change events."""

from __future__ import annotations

from decimal import Decimal

import psycopg

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, customer text NOT NULL, status text NOT NULL,
                                   total numeric(10,2) NOT NULL);
CREATE TABLE IF NOT EXISTS order_lines (order_id int REFERENCES orders, line int, sku text, qty int,
                                        PRIMARY KEY (order_id, line));
"""


def place_order(conn: psycopg.Connection, customer: str, lines: list[tuple[str, int, Decimal]]) -> int:
    """One transaction: the order and its lines."""
    total = sum((price * qty for _, qty, price in lines), Decimal("0.00"))
    with conn.transaction():
        row = conn.execute("INSERT INTO orders (customer, status, total) VALUES (%s, 'placed', %s) RETURNING id",
                           (customer, total)).fetchone()
        assert row is not None
        for n, (sku, qty, _) in enumerate(lines, 1):
            conn.execute("INSERT INTO order_lines VALUES (%s, %s, %s, %s)", (row[0], n, sku, qty))
    return int(row[0])


def cancel_order(conn: psycopg.Connection, order_id: int) -> None:
    with conn.transaction():
        conn.execute("DELETE FROM order_lines WHERE order_id = %s", (order_id,))
        conn.execute("UPDATE orders SET status = 'cancelled' WHERE id = %s", (order_id,))
