"""Single message transforms and predicates: the same connector configuration through Debezium 3.6 (its embedded
engine applies `transforms`/`predicates` like Kafka Connect) and through pgcdc, compared record by record: topic,
partition, key, value and headers."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink import Headers
from pgcdc.sink.file import FileSink
from tests.conformance.compare import compare, load
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import lines, run_workload, slot_active
from tests.harness import Running, make_config, wait_for

U = "io.debezium.transforms.ExtractNewRecordState"
K = "org.apache.kafka.connect.transforms."
P = K + "predicates."
DATA = Path(__file__).resolve().parents[1] / "data" / "transforms"

SETUP = ("CREATE TABLE t (id int PRIMARY KEY, v text, d double precision, n int);"
         "CREATE TABLE u (id int PRIMARY KEY, w text); ALTER TABLE t REPLICA IDENTITY FULL;"
         "CREATE TABLE m (id int PRIMARY KEY, b bool, s smallint, big bigint, r real, n numeric(5,0), dt date,"
         " ts timestamp, j jsonb, a int[])")
WORKLOAD = [
    "INSERT INTO t VALUES (1, 'one', 1.5, NULL), (2, 'two', 1e20, 7); INSERT INTO u VALUES (1, 'x')",
    "UPDATE t SET v = 'uno', d = 0.1 WHERE id = 1",
    "UPDATE t SET id = 3 WHERE id = 2",
    "DELETE FROM t WHERE id = 1; DELETE FROM u",
    "TRUNCATE u",
    "SELECT pg_logical_emit_message(true, 'note', 'hello')",
    "INSERT INTO m VALUES (1, true, 7, 9000000000, 1.25, 42, '2024-02-29', '2024-02-29 12:34:56.789', '{\"k\": 1}',"
    " '{1,2}'), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL); UPDATE m SET s = 8 WHERE id = 1",
]


def unwrap(alias: str = "unwrap", **opts: str) -> dict[str, str]:
    return {f"transforms.{alias}.type": U, **{f"transforms.{alias}.{k.replace('_', '.')}": v
                                               for k, v in opts.items()}}


SCENARIOS: dict[str, dict[str, str]] = {
    "unwrap_default": {"transforms": "unwrap", **unwrap(), "skipped.operations": "none"},
    "unwrap_rewrite_fields_headers": {
        "transforms": "unwrap", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.fields": "op,table,source.ts_ms,lsn:the_lsn,source.snapshot",
        "transforms.unwrap.add.headers": "op,source.lsn,db:database"},
    "unwrap_rewrite_with_tombstone_prefix": {
        "transforms": "unwrap", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode":
        "rewrite-with-tombstone", "transforms.unwrap.add.fields": "op,txId,total_order,transaction.id",
        "transforms.unwrap.add.fields.prefix": "meta_", "transforms.unwrap.add.headers": "op",
        "transforms.unwrap.add.headers.prefix": "h_", "provide.transaction.metadata": "true"},
    "unwrap_drop_route_by_field": {
        "transforms": "unwrap", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode": "drop",
        "transforms.unwrap.route.by.field": "v", "transforms.unwrap.predicate": "t",
        "predicates": "t", "predicates.t.type": P + "TopicNameMatches", "predicates.t.pattern": r".*\.t"},
    "unwrap_delete_to_tombstone_regexrouter": {
        "transforms": "unwrap,route", **unwrap(),
        "transforms.unwrap.delete.tombstone.handling.mode": "delete-to-tombstone",
        "transforms.route.type": K + "RegexRouter", "transforms.route.regex": r"dbserver1\.public\.(.*)",
        "transforms.route.replacement": "cdc_$1"},
    "unwrap_no_schemas": {"transforms": "unwrap", **unwrap(), "key.converter.schemas.enable": "false",
                          "value.converter.schemas.enable": "false"},
    "filter_headers_predicates": {
        "provide.transaction.metadata": "true",
        "predicates": "tx,tomb,ctx", "predicates.tx.type": P + "TopicNameMatches",
        "predicates.tx.pattern": r".*\.transaction", "predicates.tomb.type": P + "RecordIsTombstone",
        "predicates.ctx.type": P + "HasHeaderKey", "predicates.ctx.name": "__debezium.context.taskId",
        "transforms": "dropTx,mark,strip,flag",
        "transforms.dropTx.type": K + "Filter", "transforms.dropTx.predicate": "tx",
        "transforms.mark.type": K + "InsertHeader", "transforms.mark.header": "kind",
        "transforms.mark.value.literal": "change", "transforms.mark.predicate": "tomb",
        "transforms.mark.negate": "true",
        "transforms.strip.type": K + "DropHeaders", "transforms.strip.headers": "__debezium.context.taskId",
        "transforms.strip.predicate": "ctx",
        "transforms.flag.type": K + "InsertHeader", "transforms.flag.header": "n",
        "transforms.flag.value.literal": "42"},
    "extract_hoist_replace": {
        "transforms": "unwrap,key,rename,hoist", **unwrap(),
        "transforms.key.type": K + "ExtractField$Key", "transforms.key.field": "id",
        "predicates": "tables", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r"dbserver1\.public\..*", "transforms.key.predicate": "tables",
        "transforms.rename.type": K + "ReplaceField$Value", "transforms.rename.renames": "v:text",
        "transforms.rename.exclude": "d",
        "transforms.hoist.type": K + "HoistField$Value", "transforms.hoist.field": "row"},
    "insert_mask_value_to_key": {
        "predicates": "tables", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r"dbserver1\.public\..*",
        "transforms": "unwrap,insert,mask,key", **unwrap(),
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.insert.type": K + "InsertField$Value", "transforms.insert.topic.field": "topic",
        "transforms.insert.static.field": "origin!", "transforms.insert.static.value": "pg",
        "transforms.insert.partition.field": "part", "transforms.insert.timestamp.field": "ts_inserted",
        "transforms.mask.type": K + "MaskField$Value", "transforms.mask.fields": "v,d,w",
        "transforms.key.type": K + "ValueToKey", "transforms.key.fields": "id,__deleted",
        "transforms.key.predicate": "tables"},
    "logical_table_router": {
        "provide.transaction.metadata": "true",
        "transforms": "logical", "transforms.logical.type": "io.debezium.transforms.ByLogicalTableRouter",
        "transforms.logical.topic.regex": r"dbserver1\.(public)\.(t|u)",
        "transforms.logical.topic.replacement": "dbserver1.$1.all_tables"},
    "logical_table_router_key_regex": {
        "transforms": "unwrap,logical", **unwrap(), "transforms.logical.type":
        "io.debezium.transforms.ByLogicalTableRouter", "transforms.logical.topic.regex": r"(.*)\.public\.(.*)",
        "transforms.logical.topic.replacement": "$1.merged", "transforms.logical.key.field.regex": r".*\.(.*)",
        "transforms.logical.key.field.replacement": "table_$1", "transforms.logical.key.field.name": "src"},
    "mask_every_type_insert_key": {
        "predicates": "m", "predicates.m.type": P + "TopicNameMatches", "predicates.m.pattern": r".*\.m",
        "transforms": "unwrap,mask,ikey", **unwrap(), "transforms.mask.type": K + "MaskField$Value",
        "transforms.mask.fields": "b,s,big,r,n,dt,ts,j,a", "transforms.mask.predicate": "m",
        "transforms.ikey.type": K + "InsertField$Key", "transforms.ikey.static.field": "origin",
        "transforms.ikey.static.value": "pg", "transforms.ikey.topic.field": "topic!"},
    # Kafka Connect parses a FLOAT32 replacement with Float.parseFloat and writes it with Float.toString.
    "mask_real_replacement": {
        "predicates": "m", "predicates.m.type": P + "TopicNameMatches", "predicates.m.pattern": r".*\.m",
        "transforms": "unwrap,mask", **unwrap(), "transforms.mask.type": K + "MaskField$Value",
        "transforms.mask.fields": "r", "transforms.mask.replacement": "16777217.5", "transforms.mask.predicate": "m"},
    "replace_include_exclude_key": {
        "transforms": "unwrap,keyfields,valuefields", **unwrap(),
        "transforms.keyfields.type": K + "ReplaceField$Key", "transforms.keyfields.renames": "id:key_id",
        "transforms.keyfields.include": "id",
        "transforms.valuefields.type": K + "ReplaceField$Value", "transforms.valuefields.exclude": "d,w",
        "transforms.valuefields.renames": "id:row_id,v:value"},
    "hoist_key_extract_value_envelope": {
        "transforms": "hoist,after", "transforms.hoist.type": K + "HoistField$Key",
        "transforms.hoist.field": "k", "transforms.after.type": K + "ExtractField$Value",
        "transforms.after.field": "after", "transforms.after.predicate": "tables",
        "predicates": "tables", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r"dbserver1\.public\..*"},
    "header_key_negate": {
        "predicates": "newkey", "predicates.newkey.type": P + "HasHeaderKey",
        "predicates.newkey.name": "__debezium.newkey",
        "transforms": "drop", "transforms.drop.type": K + "Filter", "transforms.drop.predicate": "newkey",
        "transforms.drop.negate": "true"},
    "set_schema_metadata": {
        "transforms": "unwrap,names,keyver", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode":
        "tombstone", "transforms.names.type": K + "SetSchemaMetadata$Value",
        "transforms.names.schema.name": "com.example.Row", "transforms.names.schema.version": "3",
        "transforms.keyver.type": K + "SetSchemaMetadata$Key", "transforms.keyver.schema.version": "2"},
    "mask_replacement_envelope": {
        "transforms": "mask", "transforms.mask.type": K + "MaskField$Key", "transforms.mask.fields": "id",
        "transforms.mask.replacement": "-1", "predicates": "tables",
        "predicates.tables.type": P + "TopicNameMatches", "predicates.tables.pattern": r"dbserver1\.public\..*",
        "transforms.mask.predicate": "tables"},
    "partition_routing_change_source": {
        "transforms": "part", "transforms.part.type": "io.debezium.transforms.partitions.PartitionRouting",
        "transforms.part.partition.payload.fields": "change.id, source.table,change.v,change.d",
        "transforms.part.partition.topic.num": "5"},
    "partition_routing_every_type": {
        "predicates": "m", "predicates.m.type": P + "TopicNameMatches", "predicates.m.pattern": r".*\.m",
        "transforms": "part", "transforms.part.type": "io.debezium.transforms.partitions.PartitionRouting",
        "transforms.part.predicate": "m", "transforms.part.partition.hash.function": "java",
        "transforms.part.partition.payload.fields": "change.b,change.s,change.big,change.r,change.n,change.dt,"
                                                    "change.ts,change.j,change.nosuch",
        "transforms.part.partition.topic.num": "7"},
    "header_to_value_copy_root": {
        "transforms": "unwrap,h2v", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.headers": "op,lsn", "transforms.h2v.type": "io.debezium.transforms.HeaderToValue",
        "transforms.h2v.headers": "__op,__lsn", "transforms.h2v.fields": "op,lsn_copy",
        "transforms.h2v.operation": "copy"},
    # Nested under `source` (never null): a nested destination's parent becomes a required struct, which
    # Debezium then fails to write where it is null (an `after.x` destination fails every delete).
    "header_to_value_move_nested": {
        "predicates": "tomb", "predicates.tomb.type": P + "RecordIsTombstone",
        "transforms": "notomb,kind,h2v", "transforms.notomb.type": K + "Filter", "transforms.notomb.predicate": "tomb",
        "transforms.kind.type": K + "InsertHeader", "transforms.kind.header": "kind",
        "transforms.kind.value.literal": "change", "transforms.h2v.type": "io.debezium.transforms.HeaderToValue",
        "transforms.h2v.headers": "kind,__debezium.context.taskId", "transforms.h2v.fields": "kind,source.zq",
        "transforms.h2v.operation": "move"},
    "flatten_envelope_and_key": {
        "provide.transaction.metadata": "true", "transforms": "flat,flatkey",
        "transforms.flat.type": K + "Flatten$Value", "transforms.flat.delimiter": "__",
        "transforms.flatkey.type": K + "Flatten$Key"},
    "header_from_move_value_copy_key": {
        "predicates": "tomb,tables", "predicates.tomb.type": P + "RecordIsTombstone",
        "transforms": "notomb,unwrap,hv,hk", "transforms.notomb.type": K + "Filter",
        "transforms.notomb.predicate": "tomb", **unwrap(),
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.hv.type": K + "HeaderFrom$Value", "transforms.hv.fields": "__deleted,id",
        "transforms.hv.headers": "deleted,row_id", "transforms.hv.operation": "move",
        "transforms.hv.predicate": "tables", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r"dbserver1\.public\..*",
        "transforms.hk.type": K + "HeaderFrom$Key", "transforms.hk.fields": "id", "transforms.hk.headers": "key_id",
        "transforms.hk.operation": "copy", "transforms.hk.predicate": "tables"},
    "timestamp_converter_fields": {
        "predicates": "m", "predicates.m.type": P + "TopicNameMatches", "predicates.m.pattern": r".*\.m",
        "transforms": "unwrap,tstime,tstext,bigdate", **unwrap(),
        "transforms.tstime.type": K + "TimestampConverter$Value", "transforms.tstime.predicate": "m",
        "transforms.tstime.field": "ts", "transforms.tstime.target.type": "unix",
        "transforms.tstime.unix.precision": "microseconds",
        "transforms.tstext.type": K + "TimestampConverter$Value", "transforms.tstext.predicate": "m",
        "transforms.tstext.field": "ts", "transforms.tstext.target.type": "string",
        "transforms.tstext.unix.precision": "microseconds",
        "transforms.tstext.format": "yyyy-MM-dd'T'HH:mm:ss.SSS",
        "transforms.bigdate.type": K + "TimestampConverter$Value", "transforms.bigdate.predicate": "m",
        "transforms.bigdate.field": "big", "transforms.bigdate.target.type": "Date"},
    "cast_fields_and_key": {
        "predicates": "tables", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r"dbserver1\.public\..*",
        "transforms": "unwrap,castv,castk", **unwrap(),
        "transforms.castv.type": K + "Cast$Value", "transforms.castv.predicate": "tables",
        "transforms.castv.spec": "d:string,n:int8,b:int32,s:boolean,big:int16,r:string,ts:string,dt:float64,id:int64",
        "transforms.castk.type": K + "Cast$Key", "transforms.castk.spec": "id:string",
        "transforms.castk.predicate": "tables"},
    # Kafka Connect's ConfigDef trims a setting's text before parsing it (a STRING, a CLASS, a LIST and its
    # elements, a number, a boolean): the same settings with spaces around them.
    "settings_with_spaces_kafka_connect": {
        "predicates": " m , tables ", "predicates.m.type": P + "TopicNameMatches",
        "predicates.m.pattern": r" .*\.m ", "predicates.tables.type": P + "TopicNameMatches",
        "predicates.tables.pattern": r" dbserver1\.public\.. ",
        "transforms": " unwrap , fields , tstext , mask , route , hdr ", **unwrap(),
        "transforms.fields.type": K + "ReplaceField$Value", "transforms.fields.predicate": "tables",
        "transforms.fields.exclude": " d , w ", "transforms.fields.renames": " v:text ,n:num ",
        "transforms.tstext.type": K + "TimestampConverter$Value", "transforms.tstext.predicate": "m",
        "transforms.tstext.field": " ts ", "transforms.tstext.target.type": " string ",
        "transforms.tstext.format": " yyyy-MM-dd ", "transforms.tstext.negate": " false ",
        "transforms.mask.type": K + "MaskField$Value", "transforms.mask.predicate": "m",
        "transforms.mask.fields": " s , big ", "transforms.mask.replacement": " 7 ",
        "transforms.route.type": K + "RegexRouter", "transforms.route.regex": r" dbserver1\.public\.(.*) ",
        "transforms.route.replacement": " cdc_$1 ",
        "transforms.hdr.type": K + "InsertHeader", "transforms.hdr.header": " h ",
        "transforms.hdr.value.literal": " v "},
    "settings_with_spaces_debezium": {
        "transforms": "unwrap", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode": " rewrite ",
        "transforms.unwrap.add.fields": " op , table ", "transforms.unwrap.add.headers": " op ",
        "transforms.unwrap.add.fields.prefix": " m_ "},
}


class RawSink:
    """Records the untransformed records as the bytes pgcdc produced (key, value and headers as JSON text), the
    input the unit tests replay through the same chain (tests/unit/test_transforms_recorded.py)."""

    def __init__(self, path: Path) -> None:
        self.out = open(path, "w")

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        text = (lambda b: None if b is None else b.decode())  # noqa: E731
        self.out.write(json.dumps({"topic": topic, "partition": partition, "key": text(key), "value": text(value),
                                   "headers": [[n, v.decode()] for n, v in headers or ()]}) + "\n")

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        self.out.close()


def run_recorded(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                 workload: list[str], label: str, snapshot: bool = False
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """tests.conformance.test_debezium_streaming.run_both, plus (with PGCDC_RECORD_TRANSFORMS=1) a second pgcdc
    without transforms on its own slot, reading the same WAL: its records are the chain's recorded input."""
    record = bool(os.environ.get("PGCDC_RECORD_TRANSFORMS")) and "key.converter.schemas.enable" not in props
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial" if snapshot else "no_data", **props}
    oracle = start_oracle({"name": "oracle", "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{**common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                            "publication.name": f"pgcdcpub_{dbname}"})
        with contextlib.ExitStack() as stack:
            stack.enter_context(Running(config, sink=FileSink(str(ours_path))))
            if record:
                raw = {k: v for k, v in common.items()
                       if not k.startswith(("transforms", "predicates", "errors."))}
                stack.enter_context(Running(make_config(pg, dbname, **{
                    **raw, "name": "raw", "slot.name": f"raw_{dbname}", "publication.name": f"pgcdcpub_{dbname}"}),
                    sink=RawSink(tmp_path / "input.jsonl")))
            run_workload(pg, dbname, workload, lambda: lines(theirs_path), lambda: lines(ours_path))
    finally:
        stop_oracle(oracle, theirs_path)
    if record:
        DATA.mkdir(parents=True, exist_ok=True)
        (DATA / f"{label}.input.jsonl").write_text((tmp_path / "input.jsonl").read_text())
        (DATA / f"{label}.debezium.jsonl").write_text(theirs_path.read_text())
        (DATA / f"{label}.props.json").write_text(json.dumps(props, indent=1) + "\n")
    return load(ours_path), load(theirs_path)


def _mask_nested_times(value: Any) -> None:
    """A record's processing time (ts_ms/ts_us/ts_ns beside `op`) wherever a transform moved the envelope."""
    if isinstance(value, dict):
        if "op" in value:
            for k in ("ts_ms", "ts_us", "ts_ns"):
                if k in value:
                    value[k] = "<masked>"
        for v in value.values():
            _mask_nested_times(v)


def assert_same_records(label: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
                        snapshot: bool = False) -> None:
    for r in (*ours, *theirs):
        _mask_nested_times(r.get("value"))
    problems = compare(ours, theirs, snapshot_fields=("ts_ms", "ts_us", "ts_ns", "lsn", "sequence", "txId")
                       if snapshot else ())
    problems += [f"record {i}: partition {a.get('partition')!r} != {b.get('partition')!r}"
                 for i, (a, b) in enumerate(zip(ours, theirs)) if a.get("partition") != b.get("partition")]
    print(f"{label}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_transforms_streaming_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                             scenario: str) -> None:
    props = SCENARIOS[scenario]
    # Debezium writes BEGIN/END for a transaction whose only change is a skipped truncate; pgcdc does not (an
    # envelope difference outside the transforms): those scenarios leave the truncate out.
    workload = [w for w in WORKLOAD if not (w.startswith("TRUNCATE") and "provide.transaction.metadata" in props)]
    ours, theirs = run_recorded(pg, dbname, tmp_path, SETUP, props, workload, scenario)
    assert_same_records(scenario, ours, theirs)


def test_transforms_snapshot_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    setup = SETUP + ";INSERT INTO t VALUES (10, 'ten', 2.5, NULL), (11, NULL, NULL, 1); INSERT INTO u VALUES (5, 'y')"
    props = {"transforms": "unwrap,route", **unwrap(), "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
             "transforms.unwrap.add.fields": "op,table", "transforms.unwrap.add.headers": "op",
             "transforms.route.type": K + "RegexRouter", "transforms.route.regex": r"(.*)\.public\.(.*)",
             "transforms.route.replacement": "$2-from-$1"}
    ours, theirs = run_recorded(pg, dbname, tmp_path, setup, props, ["INSERT INTO u VALUES (6, 'z')"],
                                "snapshot_unwrap_rewrite_route", snapshot=True)
    assert_same_records("snapshot_unwrap_rewrite_route", ours, theirs, snapshot=True)


# The outbox pattern: an application inserts an event row and deletes it in the same transaction.
OUTBOX = "io.debezium.transforms.outbox.EventRouter"
OUTBOX_SETUP = ("CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL, aggregateid"
                " varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb, part int, ver int,"
                " occurred timestamp, tenant text)")


def _event(n: int, kind: str, key: str, type_: str, payload: str | None, part: int, ver: int,
           tenant: str | None) -> str:
    p = "NULL" if payload is None else "'" + payload.replace("'", "''") + "'"
    t = "NULL" if tenant is None else f"'{tenant}'"
    return (f"('00000000-0000-0000-0000-00000000000{n}', '{kind}', '{key}', '{type_}', {p}, {part}, {ver},"
            f" '2024-02-29 12:34:56.{n}89012', {t})")


OUTBOX_WORKLOAD = [
    "BEGIN; INSERT INTO outbox VALUES " + _event(
        1, "Order", "o-1", "OrderCreated", '{"id": 1, "lines": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1,'
        ' "gift": true}], "total": 12.5, "note": null, "tags": ["x", "y"], "meta": {"deep": {"k": true, "n": null}},'
        ' "empty": [], "big": 9000000000}', 1, 1, "acme") + "; DELETE FROM outbox; COMMIT",
    "INSERT INTO outbox VALUES " + _event(2, "Customer", "c-1", "CustomerDeleted", None, 0, 2, None),
    "INSERT INTO outbox VALUES " + ", ".join([
        _event(3, "Order", "o-2", "OrderNoted", '"a plain string"', 2, 1, "acme"),
        _event(4, "Order", "o-3", "OrderLines", "{\"arr\": [1, 2, 3], \"mixed\": [1, 2.5]}", 0, 1, ""),
        _event(5, "Order", "o-4", "Mixed", '[1, "a"]', 1, 3, "acme"),
        _event(6, "Customer", "c-2", "CustomerCreated", '{"my-field": 1, "2x": 2.0, "a b": [[1, 2], [3]],'
               ' "objs": [[{"q": 1, "r": {"s": "t"}}]], "f": 1.5e-7, "neg": -0.001}', 2, 2, "initech")]),
    "UPDATE outbox SET type = 'Changed' WHERE id = '00000000-0000-0000-0000-000000000002'",
    "DELETE FROM outbox",
]


def outbox(**opts: str) -> dict[str, str]:
    return {"table.include.list": "public.outbox", "transforms": "outbox", "transforms.outbox.type": OUTBOX,
            **{f"transforms.outbox.{k.replace('_', '.')}": v for k, v in opts.items()}}


OUTBOX_SCENARIOS: dict[str, dict[str, str]] = {
    "outbox_default": outbox(),
    "outbox_expand_envelope_partition": {
        **outbox(table_op_invalid_behavior="error", route_tombstone_on_empty_payload="true"),
        "transforms.outbox.table.expand.json.payload": "true",
        "transforms.outbox.table.fields.additional.placement": "type:envelope:eventType,tenant:header,"
                                                               "part:partition,aggregatetype:envelope"},
    "outbox_expand_null_bytes_avro_version": {
        **outbox(), "transforms.outbox.table.expand.json.payload": "true",
        "transforms.outbox.table.json.payload.null.behavior": "optional_bytes",
        "transforms.outbox.field.name.adjustment.mode": "avro",
        "transforms.outbox.route.by.field": "type", "transforms.outbox.route.topic.regex": "(.*)(Created|Deleted)",
        "transforms.outbox.route.topic.replacement": "$2.$1", "transforms.outbox.table.field.event.key": "tenant",
        "transforms.outbox.table.field.event.timestamp": "occurred",
        "transforms.outbox.table.fields.additional.placement": "id:envelope:eventId,payload:header:raw"},
    "outbox_renamed_columns": {
        **outbox(), "transforms.outbox.table.field.event.payload": "tenant",
        "transforms.outbox.table.field.event.id": "aggregateid", "transforms.outbox.route.by.field": "aggregateid",
        "transforms.outbox.table.field.event.key": "type", "transforms.outbox.route.tombstone.on.empty.payload":
        "true", "transforms.outbox.table.field.event.schema.version": "ver",
        "transforms.outbox.table.fields.additional.placement": "payload:header:body,ver:header,type:envelope"},
    # Debezium's change events have no record timestamp (TimestampRouter fails on them); the outbox router's do.
    "outbox_timestamp_router": {
        **outbox(table_field_event_timestamp="occurred"), "transforms": "outbox,time",
        "transforms.time.type": K + "TimestampRouter", "transforms.time.topic.format": "${topic}_${timestamp}",
        "transforms.time.timestamp.format": "yyyy-MM-dd'T'HH.mm.ss.SSS EEE MMM ''yy"},
}


@pytest.mark.parametrize("scenario", sorted(OUTBOX_SCENARIOS))
def test_outbox_event_router_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                              scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, OUTBOX_SETUP, OUTBOX_SCENARIOS[scenario], OUTBOX_WORKLOAD,
                                scenario)
    assert_same_records(scenario, ours, theirs)


CHANGED_SETUP = ("CREATE TABLE c (id int PRIMARY KEY, v text, b bytea, n numeric(5,2), a int[], d double precision,"
                 " w text); ALTER TABLE c REPLICA IDENTITY FULL;"
                 " CREATE TABLE k (id int PRIMARY KEY, v text)")
CHANGED_WORKLOAD = [
    "INSERT INTO c VALUES (1, 'one', '\\x0102', 1.50, '{1,2}', 0.1, NULL), (2, NULL, NULL, NULL, NULL, NULL, 'x');"
    " INSERT INTO k VALUES (1, 'k')",
    "UPDATE c SET v = 'uno', a = '{1,3}' WHERE id = 1",
    "UPDATE c SET v = v WHERE id = 1",
    "UPDATE c SET b = NULL, n = 2.5, w = 'set' WHERE id = 1",
    "UPDATE c SET d = 1e20, w = NULL WHERE id = 2; UPDATE k SET v = 'kk'",
    "UPDATE c SET id = 3 WHERE id = 2",
    "DELETE FROM c WHERE id = 1",
]
CHANGED = "io.debezium.transforms.ExtractChangedRecordState"
CHANGED_SCENARIOS: dict[str, dict[str, str]] = {
    "changed_state_both_headers": {
        "transforms": "changes", "transforms.changes.type": CHANGED,
        "transforms.changes.header.changed.name": "Changed", "transforms.changes.header.unchanged.name": "Same"},
    "changed_state_then_unwrap_no_schemas": {
        "transforms": "changes,unwrap", "transforms.changes.type": CHANGED,
        "transforms.changes.header.changed.name": "changed", "transforms.changes.header.unchanged.name": " ",
        **unwrap(), "key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"},
    # ExtractChangedRecordState's list of unchanged fields read by ExtractNewRecordState's drop.fields.* options.
    "changed_then_unwrap_drops_unchanged": {
        "transforms": "changes,unwrap", "transforms.changes.type": CHANGED,
        "transforms.changes.header.unchanged.name": "Unchanged",
        **unwrap(drop_fields_header_name="Unchanged")},
    "changed_then_unwrap_drops_unchanged_from_key_incompatible": {
        "transforms": "changes,unwrap", "transforms.changes.type": CHANGED,
        "transforms.changes.header.unchanged.name": "Unchanged", "transforms.changes.header.changed.name": "Changed",
        **unwrap(drop_fields_header_name="Unchanged", drop_fields_from_key="true",
                 drop_fields_keep_schema_compatible="false")},
}


@pytest.mark.parametrize("scenario", sorted(CHANGED_SCENARIOS))
def test_extract_changed_record_state_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                       scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, CHANGED_SETUP, CHANGED_SCENARIOS[scenario], CHANGED_WORKLOAD,
                                scenario)
    assert_same_records(scenario, ours, theirs)


# TimestampConverter parsing strings as SimpleDateFormat.parse (lenient) does: one converter per column, each
# with its own pattern; every value parses (a value that does not fails the record in both).
PARSE_SETUP = "CREATE TABLE p (id int PRIMARY KEY, a text, b text, c text, d text, e text)"
PARSE_ROWS = [
    ("2024-02-29", "2024-02-29T12:34:56.789+02:00", "29/02/24 12:30 AM", "Feb 29, 2024 12:00:00 GMT",
     "20240229123456"),
    ("2024-02-30", "2024-02-29T23:59:59.999Z", "01/01/99 11:59 pm", "February 1, 2024 23:00:00 GMT-01:30",
     "19691231235959"),
    ("1500-03-01", "1969-12-31T23:59:59.999-05:30", "31/12/24 12:00 PM", "feb 29, 2024 00:00:00 UTC",
     "20241301000000"),
    ("2024-13-01", "2024-02-29T24:00:00.000Z", "05/06/07 01:02 am", "DEC 31, 1999 23:59:59 GMT+05:00",
     "00010101000000"),
    ("  2024-1-5", "2024-02-29T12:34:56.5+00:00", "1/2/03 3:04 PM", "Mar 1, 1500 00:00:00 GMT", "99991231235959"),
    ("2024-02-29trailing", "2024-02-29T12:61:61.1000Z", "29/02/24 12:30 AMx", "Jan 1, 1970 00:00:00 UTC",
     "20240229000000x"),
    ("0001-01-01", "0001-01-01T00:00:00.000Z", "31/12/69 11:59 PM", "Jan 1, 1 00:00:00 GMT", "15821015000000"),
    ("9999-12-31", "1582-10-04T23:59:59.999Z", "15/10/82 12:00 AM", "Oct 15, 1582 00:00:00 GMT",
     "15821004235959"),
]
PARSE_WORKLOAD = [
    "INSERT INTO p VALUES " + ", ".join(f"({i}, " + ", ".join(f"'{v}'" for v in row) + ")"
                                        for i, row in enumerate(PARSE_ROWS)),
    "INSERT INTO p VALUES (100, NULL, NULL, NULL, NULL, NULL)",
    "UPDATE p SET a = '2025-01-01' WHERE id = 0",
]
PARSE_SCENARIOS: dict[str, dict[str, str]] = {
    "timestamp_converter_parses_strings": {
        "transforms": "unwrap,ta,tb,tc,td,te", **unwrap(),
        "transforms.ta.type": K + "TimestampConverter$Value", "transforms.ta.field": "a",
        "transforms.ta.format": "yyyy-MM-dd", "transforms.ta.target.type": "unix",
        "transforms.tb.type": K + "TimestampConverter$Value", "transforms.tb.field": "b",
        "transforms.tb.format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "transforms.tb.target.type": "Timestamp",
        "transforms.tc.type": K + "TimestampConverter$Value", "transforms.tc.field": "c",
        "transforms.tc.format": "dd/MM/yy hh:mm a", "transforms.tc.target.type": "string",
        "transforms.td.type": K + "TimestampConverter$Value", "transforms.td.field": "d",
        "transforms.td.format": "MMM d, yyyy HH:mm:ss z", "transforms.td.target.type": "Date",
        "transforms.te.type": K + "TimestampConverter$Value", "transforms.te.field": "e",
        "transforms.te.format": "yyyyMMddHHmmss", "transforms.te.target.type": "unix",
        "transforms.te.unix.precision": "seconds"},
}


@pytest.mark.parametrize("scenario", sorted(PARSE_SCENARIOS))
def test_timestamp_converter_parsing_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                      scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, PARSE_SETUP, PARSE_SCENARIOS[scenario], PARSE_WORKLOAD,
                                scenario)
    assert_same_records(scenario, ours, theirs)


