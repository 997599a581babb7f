"""More transforms compared with Debezium 3.6 record by record (topic, partition, key, value, headers), beside
test_transforms_vs_debezium.py: PartitionRouting's hash functions over every column type (murmur, and java on
bytes), the `$Key` variants on composite and reshaped keys, and Cast to float32."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.test_transforms_vs_debezium import K, assert_same_records, run_recorded, unwrap

ROUTING = "io.debezium.transforms.partitions.PartitionRouting"
P_SETUP = ("CREATE TABLE p (id int PRIMARY KEY, v text, b bytea, s smallint, big bigint, r real,"
           " d double precision, n numeric(7,2), flag bool, j jsonb, dt date, ts timestamp)")
P_WORKLOAD = [
    "INSERT INTO p VALUES (1, 'one', '\\x00ff80', 7, 9000000000, 1.25, 0.1, 12.34, true, '{\"k\": 1}',"
    " '2024-02-29', '2024-02-29 12:34:56.789'),"
    " (2, 'héllo wörld ✓ 𝄞 and a text longer than sixteen bytes', '\\x0102030405060708090a0b0c0d0e0f1011', -3, -1,"
    " -0.5, 1e20, -0.01, false, '[]', '1960-01-01', '1960-01-01 00:00:00.000001'),"
    " (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (4, '', '\\x', 0, 0, 0, 0, 0, false, '{}', '1970-01-01', '1970-01-01 00:00:00')",
    "UPDATE p SET v = 'uno', b = '\\xdeadbeef' WHERE id = 1",
    "DELETE FROM p WHERE id = 2",
]
EVERY_TYPE = "change.id,source.table,change.v,change.b,change.s,change.big,change.r,change.d,change.n,change.flag," \
             "change.j,change.dt,change.ts"


def routing(fields: str, num: str, function: str | None = None) -> dict[str, str]:
    return {"transforms": "part", "transforms.part.type": ROUTING, "transforms.part.partition.payload.fields": fields,
            "transforms.part.partition.topic.num": num,
            **({"transforms.part.partition.hash.function": function} if function else {})}


PARTITION_SCENARIOS: dict[str, dict[str, str]] = {
    "partition_routing_murmur_every_type": routing(EVERY_TYPE, "11", "murmur"),
    "partition_routing_murmur_text": routing("change.v, source.table", "1000", "MURMUR"),
    "partition_routing_java_bytes": routing("change.b,change.id", "13"),
}


@pytest.mark.parametrize("scenario", sorted(PARTITION_SCENARIOS))
def test_partition_routing_hashes_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                 scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, P_SETUP, PARTITION_SCENARIOS[scenario], P_WORKLOAD, scenario)
    assert len({r["partition"] for r in theirs}) > 2, "the workload should spread over partitions"
    assert_same_records(scenario, ours, theirs)


# A composite key (a, b); a primary-key change gives a delete, its tombstone and a create.
KEY_SETUP = ("CREATE TABLE kz (a int, b text, ts timestamp, d double precision, n numeric(6,2), r real, big bigint,"
             " flag bool, PRIMARY KEY (a, b)); ALTER TABLE kz REPLICA IDENTITY FULL")
KEY_WORKLOAD = [
    "INSERT INTO kz VALUES (1, 'one', '2024-02-29 12:34:56.789', 0.1, 12.34, 1.25, 9000000000, true),"
    " (2, 'two', '1960-01-01 00:00:00.000001', 1e20, -0.5, 3.4028235e38, -1, false),"
    " (3, 'three', NULL, NULL, NULL, NULL, NULL, NULL), (16777217, 'big', '1970-01-01', 1e-7, 0.01, 1e-30, 1, true)",
    "UPDATE kz SET d = 1.5, r = 0.1 WHERE a = 1",
    "UPDATE kz SET b = 'uno' WHERE a = 1",
    "DELETE FROM kz WHERE a = 2",
]
TABLES = {"predicates": "tables", "predicates.tables.type": K + "predicates.TopicNameMatches",
          "predicates.tables.pattern": r"dbserver1\.public\..*"}

KEY_SCENARIOS: dict[str, dict[str, str]] = {
    "key_replace_exclude_renames_cast_float32": {
        "transforms": "fields,cast", "transforms.fields.type": K + "ReplaceField$Key",
        "transforms.fields.exclude": "b", "transforms.fields.renames": "a:key_a",
        "transforms.cast.type": K + "Cast$Key", "transforms.cast.spec": "key_a:float32"},
    "key_hoist_flatten_set_schema_metadata": {
        "transforms": "hoist,flat,meta", "transforms.hoist.type": K + "HoistField$Key",
        "transforms.hoist.field": "outer", "transforms.flat.type": K + "Flatten$Key",
        "transforms.flat.delimiter": "_", "transforms.meta.type": K + "SetSchemaMetadata$Key",
        "transforms.meta.schema.name": "com.example.Key", "transforms.meta.schema.version": "5"},
    "key_mask_hoist_extract_nested_cast_whole": {
        **TABLES, "transforms": "mask,hoist,extract,cast", "transforms.mask.type": K + "MaskField$Key",
        "transforms.mask.fields": "b", "transforms.mask.replacement": "hidden",
        "transforms.hoist.type": K + "HoistField$Key", "transforms.hoist.field": "outer",
        "transforms.extract.type": K + "ExtractField$Key", "transforms.extract.field": "outer.a",
        "transforms.extract.field.syntax.version": "V2", "transforms.cast.type": K + "Cast$Key",
        "transforms.cast.spec": "float32", "transforms.cast.predicate": "tables"},
    "key_timestamp_converter_from_value": {
        "transforms": "unwrap,tokey,tots,totext", **unwrap(),
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.tokey.type": K + "ValueToKey", "transforms.tokey.fields": "a,ts,d",
        "transforms.tots.type": K + "TimestampConverter$Key", "transforms.tots.field": "ts",
        "transforms.tots.target.type": "Timestamp", "transforms.tots.unix.precision": "microseconds",
        "transforms.totext.type": K + "TimestampConverter$Key", "transforms.totext.field": "ts",
        "transforms.totext.target.type": "string", "transforms.totext.format": "yyyy-MM-dd HH:mm:ss.SSS"},
    "cast_float32_values": {
        "transforms": "unwrap,tofloat,totext", **unwrap(),
        "transforms.tofloat.type": K + "Cast$Value",
        "transforms.tofloat.spec": "a:float32,d:float32,n:float32,big:float32,flag:float32,r:float64",
        "transforms.totext.type": K + "Cast$Value", "transforms.totext.spec": "d:string,a:string"},
}


@pytest.mark.parametrize("scenario", sorted(KEY_SCENARIOS))
def test_key_transforms_and_float32_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                   scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, KEY_SETUP, KEY_SCENARIOS[scenario], KEY_WORKLOAD, scenario)
    assert_same_records(scenario, ours, theirs)
