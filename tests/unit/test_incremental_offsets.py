"""Incremental snapshot progress in offsets, watermark timestamps and snapshot visibility (no services)."""

from __future__ import annotations

import json

import pytest

from pgcdc.capture import java_keys
from pgcdc.capture.incremental import IncrementalSnapshot
from pgcdc.capture.signals import java_instant
from pgcdc.capture.java_keys import JAVA_NULL
from pgcdc.capture.position import IncrementalProgress, Position
from pgcdc.sink.memory import MemorySink


def test_progress_round_trips_through_the_offset() -> None:
    progress = IncrementalProgress("sig1", (("public.t", None, None), ("public.c2", "a > 1", "b")), ("5", "x"),
                                   ("9", "z"), paused=True)
    offset = Position(100, 90, 95, 7, 1_000, extra=progress.to_fields()).to_offset()
    assert offset["lsn"] == 100 and offset["incremental_snapshot_correlation_id"] == "sig1"
    # The field names and forms Debezium 3.6 writes (measured): the collections as a JSON string.
    assert json.loads(offset["incremental_snapshot_collections"])[1] == {
        "incremental_snapshot_collections_id": "public.c2",
        "incremental_snapshot_collections_additional_condition": "a > 1",
        "incremental_snapshot_collections_surrogate_key": "b"}
    assert offset["incremental_snapshot_primary_key"] == offset["incremental_snapshot_maximum_key"] == JAVA_NULL
    assert IncrementalProgress.from_offset(json.loads(json.dumps(offset))) == progress


def test_debezium_offset_without_pgcdc_cursor_reads_the_table_again() -> None:
    offset = {"lsn": 1, "incremental_snapshot_correlation_id": "sig1", "incremental_snapshot_primary_key": JAVA_NULL,
              "incremental_snapshot_collections": '[{"incremental_snapshot_collections_id":"public.t",'
              '"incremental_snapshot_collections_additional_condition":null,'
              '"incremental_snapshot_collections_surrogate_key":null}]'}
    progress = IncrementalProgress.from_offset(offset)
    assert progress is not None and progress.collections == (("public.t", None, None),) and progress.key is None
    assert IncrementalProgress.from_offset({"lsn": 1}) is None
    assert Position(1, 1, 1, 1, 1).to_offset().keys() == {"lsn_proc", "messageType", "lsn_commit", "lsn", "txId",
                                                           "ts_usec"}


@pytest.mark.parametrize(("ns", "text"), [
    (1795437703990880205, "2026-11-23T12:41:43.990880205Z"),
    (1795437703990880000, "2026-11-23T12:41:43.990880Z"),
    (1795437703990000000, "2026-11-23T12:41:43.990Z"),
    (1795437703000000000, "2026-11-23T12:41:43Z"),
])
def test_watermark_timestamps_print_as_java_instants(ns: int, text: str) -> None:
    assert java_instant(ns) == text


def test_read_only_visibility_follows_the_snapshot() -> None:
    inc = IncrementalSnapshot(connect=lambda: None, signal_table="public.s", chunk_size=1,  # type: ignore
                              build=lambda s, t: None, captured=lambda: [], sink=MemorySink(), topic_prefix="p",
                              database="d", headers=[], read_only=True)
    epoch = 3 << 32
    inc.snap = (epoch + 100, epoch + 110, frozenset({epoch + 105}))
    assert inc._visible(99) and inc._visible(104)
    assert not inc._visible(105) and not inc._visible(110) and not inc._visible(200)
    inc.snap = ((4 << 32) + 5, (4 << 32) + 20, frozenset())  # just after a wrap: old xids belong to epoch 3
    assert inc._visible(0xFFFFFFF0) and inc._visible(4) and not inc._visible(25)


@pytest.mark.parametrize(("include", "snapshotted"), [("public.t", False), ("public.t,public.sig", False)])
def test_signal_table_is_captured_but_left_out_of_the_initial_snapshot(include: str, snapshotted: bool) -> None:
    """Measured on Debezium 3.6.3: the signal table joins a filtered publication and its rows are emitted, but the
    initial snapshot never reads it, even when table.include.list names it and it holds rows."""
    from pgcdc.config import build_config

    c = build_config({"name": "x", "topic.prefix": "p", "database.hostname": "h", "database.user": "u",
                      "database.dbname": "d", "sink.type": "file", "offset.storage": "memory",
                      "table.include.list": include, "signal.data.collection": "public.sig"})
    assert c.captures("public", "sig") and c.captures("public", "t") and not c.captures("public", "other")
    assert c.snapshots("public", "sig") is snapshotted and c.snapshots("public", "t")


# Written by Debezium 3.6 into its offsets during incremental snapshots (oracle runs): the maximum key of an
# int4 table at 100, and keys of a (bigint, text, smallint) primary key.
DEBEZIUM_KEYS = [
    (("integer",), ("100",),
     "aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000001737200116a6176612e6c"
     "616e672e496e746567657212e2a0a4f781873802000149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d"
     "0b94e08b020000787000000064"),
    (("bigint", "text", "smallint"), ("300", "k3000", "4"),
     "aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c0200007870000000037372000e6a6176612e6c"
     "616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e0"
     "8b0200007870000000000000012c7400056b33303030737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149"
     "000576616c75657871007e000300000004"),
    (("bigint", "text", "smallint"), ("40", "k400", "1"),
     "aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c0200007870000000037372000e6a6176612e6c"
     "616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e0"
     "8b020000787000000000000000287400046b343030737200116a6176612e6c616e672e496e746567657212e2a0a4f781873802000149"
     "000576616c75657871007e000300000001"),
]


@pytest.mark.parametrize(("types", "key", "hex_text"), DEBEZIUM_KEYS)
def test_keys_serialize_as_debezium_writes_them(types: tuple[str, ...], key: tuple[str, ...], hex_text: str) -> None:
    assert java_keys.encode(key, types) == hex_text
    assert java_keys.decode(hex_text) == key


def test_unserialized_key_types_fall_back_to_the_null_array() -> None:
    assert java_keys.encode(("1.5",), ("numeric",)) == JAVA_NULL
    assert java_keys.encode(None, ("integer",)) == JAVA_NULL
    assert java_keys.decode(JAVA_NULL) is None and java_keys.decode("zz") is None


def test_pgcdc_continues_from_debezium_serialized_keys() -> None:
    _, key, primary = DEBEZIUM_KEYS[2]
    offset = {"lsn": 1, "incremental_snapshot_correlation_id": "sig1", "incremental_snapshot_primary_key": primary,
              "incremental_snapshot_maximum_key": DEBEZIUM_KEYS[1][2],
              "incremental_snapshot_collections": '[{"incremental_snapshot_collections_id":"public.c2",'
              '"incremental_snapshot_collections_additional_condition":null,'
              '"incremental_snapshot_collections_surrogate_key":null}]'}
    progress = IncrementalProgress.from_offset(offset)
    assert progress is not None and progress.key == key and progress.max_key == DEBEZIUM_KEYS[1][1]
    ours = dict(IncrementalProgress("sig1", progress.collections, key, progress.max_key,
                                    key_types=DEBEZIUM_KEYS[1][0]).to_fields())
    assert ours["incremental_snapshot_primary_key"] == primary
