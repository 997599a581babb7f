"""database.initial.statements split as Debezium's JdbcConnection splits it; database.sslpassword reaches libpq."""

from __future__ import annotations

import pytest

from pgcdc.config import build_config
from pgcdc.source.connection import initial_statements

BASE = {"topic.prefix": "p", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "bootstrap.servers": "b:9"}


@pytest.mark.parametrize(("text", "statements"), [
    ("SET a = 1", ["SET a = 1"]),
    (" SET a = 1 ; SET b = 2 ;", ["SET a = 1", "SET b = 2"]),
    ("SELECT ';;' ;; x", ["SELECT ';' ; x"]),  # `;;` is a semicolon wherever it is, quotes or not
    ("a;;;b", ["a;", "b"]),
    (";; ;", [";"]),
    ("; ;  ;", []),
    ("DO $$BEGIN PERFORM 1;; END$$;", ["DO $$BEGIN PERFORM 1; END$$"]),
])
def test_split_as_debezium(text: str, statements: list[str]) -> None:
    assert initial_statements(text) == statements


def test_ssl_key_password_goes_to_libpq() -> None:
    config = build_config({**BASE, "database.sslkey": "k.pem", "database.sslpassword": "s3cret"})
    assert config.libpq_params()["sslpassword"] == "s3cret"
    assert "sslpassword" not in build_config(BASE).libpq_params()
