"""The key an incremental snapshot chunks a table without a primary key by (capture/incremental_chunks.py)."""

from __future__ import annotations

import logging

import psycopg
import pytest

from pgcdc.capture.incremental_chunks import unique_key
from pgcdc.local import PostgresCluster


def test_unique_key(pg: PostgresCluster, dbname: str, caplog: pytest.LogCaptureFixture) -> None:
    pg.execute(
        "CREATE TABLE pk (id int PRIMARY KEY, a int NOT NULL UNIQUE);"
        "CREATE TABLE nn (a int NOT NULL, b varchar(5) NOT NULL, c int);"
        "CREATE UNIQUE INDEX nn_z ON nn (c); CREATE UNIQUE INDEX nn_y ON nn (b, a);"
        "CREATE TABLE nullable (a int, b text); CREATE UNIQUE INDEX nullable_a ON nullable (a);"
        "CREATE TABLE expr (a int NOT NULL, b text); CREATE UNIQUE INDEX expr_b ON expr (lower(b));"
        "CREATE TABLE plain (a int)", dbname)
    with psycopg.connect(pg.dsn(dbname), autocommit=True) as conn, caplog.at_level(logging.WARNING):
        assert unique_key(conn, "public", "nn") == (("b", "a"), ("character varying(5)", "integer"))
        assert unique_key(conn, "public", "pk") == (("id",), ("integer",))  # (describe reads it first)
        assert unique_key(conn, "public", "expr") == ((), ())
        assert unique_key(conn, "public", "plain") == ((), ())
        assert unique_key(conn, "public", "gone") == ((), ())
        assert not caplog.records
        assert unique_key(conn, "public", "nullable") == ((), ())
    assert [r.getMessage() for r in caplog.records] == [
        "incremental snapshot: public.nullable is keyed by a unique index whose columns allow NULL (a): rows with "
        "NULL there cannot be chunked by it"]
