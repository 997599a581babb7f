"""Debezium's notifications (pgcdc/notifications): the configuration, the sink channel's records, the log
channel's line, the snapshot notifications' additional data and its order, all from Debezium 3.6.3's output
(no services)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from pgcdc.capture.incremental import IncrementalSnapshot
from pgcdc.capture.java_order import java_hashmap_copy_order, java_hashset_copy_order
from pgcdc.config import build_config
from pgcdc.errors import ConfigError
from pgcdc.notifications import Notification, Notifier, make_notifier
from pgcdc.notifications.channels import LogChannel, SinkChannel, log_text
from pgcdc.notifications.snapshots import (IncrementalSnapshotNotices, InitialSnapshotNotices, captured_order,
                                           debezium_chunks, java_key_text, skipped)
from pgcdc.sink.memory import MemorySink

BASE = {"name": "x", "topic.prefix": "dbserver1", "database.hostname": "h", "database.user": "u",
        "database.dbname": "d", "sink.type": "file", "offset.storage": "memory"}

# A record Debezium 3.6.3 wrote with notification.sink.topic.name=dbz_notifications (its schemas, as
# JsonConverter writes them).
DEBEZIUM_RECORD = (
    '{"topic":"dbz_notifications","partition":null,"key":{"schema":{"type":"struct","fields":[{"type":"string",'
    '"optional":false,"field":"id"}],"optional":false,"name":"io.debezium.connector.common.NotificationKey",'
    '"version":1},"payload":{"id":"f641e8fe-e281-47f8-a52f-717834bed590"}},"value":{"schema":{"type":"struct",'
    '"fields":[{"type":"string","optional":false,"field":"id"},{"type":"string","optional":false,"field":"type"},'
    '{"type":"string","optional":false,"field":"aggregate_type"},{"type":"map","keys":{"type":"string",'
    '"optional":false},"values":{"type":"string","optional":false},"optional":true,"field":"additional_data"},'
    '{"type":"int64","optional":false,"field":"timestamp"}],"optional":false,'
    '"name":"io.debezium.connector.common.Notification","version":1},"payload":{'
    '"id":"f641e8fe-e281-47f8-a52f-717834bed590","type":"IN_PROGRESS","aggregate_type":"Initial Snapshot",'
    '"additional_data":{"current_collection_in_progress":"public.a","connector_name":"dbserver1",'
    '"data_collections":"public.a,public.b"},"timestamp":1795777084958}},"headers":[]}'
)


class Recorder:
    """A channel that keeps what it is sent."""

    name = "test"

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def send(self, notification: Notification) -> None:
        self.sent.append(notification)

    def close(self) -> None:
        pass


def kinds(rec: Recorder) -> list[tuple[str, str, dict[str, str]]]:
    return [(n.aggregate_type, n.type, n.additional_data) for n in rec.sent]


# -- configuration ------------------------------------------------------------------------------------------
def test_sink_channel_without_topic_is_refused_naming_the_setting() -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, "notification.enabled.channels": "log,sink"})
    assert "notification.sink.topic.name: Notification topic name must be provided" in str(exc.value)
    assert len(str(exc.value).strip().splitlines()) == 1


@pytest.mark.parametrize(("channels", "expected"), [
    (" log , sink", ["sink", "log"]),
    ("log", ["log"]),
    # Debezium compares names as written: these enable nothing (and a missing topic is not asked for)
    ("Sink,LOG", []),
    ("jmx,foo", []),
    ("", []),
])
def test_enabled_channels(channels: str, expected: list[str], caplog: pytest.LogCaptureFixture) -> None:
    config = build_config({**BASE, "notification.enabled.channels": channels, **(
        {"notification.sink.topic.name": "n"} if "sink" in channels else {})})
    with caplog.at_level(logging.WARNING):
        notifier = make_notifier(config, MemorySink())
    assert ([c.name for c in notifier.channels] if notifier else []) == expected
    if "jmx" in channels:
        assert "jmx is not available" in caplog.text and "foo not a notification channel" in caplog.text


def test_notification_properties_are_no_longer_accepted_without_effect(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        build_config({**BASE, "notification.enabled.channels": "log", "notification.sink.topic.name": "n"})
    assert "notification" not in caplog.text


# -- channels -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schemas", [True, False])
def test_sink_record_is_debeziums(schemas: bool) -> None:
    theirs = json.loads(DEBEZIUM_RECORD)
    sink = MemorySink()
    channel = SinkChannel(sink, "dbz_notifications", key_schemas=schemas, value_schemas=schemas)
    payload = theirs["value"]["payload"]
    channel.send(Notification(payload["id"], payload["aggregate_type"], payload["type"], payload["additional_data"],
                              payload["timestamp"]))
    if not schemas:  # schemas.enable=false: the payloads alone
        theirs["key"], theirs["value"] = theirs["key"]["payload"], theirs["value"]["payload"]
    assert sink.records == [theirs]


def test_log_line_is_debeziums(caplog: pytest.LogCaptureFixture) -> None:
    n = Notification("fc1592ee-19ef-42ec-9fc1-9cae37c0a98f", "Initial Snapshot", "SKIPPED",
                     {"connector_name": "dbserver1"}, 1795777170591)
    with caplog.at_level(logging.INFO, logger="pgcdc.notifications"):
        LogChannel().send(n)
    # Debezium's LogNotificationChannel line (measured), after its logger's own prefix
    assert caplog.messages == ["[Notification Service]  {id='fc1592ee-19ef-42ec-9fc1-9cae37c0a98f', "
                               "aggregateType='Initial Snapshot', type='SKIPPED', additionalData={connector_name="
                               "dbserver1}, timestamp=1795777170591}"]
    assert log_text(Notification("i", "Incremental Snapshot", "STARTED",
                                 {"connector_name": "c", "data_collections": "public.a,public.b"}, 1)) == \
        "{id='i', aggregateType='Incremental Snapshot', type='STARTED', additionalData={connector_name=c, " \
        "data_collections=public.a,public.b}, timestamp=1}"


# -- Java orders (measured) ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("keys", "expected"), [
    (["public.a", "public.b"], ["public.a", "public.b"]),
    (["public.a", "public.dbz_signal", "public.e", "public.nopk"],
     ["public.a", "public.e", "public.dbz_signal", "public.nopk"]),
])
def test_hashset_order(keys: list[str], expected: list[str]) -> None:
    assert java_hashset_copy_order(keys) == expected


@pytest.mark.parametrize(("copied", "expected"), [
    ([], ["connector_name"]),
    (["data_collections"], ["connector_name", "data_collections"]),
    (["current_collection_in_progress", "data_collections"],
     ["current_collection_in_progress", "connector_name", "data_collections"]),
    # status and data_collections share a bucket: Debezium writes them in either order (Map.of's order)
    (["scanned_collection", "data_collections", "total_rows_scanned", "status"],
     ["scanned_collection", "connector_name", "total_rows_scanned", "data_collections", "status"]),
    (["data_collections", "current_collection_in_progress", "maximum_key", "last_processed_key"],
     ["current_collection_in_progress", "connector_name", "maximum_key", "data_collections", "last_processed_key"]),
])
def test_additional_data_order(copied: list[str], expected: list[str]) -> None:
    assert java_hashmap_copy_order(copied, ["connector_name"]) == expected


@pytest.mark.parametrize(("tables", "include", "signal", "expected"), [
    # measured: the include list's order, then the signal table, captured whatever the include list says
    (["public.a", "public.b", "public.dbz_signal"], ["public.b", "public.a"], "public.dbz_signal",
     ["public.b", "public.a", "public.dbz_signal"]),
    (["public.a", "public.b", "public.dbz_signal"], ["public.a", "public.b"], "public.dbz_signal",
     ["public.a", "public.b", "public.dbz_signal"]),
    (["public.nopk", "public.a", "public.e"], [], None, ["public.a", "public.e", "public.nopk"]),
    (["public.ab", "public.aa", "other.x"], ["PUBLIC\\.a.*", "other.x"], None, ["public.aa", "public.ab", "other.x"]),
])
def test_captured_order(tables: list[str], include: list[str], signal: str | None, expected: list[str]) -> None:
    assert captured_order(tables, include, signal) == expected


# -- what the snapshots send --------------------------------------------------------------------------------
def test_initial_snapshot_notifications() -> None:
    rec = Recorder()
    notifier = Notifier([rec], "dbserver1")
    notices = InitialSnapshotNotices(notifier, ["public.a", "public.b"], ["public.a", "public.b", "public.dbz_signal"])
    notices.started()
    notices.table_started("public.a")
    notices.table_done("public.a", 3)
    notices.completed()
    skipped(notifier)
    notices.aborted()
    assert kinds(rec) == [
        ("Initial Snapshot", "STARTED", {"connector_name": "dbserver1"}),
        ("Initial Snapshot", "IN_PROGRESS", {"current_collection_in_progress": "public.a",
                                             "connector_name": "dbserver1", "data_collections": "public.a,public.b"}),
        ("Initial Snapshot", "TABLE_SCAN_COMPLETED", {
            "scanned_collection": "public.a", "connector_name": "dbserver1", "total_rows_scanned": "3",
            "data_collections": "public.a,public.b,public.dbz_signal", "status": "SUCCEEDED"}),
        ("Initial Snapshot", "COMPLETED", {"connector_name": "dbserver1"}),
        ("Initial Snapshot", "SKIPPED", {"connector_name": "dbserver1"}),
        ("Initial Snapshot", "ABORTED", {"connector_name": "dbserver1"}),
    ]
    ids = [n.id for n in rec.sent]
    assert len(set(ids)) == len(ids) and all(len(i) == 36 for i in ids)  # random UUIDs
    assert all(abs(n.timestamp - rec.sent[0].timestamp) < 60_000 for n in rec.sent)


@pytest.mark.parametrize(("rows", "keyed", "threads", "multiplier", "expected"), [
    (0, True, 1, 3, (1, 0)),  # an empty table: one chunk
    (10, False, 1, 3, (1, 0)),  # no key: one chunk
    (1, True, 1, 3, (1, 0)),
    (2, True, 1, 3, (2, 1)),  # fewer rows than chunks wanted: a row each
    (3, True, 1, 3, (3, 1)),
    (5, True, 1, 3, (3, 1)),  # 1, 1 and 3 rows
    (10, True, 1, 3, (3, 3)),  # 3, 3 and 4
    (13, True, 2, 2, (4, 3)),  # 3, 3, 3 and 4
    (100, True, 7, 1, (7, 14)),  # six of 14, the last of 16
    (2**62, True, 4, 8, (32, 2**57)),
    (2**63 - 1, True, 1, 2**31 - 1, (2**31 - 1, (2**63 - 1) // (2**31 - 1))),
])
def test_debezium_chunks(rows: int, keyed: bool, threads: int, multiplier: int, expected: tuple[int, int]) -> None:
    total, size = debezium_chunks(rows, keyed, threads, multiplier)
    assert (total, size) == expected
    assert total == 1 or size * (total - 1) < rows  # the last chunk has rows of its own


def test_chunk_notifications_sit_where_each_chunk_ends() -> None:
    """10 rows in chunks of 3, 3 and 4, read in batches of 4 and 6 and parts of at most 2 rows: each chunk's end
    cuts a part; its notifications come when the part after it is asked for (its last row still held back)."""
    rec = Recorder()
    notices = InitialSnapshotNotices(Notifier([rec], "dbserver1"), ["public.a"], ["public.a"], (1, 3))
    events: list[Any] = []
    rec.send = lambda n: events.append((n.type, n.additional_data.get("chunk_index"),  # type: ignore[method-assign]
                                        n.additional_data.get("total_rows_scanned")))
    marks = notices.table_chunks("public.a", 10, True, 0)
    for batch in ([0, 1, 2, 3], [4, 5, 6, 7, 8, 9]):
        for part in marks.parts(batch, 2):
            events.append(tuple(part))
    marks.finish()
    assert events == [
        ("TABLE_CHUNK_IN_PROGRESS", "0", "0"), (0, 1), (2,),
        ("TABLE_CHUNK_COMPLETED", "0", None), ("TABLE_CHUNK_IN_PROGRESS", "1", "3"), (3,), (4, 5),
        ("TABLE_CHUNK_COMPLETED", "1", None), ("TABLE_CHUNK_IN_PROGRESS", "2", "6"), (6, 7), (8, 9),
        ("TABLE_CHUNK_COMPLETED", "2", None)]
    # A table continued after 7 rows (a resumed snapshot) starts in its third chunk, the rows of two before it.
    events.clear()
    marks = notices.table_chunks("public.a", 10, True, 7)
    for part in marks.parts([7, 8, 9], 64):
        events.append(tuple(part))
    marks.finish()
    assert events == [("TABLE_CHUNK_IN_PROGRESS", "2", "6"), (7, 8, 9), ("TABLE_CHUNK_COMPLETED", "2", None)]


def test_chunk_notifications_data() -> None:
    rec = Recorder()
    notices = InitialSnapshotNotices(Notifier([rec], "dbserver1"), ["public.a"], ["public.a", "public.b"], (2, 1))
    notices.chunk_started("public.a", 1, 4, 250)
    notices.chunk_done("public.a", 1, 4)
    assert kinds(rec) == [
        ("Initial Snapshot", "TABLE_CHUNK_IN_PROGRESS", {
            "current_collection_in_progress": "public.a", "connector_name": "dbserver1", "chunk_index": "1",
            "total_chunks": "4", "total_rows_scanned": "250"}),
        ("Initial Snapshot", "TABLE_CHUNK_COMPLETED", {
            "scanned_collection": "public.a", "connector_name": "dbserver1", "chunk_index": "1",
            "total_chunks": "4", "data_collections": "public.a,public.b", "status": "SUCCEEDED"})]


def incremental(rec: Recorder) -> IncrementalSnapshot:
    def never(*_: Any) -> Any:
        raise AssertionError("no database in this test")

    return IncrementalSnapshot(connect=never, signal_table="public.dbz_signal", chunk_size=2, build=never,
                               captured=lambda: [("public", "a"), ("public", "b")], sink=MemorySink(),
                               topic_prefix="dbserver1", database="d", headers=[],
                               notices=IncrementalSnapshotNotices(Notifier([rec], "dbserver1")))


def test_incremental_snapshot_signals_notify() -> None:
    rec = Recorder()
    inc = incremental(rec)
    inc._signal("sig-1", "execute-snapshot", '{"data-collections": ["public.a", "public.b"]}', "")
    inc._signal("p", "pause-snapshot", None, "")
    inc._signal("p2", "pause-snapshot", None, "")  # already paused: nothing
    inc._signal("r", "resume-snapshot", None, "")
    inc._signal("s", "stop-snapshot", '{"data-collections": ["public.b"]}', "")
    inc._signal("s", "stop-snapshot", '{"data-collections": ["public.x"]}', "")
    inc._signal("s", "stop-snapshot", None, "")
    inc._signal("s", "stop-snapshot", None, "")  # nothing running: nothing
    both = {"connector_name": "dbserver1", "data_collections": "public.a,public.b"}
    assert kinds(rec) == [
        ("Incremental Snapshot", "STARTED", both),
        ("Incremental Snapshot", "PAUSED", both),
        ("Incremental Snapshot", "RESUMED", both),
        ("Incremental Snapshot", "ABORTED", {"connector_name": "dbserver1", "data_collections": "public.b"}),
        ("Incremental Snapshot", "ABORTED", {"connector_name": "dbserver1", "data_collections": ""}),
        ("Incremental Snapshot", "ABORTED", {"connector_name": "dbserver1", "data_collections": "public.a"}),
    ]
    assert {n.id for n in rec.sent} == {"sig-1"}  # the snapshot's correlation id


def test_incremental_snapshot_table_notifications() -> None:
    rec = Recorder()
    notices = IncrementalSnapshotNotices(Notifier([rec], "dbserver1"))
    notices.in_progress("sig-1", ["public.b"], ("2", "y"), ("2", "y"))
    notices.table_done("sig-1", ["public.a", "public.b"], 3, "SUCCEEDED")
    notices.table_done(None, ["public.b"], 0, "EMPTY")
    notices.completed("sig-1")
    assert kinds(rec) == [
        ("Incremental Snapshot", "IN_PROGRESS", {  # measured
            "current_collection_in_progress": "public.b", "connector_name": "dbserver1", "maximum_key": "2,y",
            "data_collections": "public.b", "last_processed_key": "2,y"}),
        ("Incremental Snapshot", "TABLE_SCAN_COMPLETED", {
            "scanned_collection": "public.a", "connector_name": "dbserver1", "total_rows_scanned": "3",
            "data_collections": "public.a,public.b", "status": "SUCCEEDED"}),
        ("Incremental Snapshot", "TABLE_SCAN_COMPLETED", {
            "scanned_collection": "public.b", "connector_name": "dbserver1", "total_rows_scanned": "0",
            "data_collections": "public.b", "status": "EMPTY"}),
        ("Incremental Snapshot", "COMPLETED", {"connector_name": "dbserver1"}),
    ]
    assert rec.sent[0].id == "sig-1" and len(rec.sent[2].id) == 36  # no correlation id: a random UUID


def test_blocking_snapshot_notifications_name_the_signals_tables() -> None:
    rec = Recorder()
    notices = IncrementalSnapshotNotices(Notifier([rec], "dbserver1"), ["public.b", "public.a"], "public.dbz_signal")
    blocking = notices.blocking(["public.a", "public.b"])
    blocking.table_started("public.a")
    blocking.table_done("public.a", 2)
    assert [n.additional_data["data_collections"] for n in rec.sent] == ["public.a,public.b", "public.b,public.a"]
    assert {n.aggregate_type for n in rec.sent} == {"Initial Snapshot"}


# IN_PROGRESS keys as Java's toString of their JDBC values: the texts Debezium 3.6.3 wrote for numeric (BigDecimal),
# boolean, double precision and real keys (tests/conformance/test_notifications_vs_debezium.py, typed_keys), with
# the extremes and special values of each type; other types keep PostgreSQL's text.
JAVA_KEYS = [
    ("numeric", "0.0000001", "1E-7"), ("numeric", "-0.00000000025", "-2.5E-10"), ("numeric(10,2)", "1.50", "1.50"),
    ("numeric", "100", "100"), ("numeric", "0.000001", "0.000001"), ("numeric", "NaN", "NaN"),
    ("numeric", "12345678901234567890.5", "12345678901234567890.5"), ("boolean", "t", "true"),
    ("boolean", "f", "false"), ("double precision", "1e+20", "1.0E20"), ("double precision", "0.1", "0.1"),
    ("double precision", "-1e-06", "-1.0E-6"), ("double precision", "-0", "-0.0"),
    ("double precision", "Infinity", "Infinity"), ("double precision", "NaN", "NaN"),
    ("double precision", "1.7976931348623157e+308", "1.7976931348623157E308"), ("real", "0.1", "0.1"),
    ("real", "1e+20", "1.0E20"), ("real", "3.4028235e+38", "3.4028235E38"), ("real", "-Infinity", "-Infinity"),
    ("integer", "-2147483648", "-2147483648"), ("date", "2020-02-29", "2020-02-29"), ("character(4)", "ab  ", "ab  "),
    ("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
]


@pytest.mark.parametrize(("type_name", "text", "java"), JAVA_KEYS)
def test_in_progress_keys_are_javas_text(type_name: str, text: str, java: str) -> None:
    assert java_key_text([text], [type_name]) == java
    assert java_key_text(["1", text, None], ["integer", type_name, "text"]) == f"1,{java},<null>"
