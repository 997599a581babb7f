"""Notifications (`notification.enabled.channels=sink,log`) through a real broker: the sink channel's records on
`notification.sink.topic.name` beside the change records, as JSON and through Confluent's AvroConverter with a
real schema registry (the same converters as every record); the log channel's lines; a restart that reads no
snapshot notifies SKIPPED. What the records hold is compared with Debezium in
tests/conformance/test_notifications_vs_debezium.py."""

from __future__ import annotations

import logging
import threading

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from pgcdc.capture.position import SnapshotProgress
from pgcdc.local import ApicurioRegistry, KafkaBroker, PostgresCluster
from pgcdc.offsets.memory import MemoryOffsetStore
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, read_topic, wait_for
from tests.integration.test_avro_kafka import AVRO, read_raw

SETUP = ("CREATE TABLE a (id int PRIMARY KEY, v text); INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 3) g;"
         "CREATE TABLE b (id int PRIMARY KEY)")


def props(dbname: str) -> dict[str, str]:
    return {"snapshot.mode": "initial", "offset.storage": "kafka", "offset.storage.topic": f"offsets_{dbname}",
            "notification.enabled.channels": "sink,log", "notification.sink.topic.name": f"notes_{dbname}"}


def test_notifications_through_kafka(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                     caplog: pytest.LogCaptureFixture) -> None:
    pg.execute(SETUP, dbname)
    config = make_config(pg, dbname, broker.bootstrap_servers, **props(dbname))
    topic = f"notes_{dbname}"
    with caplog.at_level(logging.INFO, logger="pgcdc.notifications"):
        with Running(config):
            wait_for(lambda: len(read_topic(broker.bootstrap_servers, topic, 5)) >= 6, 60, "the notifications")
        with Running(config):  # the snapshot is done: this start reads none
            wait_for(lambda: len(read_topic(broker.bootstrap_servers, topic, 5)) >= 7, 60, "SKIPPED")
    notes = read_topic(broker.bootstrap_servers, topic)
    payloads = [n["value"]["payload"] for n in notes]
    assert [(p["aggregate_type"], p["type"]) for p in payloads] == [("Initial Snapshot", t) for t in (
        "STARTED", "IN_PROGRESS", "TABLE_SCAN_COMPLETED", "IN_PROGRESS", "TABLE_SCAN_COMPLETED", "COMPLETED",
        "SKIPPED")]
    assert payloads[2]["additional_data"] == {"scanned_collection": "public.a", "connector_name": "test",
                                              "total_rows_scanned": "3", "data_collections": "public.a,public.b",
                                              "status": "SUCCEEDED"}
    assert all(n["key"]["payload"] == {"id": n["value"]["payload"]["id"]} and n["headers"] == [] for n in notes)
    assert notes[0]["value"]["schema"]["name"] == "io.debezium.connector.common.Notification"
    lines = [m for m in caplog.messages if m.startswith("[Notification Service]  {id='")]
    assert len(lines) == 7 and "type='TABLE_SCAN_COMPLETED', additionalData={scanned_collection=public.a" in lines[2]


def test_notifications_through_avro(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                    registry: ApicurioRegistry) -> None:
    pg.execute(SETUP, dbname)
    config = make_config(pg, dbname, broker.bootstrap_servers, **props(dbname), **{
        "key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": registry.url})
    topic = f"notes_{dbname}"
    with Running(config):
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 6, 60, "the notifications")
    client = SchemaRegistryClient({"url": registry.url})
    values = AvroDeserializer(client)
    keys = AvroDeserializer(client)
    raw = read_raw(broker.bootstrap_servers, topic)
    decoded = [(keys(k, SerializationContext(topic, MessageField.KEY)),
                values(v, SerializationContext(topic, MessageField.VALUE))) for k, v in raw]
    assert [v["type"] for _, v in decoded] == ["STARTED", "IN_PROGRESS", "TABLE_SCAN_COMPLETED", "IN_PROGRESS",
                                               "TABLE_SCAN_COMPLETED", "COMPLETED"]
    assert all(k == {"id": v["id"]} for k, v in decoded)
    assert decoded[1][1]["additional_data"] == {"current_collection_in_progress": "public.a",
                                                "connector_name": "test", "data_collections": "public.a,public.b"}


def test_resumed_snapshot_counts_every_row_of_the_table(pg: PostgresCluster, dbname: str) -> None:
    """A snapshot stopped mid-table and resumed after its last stored row: the table's TABLE_SCAN_COMPLETED counts
    the rows emitted before the restart too, as Debezium (which starts a snapshot over) counts every row."""
    pg.execute("CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL); CREATE TABLE d (id int PRIMARY KEY);"
               "INSERT INTO c SELECT g, 0 FROM generate_series(1, 60000) g; INSERT INTO d VALUES (1), (2)", dbname)
    topic = f"notes_{dbname}"
    offsets = MemoryOffsetStore()
    config = make_config(pg, dbname, **{
        "snapshot.mode": "initial", "pgcdc.snapshot.chunk.rows": "500", "snapshot.fetch.size": "200",
        "offset.flush.interval.ms": "50", "notification.enabled.channels": "sink",
        "notification.sink.topic.name": topic})
    first_sink = MemorySink()
    first = Connector(config, sink=first_sink, offsets=offsets)
    t = threading.Thread(target=first.run)
    t.start()
    wait_for(lambda: first.snapshot_metrics.rows > 15_000, 60, "part of the snapshot")
    first.stop()
    t.join(60)
    progress = SnapshotProgress.from_offset(offsets.load() or {})
    assert progress is not None and progress.table == ("public", "c") and progress.key is not None
    assert progress.table_rows == int(progress.key[0])  # ids 1.. in key order: one record per id so far
    second_sink = MemorySink()
    with Running(config, sink=second_sink, offsets=offsets):
        wait_for(lambda: any(r["topic"] == topic and payload(r)["type"] == "COMPLETED" for r in second_sink.records),
                 90, "the resumed snapshot's COMPLETED")
    scans = {payload(r)["additional_data"]["scanned_collection"]: payload(r)["additional_data"]["total_rows_scanned"]
             for r in second_sink.records if r["topic"] == topic and payload(r)["type"] == "TABLE_SCAN_COMPLETED"}
    assert scans == {"public.c": "60000", "public.d": "2"}
    reread = [payload(r)["after"]["id"] for r in second_sink.records
              if r["topic"].endswith(".c") and r["value"] and payload(r)["op"] == "r"]
    assert reread and min(reread) == int(progress.key[0]) + 1  # the rows before were not read again
