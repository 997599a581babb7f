"""Initial snapshots of each snapshot.mode and snapshot.* property, through Debezium 3.x and pgcdc: the
same `op: r` records, table order and `source.snapshot` markers (first, first_in_data_collection, true,
last_in_data_collection, last) included. pgcdc reads in small primary-key chunks with several readers here,
so chunking and parallel reading are compared too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.file import FileSink
from tests.conformance.compare import compare, load
from tests.conformance.oracle import run_oracle
from tests.conformance import test_debezium_streaming as streaming
from tests.conformance.test_debezium_streaming import run_both
from tests.harness import make_config

SNAPSHOT_FIELDS = ("ts_ms", "ts_us", "ts_ns", "lsn", "sequence", "txId")

# Empty first and last tables, upper case and other schemas, no primary key, a composite key, several chunks.
SETUP = (
    'CREATE TABLE "Upper" (id int PRIMARY KEY, v text); CREATE TABLE a_empty (id int PRIMARY KEY);'
    "CREATE TABLE b (id int PRIMARY KEY, v text); CREATE TABLE nopk (x int, y text);"
    "CREATE TABLE comp (k1 text, k2 int, v numeric(6,2), PRIMARY KEY (k1, k2));"
    "CREATE TABLE zz_empty (id int PRIMARY KEY); CREATE SCHEMA other; CREATE TABLE other.t (id bigint PRIMARY KEY);"
    "CREATE SCHEMA \"Aschema\"; CREATE TABLE \"Aschema\".e (id int PRIMARY KEY);"
    "INSERT INTO \"Upper\" VALUES (1, 'u1'), (2, 'u2');"
    "INSERT INTO b SELECT g, 'row ' || g FROM generate_series(1, 7) g;"
    "INSERT INTO nopk VALUES (1, 'one'), (2, NULL);"
    "INSERT INTO comp VALUES ('a', 1, 1.5), ('a', 2, 2.5), ('b', 1, -3), ('c', 0, 0);"
    "INSERT INTO other.t VALUES (10), (11), (12); INSERT INTO \"Aschema\".e VALUES (5)"
)
PGCDC_ONLY = {"pgcdc.snapshot.chunk.rows": "2", "snapshot.max.threads": "3"}


def snapshot_only(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both connectors in a mode that stops after the snapshot: Debezium until it goes quiet, pgcdc to its end."""
    pg.execute(setup, dbname)
    common = {"topic.prefix": "dbserver1", **props}
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **common,
                                             "slot.name": f"dbz_{dbname}", "publication.name": f"dbzpub_{dbname}"}},
               theirs_path, idle_timeout=6, timeout=120)
    config = make_config(pg, dbname, **{**common, **PGCDC_ONLY, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                        "publication.name": f"pgcdcpub_{dbname}"})
    Connector(config, sink=FileSink(str(ours_path))).run()  # returns once the snapshot is done
    return load(ours_path), load(theirs_path)


MODES: dict[str, dict[str, str]] = {
    "initial_only": {"snapshot.mode": "initial_only"},
    "configuration_based_data_only": {
        "snapshot.mode": "configuration_based", "snapshot.mode.configuration.based.snapshot.data": "true",
        "snapshot.mode.configuration.based.start.stream": "false"},
    "include_collection_list": {"snapshot.mode": "initial_only",
                                "snapshot.include.collection.list": "public.b,other\\..*"},
    "select_statement_overrides": {
        "snapshot.mode": "initial_only", "snapshot.select.statement.overrides": "public.b,public.comp",
        "snapshot.select.statement.overrides.public.b": "SELECT * FROM public.b WHERE id > 4 ORDER BY id",
        "snapshot.select.statement.overrides.public.comp": "SELECT * FROM public.comp WHERE k1 <> 'b' ORDER BY 1, 2"},
    "fetch_size_and_threads": {"snapshot.mode": "initial_only", "snapshot.fetch.size": "3",
                               "snapshot.lock.timeout.ms": "5000"},
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_snapshot_only_modes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = snapshot_only(pg, dbname, tmp_path, SETUP, MODES[mode])
    problems = compare(ours, theirs, snapshot_fields=SNAPSHOT_FIELDS)
    print(f"{mode}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert theirs and not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("mode", ["initial", "always", "when_needed"])
def test_snapshot_then_streaming_modes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                      mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunking and readers for pgcdc only: Debezium with snapshot.max.threads > 1 emits tables in no fixed order.
    monkeypatch.setattr(streaming, "make_config", lambda *a, **kw: make_config(*a, **{**kw, **PGCDC_ONLY}))
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"snapshot.mode": mode},
                            ["INSERT INTO b VALUES (100, 'streamed')", "DELETE FROM comp WHERE k1 = 'a'"])
    problems = compare(ours, theirs, snapshot_fields=SNAPSHOT_FIELDS)
    print(f"{mode}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert any(r["value"] and r["value"]["payload"]["op"] == "c" for r in theirs)
    assert not problems, "\n".join(problems[:40])