TZ_SETUP = ("CREATE TABLE z (id int PRIMARY KEY, ts timestamp, tsz timestamptz, tm3 timestamp(3), tz timetz,"
            " d date); ALTER TABLE z REPLICA IDENTITY FULL; CREATE TABLE y (id int PRIMARY KEY, ts timestamp)")
TZ_WORKLOAD = [
    "INSERT INTO z VALUES (1, '2024-03-10 06:59:59.5', '2024-03-10 06:59:59.123456+00', '2024-03-10 07:00:00',"
    " '10:11:12.5+02', '2024-03-10'), (2, '1960-01-01 00:00:00.000001', '2024-11-03 05:30:00+00',"
    " '2024-11-03 06:30:00.25', '23:59:59Z', '1960-01-01'), (3, NULL, NULL, NULL, NULL, NULL)",
    "UPDATE z SET ts = '2024-07-01 12:00:00', tsz = '2024-07-01 12:00:00+00' WHERE id = 1",
    "DELETE FROM z WHERE id = 2; INSERT INTO y VALUES (1, '2024-03-10 06:59:59.5')",
]
TZ = "io.debezium.transforms.TimezoneConverter"
TZ_SCENARIOS: dict[str, dict[str, str]] = {
    "timezone_new_york": {"transforms": "tz", "transforms.tz.type": TZ,
                          "transforms.tz.converted.timezone": "America/New_York"},
    "timezone_fixed_offset_then_unwrap": {"transforms": "tz,unwrap", "transforms.tz.type": TZ,
                                          "transforms.tz.converted.timezone": "+05:30", **unwrap()},
    "timezone_include_list": {"transforms": "tz", "transforms.tz.type": TZ,
                              "transforms.tz.converted.timezone": "Europe/Berlin",
                              "transforms.tz.include.list": "source:z:after.ts,z:tsz,topic:dbserver1.public.y"},
    "timezone_exclude_list": {"transforms": "tz", "transforms.tz.type": TZ,
                              "transforms.tz.converted.timezone": "Asia/Kolkata",
                              "transforms.tz.exclude.list": "topic:dbserver1.public.z:before.tsz,source:y"},
}


@pytest.mark.parametrize("scenario", sorted(TZ_SCENARIOS))
def test_timezone_converter_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                             scenario: str) -> None:
    ours, theirs = run_recorded(pg, dbname, tmp_path, TZ_SETUP, TZ_SCENARIOS[scenario], TZ_WORKLOAD, scenario)
    assert_same_records(scenario, ours, theirs)


def test_outbox_snapshot_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    # Rows already in the outbox when the connector starts are read (op "r") and routed like inserts.
    setup = OUTBOX_SETUP + ";INSERT INTO outbox VALUES " + ", ".join([
        _event(7, "Order", "o-7", "OrderCreated", '{"id": 7, "lines": [{"sku": "z", "qty": 1}]}', 1, 1, "acme"),
        _event(8, "Customer", "c-8", "CustomerCreated", None, 0, 1, None)])
    props = {**outbox(table_expand_json_payload="true"),
             "transforms.outbox.table.fields.additional.placement": "type:header,part:partition"}
    ours, theirs = run_recorded(pg, dbname, tmp_path, setup, props, OUTBOX_WORKLOAD[1:2], "snapshot_outbox",
                                snapshot=True)
    assert_same_records("snapshot_outbox", ours, theirs, snapshot=True)
