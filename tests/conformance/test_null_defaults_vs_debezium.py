"""A NULL in a nullable column that has a DEFAULT, through the real Debezium 3.6 and pgcdc.

Kafka Connect's JsonConverter writes a struct field's schema default in place of a null value when
`replace.null.with.default` is true (KIP-581; the default), in keys and values, before and after images, in
snapshots and streaming. Debezium users set `value.converter.replace.null.with.default=false` (and the key's)
to keep the nulls. Both settings are compared record by record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

UUID = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
# One nullable column with a constant DEFAULT per type family, plus expression defaults (now(), 1+1), a NOT NULL
# column with a default and a nullable column without one.
COLUMNS = (
    "c_int int DEFAULT 5, c_i2 smallint DEFAULT -3, c_i8 bigint DEFAULT 9000000000, c_text text DEFAULT 'dflt',"
    " c_vc varchar(10) DEFAULT 'v'::character varying, c_num numeric(5,2) DEFAULT 1.5, c_numv numeric DEFAULT 2.25,"
    " c_f4 real DEFAULT 0.5, c_f8 float8 DEFAULT 1.25, c_bool boolean DEFAULT true, c_date date DEFAULT '2024-01-02',"
    " c_ts timestamp DEFAULT '2024-01-02 03:04:05.5', c_tz timestamptz DEFAULT '2024-01-02 03:04:05+00',"
    " c_time time DEFAULT '12:34:56', c_uuid uuid DEFAULT '" + UUID + "', c_json json DEFAULT '{\"a\": 1}',"
    " c_jsonb jsonb DEFAULT '{\"b\": 2}', c_bytea bytea DEFAULT '\\x00ff', c_iarr int[] DEFAULT '{1,2}',"
    " c_tarr text[] DEFAULT '{a,b}', c_enum mood DEFAULT 'ok', c_now timestamptz DEFAULT now(),"
    " c_expr int DEFAULT (1 + 1), c_nn int NOT NULL DEFAULT 4, c_plain int"
)
NULLABLE = [c.split()[0] for c in COLUMNS.split(", ") if "NOT NULL" not in c and not c.startswith("c_plain")]
SETUP = (
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"
    f"CREATE TABLE nd (id int PRIMARY KEY, {COLUMNS}); ALTER TABLE nd REPLICA IDENTITY FULL;"
    f"CREATE TABLE nd_default (id int PRIMARY KEY, {COLUMNS});"
    # A key of nullable columns with defaults (message.key.columns).
    "CREATE TABLE nk (a int, b int DEFAULT 7, t text DEFAULT 'k', v text); ALTER TABLE nk REPLICA IDENTITY FULL"
)
NULLS = ", ".join("NULL" for _ in NULLABLE)
INSERTS = [
    f"INSERT INTO nd (id, {', '.join(NULLABLE)}) VALUES (1, {NULLS})",
    "INSERT INTO nd (id, c_now) VALUES (2, '2020-01-01 00:00:00+00')",
    # Two rows: Debezium marks the only row of a table that is neither first nor last in the snapshot
    # `last_in_data_collection`, pgcdc `first_in_data_collection` (a separate matter).
    f"INSERT INTO nd_default (id, {', '.join(NULLABLE)}) VALUES (1, {NULLS}), (3, {NULLS})",
    "INSERT INTO nk (a, b, t) VALUES (1, NULL, NULL)",
]
WORKLOAD = [
    *INSERTS,
    "UPDATE nd SET c_plain = 1 WHERE id = 1",
    f"UPDATE nd SET {', '.join(f'{c} = NULL' for c in NULLABLE)} WHERE id = 2",
    "DELETE FROM nd WHERE id = 1",
    "UPDATE nd_default SET c_plain = 1",
    "DELETE FROM nd_default",
    "UPDATE nk SET v = 'x'",
    "DELETE FROM nk",
]
PROPS = {"message.key.columns": "public\\.nk:a,b,t"}
KEEP_NULLS = {"value.converter.replace.null.with.default": "false",
              "key.converter.replace.null.with.default": "false"}
OPTIONS = {
    "replace": {},
    "keep": KEEP_NULLS,
    "keep_value_only": {"value.converter.replace.null.with.default": "false"},
    "keep_schemaless": {**KEEP_NULLS, "key.converter.schemas.enable": "false",
                        "value.converter.schemas.enable": "false"},
    "replace_schemaless": {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"},
    "replace_txmeta": {"provide.transaction.metadata": "true"},
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_null_with_default_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, option: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {**PROPS, **OPTIONS[option]}, WORKLOAD)
    assert_same(f"null with default, streaming, {option}", ours, theirs)
    assert len(theirs) >= 14


@pytest.mark.parametrize("option", ["replace", "keep"])
def test_null_with_default_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, option: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([SETUP, *INSERTS]), {**PROPS, **OPTIONS[option]},
                            ["INSERT INTO nk (a, b) VALUES (2, NULL)"], snapshot=True)
    assert_same(f"null with default, snapshot, {option}", ours, theirs, snapshot=True)
