"""JsonConverter's `decimal.format=NUMERIC` through the real Debezium 3.6 and pgcdc, record by record.

A Connect Decimal (numeric(p,s) and money in decimal.handling.mode=precise, the default) is then a JSON number in
BigDecimal.toString's text: in values and keys, before and after images, schema defaults, snapshots and streaming,
with and without schemas, for the value side alone or every side through the engine's `converter.*` prefix.
Extreme values: the widest numeric(p,s) digits, zero with a large scale (`0E-20`), values whose text is
scientific, negative values, money's limits, NULL; NaN in a numeric(p,s) (Debezium writes null), infinity and NaN
in a numeric without a scale (VariableScaleDecimal, not a Connect Decimal: unchanged), arrays empty or with null
elements, a domain over numeric(p,s) with a default and an array of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

SETUP = (
    "CREATE DOMAIN amount AS numeric(6,2) DEFAULT 2.50 CHECK (VALUE > -1000);"
    # Special values: NaN where a numeric(p,s) takes it, infinity and NaN where only a numeric without a scale
    # (VariableScaleDecimal: not a Connect Decimal) does; arrays empty, with null elements; a domain with a default.
    "CREATE TABLE ds (id int PRIMARY KEY, p numeric(8,3), v numeric, arr numeric(6,2)[], d amount,"
    " da amount[]);"
    "ALTER TABLE ds REPLICA IDENTITY FULL;"
    "CREATE TABLE dn (id numeric(20,2) PRIMARY KEY, n numeric(5,2) DEFAULT 1.50, big numeric(38,0),"
    " wide numeric(60,30), tiny numeric(30,20), neg numeric(10,4) DEFAULT -0.0001, m money DEFAULT 12.5,"
    " v numeric, note text);"
    "ALTER TABLE dn REPLICA IDENTITY FULL"
)
ROWS = [  # in key order: a snapshot reads them in the table's order (Debezium) or the key's (pgcdc)
    "INSERT INTO dn VALUES (-2.00, 0, -99999999999999999999999999999999999999, 0, 0, 0, -92233720368547758.08,"
    " 0.000001, 'b')",
    "INSERT INTO dn VALUES (1.10, 123.45, 99999999999999999999999999999999999999,"
    " 123456789012345678901234567890.123456789012345678901234567890, 0.00000000000000000001, -999999.9999,"
    " 92233720368547758.07, 1.5, 'a')",
    "INSERT INTO dn (id, tiny) VALUES (3, 0.0000001)",
    "INSERT INTO dn (id, n, big, wide, tiny, neg, m, v) VALUES (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "INSERT INTO ds VALUES (1, 'NaN', 'Infinity', '{}', -999.99, '{}'),"
    " (2, -99999.999, '-Infinity', '{1.50,NULL,-0.01}', 9999.99, '{NULL,2.5}'),"
    " (3, NULL, 'NaN', '{NULL}', NULL, NULL), (4, 0, 0, ARRAY[]::numeric(6,2)[], DEFAULT, '{0}')",
]
WORKLOAD = [
    *ROWS,
    "UPDATE dn SET n = 0.01, note = 'c' WHERE id = 1.10",
    "UPDATE dn SET id = 5.55 WHERE id = 3",  # a new key: a delete and a create, the old key in a header
    "DELETE FROM dn WHERE id = -2",
    "UPDATE ds SET p = 0.001, arr = '{NULL,NULL}' WHERE id = 1",
    "DELETE FROM ds WHERE id = 2",
]
OPTIONS = {
    "value": {"value.converter.decimal.format": "NUMERIC"},
    "key_value_schemaless": {"key.converter.decimal.format": "numeric", "value.converter.decimal.format": "NUMERIC",
                             "key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"},
    "engine_prefix": {"converter.decimal.format": "NUMERIC"},
    "base64": {"value.converter.decimal.format": "BASE64"},
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_decimal_format_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, option: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, OPTIONS[option], WORKLOAD)
    assert_same(f"decimal.format, streaming, {option}", ours, theirs)
    assert len(theirs) >= 15
    numbers = '"n":123.45' in str(theirs) or "123.45" in repr(theirs)
    assert numbers == (option != "base64")


@pytest.mark.parametrize("option", ["value", "engine_prefix"])
def test_decimal_format_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, option: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ";".join([SETUP, *ROWS]), OPTIONS[option],
                            ["INSERT INTO dn (id) VALUES (6.00)"], snapshot=True)
    assert_same(f"decimal.format, snapshot, {option}", ours, theirs, snapshot=True)
    assert len(theirs) >= 9
