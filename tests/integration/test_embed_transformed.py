"""The embedding API's Event view on transformed and converted records, against a real PostgreSQL (and, for Avro,
a real schema registry): what each attribute says after ExtractNewRecordState, RegexRouter, the outbox
EventRouter and Filter; commits and offsets when a transform drops records; Avro and ByteArray records viewed
with the same typed values as the JSON path."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.embed import Engine, Event
from pgcdc.local import ApicurioRegistry, PostgresCluster
from pgcdc.lsn import parse_lsn
from tests.harness import wait_for, wal_end
from tests.integration.test_embed import props, take

K = "org.apache.kafka.connect.transforms."
P = K + "predicates."
AVRO = "io.confluent.connect.avro.AvroConverter"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
TABLE = ("CREATE TABLE t (id int PRIMARY KEY, amount numeric(10,3), at timestamp, atz timestamptz, d date, u uuid,"
         " b bytea, tags text[], j jsonb, f double precision)")


def collect(engine: Engine, done: Any, timeout: float = 60) -> list[Event]:
    """Events until `done(events)` holds."""
    got: list[Event] = []
    deadline = time.monotonic() + timeout
    while not done(got):
        assert time.monotonic() < deadline, f"gave up after {got}"
        event = engine.poll(0.5)
        if event is not None:
            got.append(event)
    return got


def confirmed(pg: PostgresCluster, slot: str) -> int:
    rows = pg.execute(f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '{slot}'")
    return parse_lsn(rows[0][0])


def test_flattened_routed_outbox_and_filtered_records(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(TABLE + "; ALTER TABLE t REPLICA IDENTITY FULL; CREATE TABLE skip (id int PRIMARY KEY);"
               " CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype text NOT NULL, aggregateid text NOT NULL,"
               " type text NOT NULL, payload jsonb)", dbname)
    chain = {
        "provide.transaction.metadata": "true",
        "predicates": "skipped,outbox", "predicates.skipped.type": P + "TopicNameMatches",
        "predicates.skipped.pattern": r"app\.public\.skip", "predicates.outbox.type": P + "TopicNameMatches",
        "predicates.outbox.pattern": r"app\.public\.outbox",
        "transforms": "drop,outbox,unwrap,route",
        "transforms.drop.type": K + "Filter", "transforms.drop.predicate": "skipped",
        "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
        "transforms.outbox.predicate": "outbox", "transforms.outbox.table.expand.json.payload": "true",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.predicate": "outbox", "transforms.unwrap.negate": "true",
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite", "transforms.unwrap.add.fields": "op",
        "transforms.route.type": K + "RegexRouter", "transforms.route.regex": r"app\.(.*)",
        "transforms.route.replacement": "renamed.$1"}
    u = uuid.uuid4()
    with Engine(props(pg, dbname, **chain)) as engine:
        pg.execute(f"INSERT INTO t VALUES (1, 12.345, '2024-02-29 13:14:15.123456', '2024-01-01 00:00:00+02',"
                   f" '1999-12-31', '{u}', '\\x00ff', ARRAY['a','b'], '{{\"k\": 1}}', 1.5)", dbname)
        pg.execute("INSERT INTO skip VALUES (1); UPDATE t SET amount = -0.5 WHERE id = 1", dbname)
        pg.execute(f"INSERT INTO outbox VALUES ('{uuid.uuid4()}', 'order', '7', 'created',"
                   " '{\"n\": 1, \"what\": \"x\"}'); DELETE FROM outbox", dbname)
        pg.execute("DELETE FROM t WHERE id = 1", dbname)
        events = collect(engine, lambda got: sum(e.kind == "transaction" for e in got) == 8)
    changes = [e for e in events if e.kind == "change"]
    # What was captured: the operation and the table, whatever the transforms made of the record.
    assert [(e.topic, e.op, e.table) for e in changes] == [
        ("renamed.public.t", "c", "t"), ("renamed.public.t", "u", "t"), ("outbox.event.order", "c", "outbox"),
        ("renamed.public.t", "d", "t")]
    c, upd, ob, d = changes
    row = {"id": 1, "amount": Decimal("12.345"), "at": dt.datetime(2024, 2, 29, 13, 14, 15, 123456),
           "atz": dt.datetime(2023, 12, 31, 22, 0, tzinfo=dt.UTC), "d": dt.date(1999, 12, 31), "u": u,
           "b": b"\x00\xff", "tags": ["a", "b"], "j": '{"k": 1}', "f": 1.5}
    # A flattened row stands where the envelope had it, with the fields the transform added.
    assert c.after == {**row, "__op": "c", "__deleted": "false"} and c.before is None
    assert upd.after == {**row, "amount": Decimal("-0.500"), "__op": "u", "__deleted": "false"}
    assert upd.before is None
    assert d.before == {**row, "amount": Decimal("-0.500"), "__op": "d", "__deleted": "true"} and d.after is None
    assert c.data == c.after and c.payload["__op"] == "c" and c.value_json["schema"]["type"] == "struct"
    assert c.key_values == d.key_values == {"id": 1}
    assert c.lsn < upd.lsn < ob.lsn < d.lsn and c.source["db"] == dbname
    # The outbox event: its expanded payload, keyed by the aggregate id; captured as an insert into outbox.
    assert ob.after == ob.data == {"n": 1, "what": "x"} and ob.before is None and ob.key_data == "7"
    # Transaction metadata renamed by the router is still transaction metadata; nothing of `skip` arrived.
    tx = [e for e in events if e.kind == "transaction"]
    assert {e.topic for e in tx} == {"renamed.transaction"} and all(e.op is None for e in tx)
    assert [e.kind for e in events if e.kind not in ("change", "transaction")] == []
    assert all(e.table != "skip" for e in events)


def test_commits_and_offsets_when_a_transform_drops_records(pg: PostgresCluster, dbname: str,
                                                            tmp_path: Path) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE skip (id int PRIMARY KEY)", dbname)
    cfg = props(pg, dbname, **{
        "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat"),
        "predicates": "skipped", "predicates.skipped.type": P + "TopicNameMatches",
        "predicates.skipped.pattern": r".*\.skip", "transforms": "drop", "transforms.drop.type": K + "Filter",
        "transforms.drop.predicate": "skipped"})
    with Engine(cfg) as engine:
        pg.execute("INSERT INTO skip VALUES (1)", dbname)
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        first = take(engine, 1)[0]
        assert (first.table, first.after) == ("t", {"id": 1})
        first.commit()
        # A transaction whose every record is dropped is confirmed without an event to commit.
        before = wal_end(pg)
        pg.execute("INSERT INTO skip VALUES (2)", dbname)
        wait_for(lambda: confirmed(pg, f"s_{dbname}") > before, 30, "the dropped transaction confirmed")
        assert engine.poll(0.5) is None
        # Half dropped, half delivered and not committed: it comes again (its dropped part dropped again).
        pg.execute("INSERT INTO skip VALUES (3); INSERT INTO t VALUES (2)", dbname)
        assert [e.after for e in take(engine, 1)] == [{"id": 2}]
    with Engine(cfg) as engine:
        again = take(engine, 1)
        assert [(e.table, e.after) for e in again] == [("t", {"id": 2})]
        again[0].commit()
        assert engine.poll(1.0) is None
    with Engine(cfg) as engine:
        assert engine.poll(1.0) is None


def _view(e: Event) -> tuple[Any, ...]:
    payload = e.payload
    if isinstance(payload, dict):  # processing time, not part of the change
        payload = {k: v for k, v in payload.items() if k not in ("ts_ms", "ts_us", "ts_ns")}
    return (e.kind, e.topic, e.op, e.source, e.before, e.after, e.key_values, e.key_data, payload)


def _two_engines(pg: PostgresCluster, dbname: str, extra: dict[str, str], workload: list[str],
                 n: int) -> tuple[list[Event], list[Event]]:
    """The same workload through an engine with `extra` (converters) and one with JsonConverter."""
    # Topics named after the database: the registry outlives the test.
    common = {"topic.prefix": dbname}
    with Engine(props(pg, dbname, **common, **extra)) as converted, \
            Engine(props(pg, dbname, **common, **{k: v for k, v in extra.items() if "converter" not in k},
                         **{"slot.name": f"j_{dbname}", "publication.name": f"jp_{dbname}"})) as plain:
        for stmt in workload:
            pg.execute(stmt, dbname)
        return take(converted, n), take(plain, n)


WORKLOAD = [
    "INSERT INTO t VALUES (1, 12.345, '2024-02-29 13:14:15.123456', '2024-01-01 00:00:00+02', '1999-12-31',"
    " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff', ARRAY['a','b'], '{\"k\": 1}', 1e20),"
    " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "UPDATE t SET amount = -0.5, b = '\\x01', f = 0.1 WHERE id = 1",
    "DELETE FROM t WHERE id = 2",
]


def test_avro_records_have_the_json_paths_typed_values(pg: PostgresCluster, dbname: str,
                                                       registry: ApicurioRegistry) -> None:
    pg.execute(TABLE, dbname)
    avro = {"key.converter": AVRO, "value.converter": AVRO, "key.converter.schema.registry.url": registry.url,
            "value.converter.schema.registry.url": registry.url}
    ours, json_path = _two_engines(pg, dbname, avro, WORKLOAD, 5)
    assert [e.op for e in ours] == ["c", "c", "u", "d", None] and ours[-1].kind == "tombstone"
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    assert ours[0].after["amount"] == Decimal("12.345") and ours[0].after["f"] == 1e20
    # The bytes are Avro in Confluent's wire format; a consumer of their own decodes them through the registry.
    client = SchemaRegistryClient({"url": registry.url})
    values = AvroDeserializer(client)
    for e in ours[:4]:
        assert e.value is not None and e.value[:1] == b"\x00" and e.key is not None and e.key[:1] == b"\x00"
        decoded = values(e.value, SerializationContext(e.topic, MessageField.VALUE))
        assert decoded["op"] == e.op and decoded["source"]["lsn"] == e.lsn
        row = e.after if e.op != "d" else e.before
        assert row is not None and (decoded["after"] or decoded["before"])["id"] == row["id"]


def test_avro_after_transforms_has_the_json_paths_typed_values(pg: PostgresCluster, dbname: str,
                                                               registry: ApicurioRegistry) -> None:
    pg.execute(TABLE, dbname)
    extra = {"key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": registry.url,
             "transforms": "unwrap,route", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
             "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
             "transforms.unwrap.add.fields": "op,lsn", "transforms.route.type": K + "RegexRouter",
             "transforms.route.regex": r".*\.public\.(.*)", "transforms.route.replacement": "flat_$1"}
    ours, json_path = _two_engines(pg, dbname, extra, WORKLOAD, 4)
    assert [(e.topic, e.op) for e in ours] == [("flat_t", "c"), ("flat_t", "c"), ("flat_t", "u"), ("flat_t", "d")]
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    assert ours[3].before == {"id": 2, "amount": None, "at": None, "atz": None, "d": None, "u": None, "b": None,
                              "tags": None, "j": None, "f": None, "__op": "d", "__lsn": ours[3].lsn,
                              "__deleted": "true"}


def test_byte_array_records_have_the_json_paths_typed_values(pg: PostgresCluster, dbname: str) -> None:
    pg.execute(TABLE, dbname)
    extra = {"value.converter": BYTES, "transforms": "after,b", "transforms.after.type": K + "ExtractField$Value",
             "transforms.after.field": "after", "transforms.b.type": K + "ExtractField$Value",
             "transforms.b.field": "b"}
    ours, json_path = _two_engines(pg, dbname, extra, WORKLOAD, 5)
    assert [_view(e) for e in ours] == [_view(e) for e in json_path]
    assert [(e.op, e.data, e.value) for e in ours] == [
        ("c", b"\x00\xff", b"\x00\xff"), ("c", None, None), ("u", b"\x01", b"\x01"), ("d", None, None),
        (None, None, None)]
    assert [e.data for e in json_path] == [b"\x00\xff", None, b"\x01", None, None]
    assert json_path[0].value_json == {"schema": {"type": "bytes", "optional": True}, "payload": "AP8="}
