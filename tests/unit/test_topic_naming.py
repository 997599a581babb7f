"""Topic names per topic.naming.strategy and topic.delimiter (expected names measured on Debezium 3.6,
tests/conformance/test_topic_naming_vs_debezium.py)."""

from __future__ import annotations

import pytest

from pgcdc.envelope.naming import DEFAULT_STRATEGY, SCHEMA_STRATEGY, UNICODE_STRATEGY, data_topic


@pytest.mark.parametrize(("strategy", "delimiter", "schema", "table", "topic"), [
    (SCHEMA_STRATEGY, ".", "public", "plain", "dbserver1.public.plain"),
    (SCHEMA_STRATEGY, ".", "Sales-EU", "Order Lines", "dbserver1.Sales-EU.Order_Lines"),
    (SCHEMA_STRATEGY, ".", "public", "ünïcode", "dbserver1.public._n_code"),
    (SCHEMA_STRATEGY, "_", "public", "dash-table", "dbserver1_public_dash-table"),
    (DEFAULT_STRATEGY, ".", "Sales-EU", "Order Lines", "dbserver1.Order_Lines"),
    (UNICODE_STRATEGY, ".", "Sales-EU", "Order Lines", "dbserver1.Order_u0020Lines"),
    (UNICODE_STRATEGY, ".", "public", "ünïcode", "dbserver1._u00fcn_u00efcode"),
    (UNICODE_STRATEGY, ".", "public", "snake_case", "dbserver1.snake_u005fcase"),
    (UNICODE_STRATEGY, ".", "public", "dash-table", "dbserver1.dash-table"),
])
def test_topic_names(strategy: str, delimiter: str, schema: str, table: str, topic: str) -> None:
    assert data_topic("dbserver1", schema, table, delimiter=delimiter, strategy=strategy) == topic
