"""Topic names and schema names for unusual table names, topic.delimiter, topic.transaction and the topic naming
strategies, compared with the real Debezium 3.x."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

SETUP = (
    'CREATE SCHEMA "Sales-EU"; CREATE TABLE "Sales-EU"."Order Lines" (id int PRIMARY KEY, v text);'
    'CREATE TABLE public."dash-table" (id int PRIMARY KEY); CREATE TABLE public."ünïcode" (id int PRIMARY KEY);'
    "CREATE TABLE public.plain (id int PRIMARY KEY); CREATE TABLE public.snake_case (id int PRIMARY KEY)"
)
WORKLOAD = [
    'INSERT INTO "Sales-EU"."Order Lines" VALUES (1, \'x\')',
    'INSERT INTO public."dash-table" VALUES (1); INSERT INTO public."ünïcode" VALUES (1);'
    " INSERT INTO public.plain VALUES (1)",
    "DELETE FROM public.plain",
    "INSERT INTO public.snake_case VALUES (1)",
    "SELECT pg_logical_emit_message(false, 'note', 'hello')",
]

SCENARIOS = {
    "defaults": {"provide.transaction.metadata": "true"},
    "delimiter": {"topic.delimiter": "_", "topic.transaction": "tx", "provide.transaction.metadata": "true"},
    "unicode_strategy": {"topic.naming.strategy": "io.debezium.schema.DefaultUnicodeTopicNamingStrategy"},
    "default_strategy": {"topic.naming.strategy": "io.debezium.schema.DefaultTopicNamingStrategy"},
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_topic_names_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, scenario: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, SCENARIOS[scenario], WORKLOAD)
    assert_same(scenario, ours, theirs)
