"""Streamed changes in Avro written from their parts (converters/avro_events.py, capture/events.py) are the
records the general path writes: the same changes captured twice, once each way, decode to the same datums
(all but the event's own timestamps), each record's bytes are spavro's whole-record bytes for its decoded datum,
and the parts path was the one taken. Extreme and special values in every column; two tables in one
transaction, several transactions, updates with their before row, deletes."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pytest

from pgcdc.capture import events
from pgcdc.converters import sink as converting
from pgcdc.converters.avro_schema import writer_schema
from pgcdc.converters.avro_writer import avro_writer
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.envelope.native import native_events
from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import DropSink
from tests.harness import Running, make_config, wait_for

AVRO = "io.confluent.connect.avro.AvroConverter"

TABLE = """
CREATE TABLE t (id int PRIMARY KEY, i2 smallint, i8 bigint, f4 real, f8 double precision, n numeric,
  n3 numeric(12,3), s text, b bytea, bo boolean, ts timestamp, tz timestamptz, d date, tm time,
  fa float8[], ia int[], ta text[], j jsonb, u uuid, iv interval, m money);
ALTER TABLE t REPLICA IDENTITY FULL;
CREATE TABLE u (id bigint PRIMARY KEY, v text);
"""

ROWS = [
    "(1, -32768, -9223372036854775808, 'NaN', 'NaN', 0, -999999999.999, '', '\\x', false,"
    " '0001-01-01 00:00:00', '0001-01-01 00:00:00+00', '0001-01-01', '00:00:00',"
    " '{NaN,Infinity,-Infinity,-0}', '{}', '{\"\",NULL}', '{}', '00000000-0000-0000-0000-000000000000',"
    " '-178000000 years', '-92233720368547758.08')",
    "(2, 32767, 9223372036854775807, 'Infinity', '-Infinity', 1e-40, 999999999.999, 'é\\u2028\"\\\\', '\\xff00',"
    " true, '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00', '9999-12-31', '24:00:00',"
    " '{1e308,4.9e-324,1e23,NULL}', '{-2147483648,2147483647,NULL}', '{\"a b\",\"\\\\\"}',"
    " '{\"k\": [1.5e300, null, \"\"]}', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '178000000 years',"
    " '92233720368547758.07')",
    "(3, 0, 0, '-0', '-0', -0.0, -0.001, NULL, NULL, NULL, 'infinity', '-infinity', 'infinity', NULL,"
    " NULL, NULL, NULL, 'null', NULL, NULL, NULL)",
    "(4, NULL, NULL, 3.4028235e38, 1e23, 123456789012345678901234567890.123456789, 0, 'x', '\\x00', NULL,"
    " NULL, NULL, '-infinity', '23:59:59.999999', '{0}', '{0}', '{x}', '[]', NULL, '1 microsecond', 0)",
]

WORKLOAD = [
    f"BEGIN; INSERT INTO t VALUES {', '.join(ROWS)}; INSERT INTO u VALUES (1, 'a'), (-9223372036854775808, ''); COMMIT",
    "UPDATE t SET s = 'updated', f8 = 'Infinity' WHERE id IN (1, 2)",
    "BEGIN; DELETE FROM t WHERE id = 3; INSERT INTO u VALUES (9223372036854775807, NULL); COMMIT",
    "UPDATE u SET v = 'z' WHERE id = 1",
    "DELETE FROM t WHERE id = 4",
    # A key change (a delete and a create with Debezium's key headers: the general path) between changes of
    # the same table in one transaction, then a truncate.
    "BEGIN; UPDATE u SET v = 'y' WHERE id = 1; UPDATE u SET id = 5 WHERE id = 1; UPDATE u SET v = 'x' WHERE id = 5;"
    " COMMIT",
    "TRUNCATE u",
    # Key changes of rows with NaN, the infinities and finite extremes in their doubles and floats: the general
    # path after the table's events went the parts path, with their rows back in JsonConverter's form.
    "INSERT INTO t (id, f4, f8, fa, n) VALUES (5, 1.17549435e-38, 2.2250738585072014e-308, '{1.5,-0}', 1.5)",
    "UPDATE t SET id = id + 10 WHERE id IN (1, 2, 5)",
]
# inserts, updates, delete + insert, update, delete, update + key change + update, truncate, insert, three key
# changes (tombstones apart)
EXPECTED = 4 + 2 + 2 + 1 + 1 + 1 + 1 + 4 + 1 + 1 + 6
KEY_CHANGE = 2 + 6  # of those, written by the general path


class Keep(DropSink):
    def __init__(self) -> None:
        self.records: list[tuple[str, bytes | None, bytes | None]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.records.append((topic, key, value))


def parts_taken(monkeypatch: pytest.MonkeyPatch, method: str = "__call__") -> list[str]:
    """The topics of the records the converting sink's parts path (converters/sink.py EventSend: a streamed
    change, its key given as JSON or as its fields (`keyed`), or `read` for a snapshot row) wrote, in order."""
    taken: list[str] = []
    original = getattr(converting.EventSend, method)

    def counted(self: Any, *args: Any) -> None:
        taken.append(self.topic)
        original(self, *args)

    monkeypatch.setattr(converting.EventSend, method, counted)
    if method == "__call__":
        keyed_taken(monkeypatch, taken)
    return taken


def keyed_taken(monkeypatch: pytest.MonkeyPatch, taken: list[str]) -> None:
    """Adds to `taken` the topic of each record EventSend.keyed wrote (an insert's key from its fields)."""
    original = converting.EventSend.keyed

    def counted(self: Any, *args: Any) -> bool:
        sent = original(self, *args)
        if sent:
            taken.append(self.topic)
        return sent

    monkeypatch.setattr(converting.EventSend, "keyed", counted)


def natives_watched(monkeypatch: pytest.MonkeyPatch, datum: str) -> list[tuple[str, bool]]:
    """(table, whether its rows are now their own datum: the writer's `datum` function is None) per table whose
    parts writer was told its rows are native, in order."""
    identity: list[tuple[str, bool]] = []
    original = converting.EventSend.native

    def native(self: Any, fields: Any) -> None:
        original(self, fields)
        identity.append((self.topic.rsplit(".", 1)[1], getattr(self.writer, datum) is None))

    monkeypatch.setattr(converting.EventSend, "native", native)
    return identity


def avro_connector(pg: PostgresCluster, dbname: str, name: str, props: dict[str, str]
                   ) -> tuple[Any, Any, ConvertingSink, Keep]:
    """(config, value converter, its converting sink, the kept records) of a connector `name` writing Avro
    into a Keep sink, from slot `name` and publication pub_<dbname>, with its own mock registry."""
    config = make_config(pg, dbname, **{
        "name": name, "topic.prefix": dbname, "slot.name": name, "publication.name": f"pub_{dbname}",
        "key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": f"mock://{name}",
        "skipped.operations": "none", **props})
    key_conv, value_conv, _ = make_converters(config, lambda: False)
    keep = Keep()
    return config, value_conv, ConvertingSink(keep, key_conv, value_conv), keep


def capture(pg: PostgresCluster, dbname: str, name: str, expected: int = EXPECTED, **props: str
            ) -> tuple[list[tuple[str, bytes | None, bytes | None]], Any]:
    """The workload's records, streamed from slot `name` (made before the workload ran)."""
    config, value_conv, sink, keep = avro_connector(pg, dbname, name, props)
    with Running(config, sink=sink):
        wait_for(lambda: sum(v is not None for _, _, v in keep.records) >= expected, 90, f"{expected} records",
                 lambda: len(keep.records))
    return keep.records, value_conv


def two_slots_then(pg: PostgresCluster, dbname: str, tables: str, workload: list[str]) -> None:
    """`tables` and their publication, slots parts_<dbname> and general_<dbname>, then the `workload`."""
    pg.execute(tables + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    for slot in (f"parts_{dbname}", f"general_{dbname}"):
        pg.execute(f"SELECT pg_create_logical_replication_slot('{slot}', 'pgoutput')", dbname)
    for statement in workload:
        pg.execute(statement, dbname)


def decoded(records: list[tuple[str, bytes | None, bytes | None]], conv: Any, snapshot: bool = False
            ) -> list[tuple[str, bytes | None, str]]:
    """(topic, key bytes, repr of the value's datum without the event's timestamps) per record; and each value's
    bytes checked against spavro writing its whole datum."""
    out = []
    for topic, key, value in records:
        if value is None:
            out.append((topic, key, "tombstone"))
            continue
        text = conv.client.get_schema(int.from_bytes(value[1:5], "big")).schema_str
        datum = fastavro.schemaless_reader(io.BytesIO(value[5:]), fastavro.parse_schema(writer_schema(text)))
        assert avro_writer(text, value[:5])(datum) == value, (topic, datum)
        for field in ("ts_ms", "ts_us", "ts_ns"):
            assert isinstance(datum.pop(field), int)
        if snapshot:  # the snapshot's own time, LSN and xid: the same in every record of one run
            datum["source"] = datum["source"]["snapshot"]
        out.append((topic, key, repr(datum)))
    return out


@pytest.mark.parametrize(("mode", "keys"), [("precise", AVRO), ("double", AVRO),
                                           ("precise", "org.apache.kafka.connect.json.JsonConverter")])
def test_parts_path_writes_the_general_paths_records(pg: PostgresCluster, dbname: str,
                                                     monkeypatch: pytest.MonkeyPatch, mode: str, keys: str) -> None:
    """decimal.handling.mode=double: numeric columns are doubles too (native rows, envelope/native.py). Keys in
    Avro (written from their JSON by the key schema's writer: converters/sink.py `_avro_keys`) or in JSON (the
    value's schema then registered by the value's first record alone)."""
    two_slots_then(pg, dbname, TABLE, WORKLOAD)
    taken = parts_taken(monkeypatch)
    natives: list[str] = []

    def native(t: Any) -> Any:
        n = native_events(t)
        if n is not None:
            natives.append(t.table)
        return n

    monkeypatch.setattr(events, "native_events", native)
    props = {"decimal.handling.mode": mode, "key.converter": keys}
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", **props)
    assert len(taken) == EXPECTED - KEY_CHANGE  # every other change went the parts path
    assert natives == ["t"]  # its doubles and floats as Python floats (u has none)
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", **props)
    assert len(parts) == len(general)
    assert decoded(parts, parts_conv) == decoded(general, general_conv)


def test_snapshot_parts_path_writes_the_general_paths_records(pg: PostgresCluster, dbname: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The initial snapshot's records (every `source.snapshot` marker: two tables, several rows each)."""
    pg.execute(TABLE + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    pg.execute(WORKLOAD[0], dbname)
    taken = parts_taken(monkeypatch, "read")
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", 6, **{"snapshot.mode": "initial"})
    assert len(taken) == 6
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", 6, **{"snapshot.mode": "initial"})
    ours = decoded(parts, parts_conv, snapshot=True)
    assert ours == decoded(general, general_conv, snapshot=True)
    assert [d.split("'source': ")[1].split(",")[0] for _, _, d in ours] == [
        "'first'", "'true'", "'true'", "'last_in_data_collection'", "'first_in_data_collection'", "'last'"]


NATIVE_TABLE = """
CREATE TABLE w (id int PRIMARY KEY, f4 real, f8 double precision, i bigint, s text);
CREATE TABLE x (id int PRIMARY KEY, f8 double precision, n numeric(12,3), b bytea);
ALTER TABLE x ALTER b SET STORAGE EXTERNAL;
CREATE TABLE y (id int PRIMARY KEY, b bytea NOT NULL DEFAULT '\\x0102', f4 real);
"""
NATIVE_WORKLOAD = [
    "INSERT INTO w VALUES (1, 'NaN', 'NaN', -9223372036854775808, ''), (2, 'Infinity', '-Infinity', NULL, NULL),"
    " (3, '-0', '-0', 9223372036854775807, 'é'), (4, 3.4028235e38, 4.9e-324, 0, 'x'),"
    " (5, 1.17549435e-38, 1e23, 1, NULL)",
    "UPDATE w SET f8 = 'Infinity', i = i + 1 WHERE id IN (1, 2)",
    "DELETE FROM w WHERE id IN (2, 4)",
    # Bytes columns (numeric(p,s) and bytea are bytes in native rows; spavro writes text given for a nullable one
    # as its UTF-8 bytes): values that are not empty; a TOASTed bytea unchanged by an update (its placeholder,
    # base64 text in JsonConverter's row, bytes in the native one); a delete's old row with the key alone, its NOT
    # NULL bytea filled with the type's fallback (Debezium reads no bytea default).
    "INSERT INTO x VALUES (1, NULL, -999999999.999, '\\xff00'), (2, 'NaN', NULL, decode(repeat('ab', 5000), 'hex'))",
    "UPDATE x SET f8 = 2.5 WHERE id = 2",
    "DELETE FROM x WHERE id = 1",
    "INSERT INTO y VALUES (1, '\\x03', 1.5)",
    "DELETE FROM y WHERE id = 1",
]


def test_native_rows_are_the_datums(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table whose every column is plain or native (a double or real as a float, numeric(p,s) and bytea as
    bytes): its rows go to spavro as the capture holds them, with no datum function, their fills (a TOASTed value's
    placeholder, a key-only old row's defaults) native too. The records are the general path's."""
    two_slots_then(pg, dbname, NATIVE_TABLE, NATIVE_WORKLOAD)
    taken = parts_taken(monkeypatch)
    identity = natives_watched(monkeypatch, "_fast")
    changes = 5 + 2 + 2 + 2 + 1 + 1 + 1 + 1  # w: inserts, updates, deletes; x: the same; y: an insert, a delete
    expected = changes + 2 + 1 + 1  # and the deletes' tombstones
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", changes)
    assert identity == [("w", True), ("x", True), ("y", True)]
    assert len(taken) == changes
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", changes)
    assert len(parts) == len(general) == expected
    assert decoded(parts, parts_conv) == decoded(general, general_conv)


def test_snapshot_native_rows_are_the_datums(pg: PostgresCluster, dbname: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The initial snapshot of the same tables (NaN, the infinities, -0, the limits of real and double, 64-bit
    integers, numeric at its precision, an empty and a TOASTed bytea, NULLs): their rows are read as Avro writes
    them (envelope/native.py) and go to spavro as they are, no Java text of a double or base64 computed. The
    records are the general path's."""
    pg.execute(NATIVE_TABLE + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    for statement in (NATIVE_WORKLOAD[0], NATIVE_WORKLOAD[3], NATIVE_WORKLOAD[6],
                      "INSERT INTO x VALUES (3, -0.0, 0.001, ''), (4, 1e308, NULL, NULL)"):
        pg.execute(statement, dbname)
    taken = parts_taken(monkeypatch, "read")
    identity = natives_watched(monkeypatch, "_parsed")
    rows = 5 + 4 + 1
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", rows, **{"snapshot.mode": "initial"})
    assert identity == [("w", True), ("x", True), ("y", True)]
    assert len(taken) == rows
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", rows, **{"snapshot.mode": "initial"})
    assert len(parts) == len(general) == rows
    assert decoded(parts, parts_conv, snapshot=True) == decoded(general, general_conv, snapshot=True)


def test_unchanged_rows_with_native_bytes_are_skipped(pg: PostgresCluster, dbname: str) -> None:
    """skip.messages.without.change compares an update's old and new rows; on the Avro parts path a table's rows
    hold bytea and numeric(p,s) values as bytes from its second change on, and the comparison takes them."""
    two_slots_then(pg, dbname, "CREATE TABLE v (id int PRIMARY KEY, n numeric(12,3), b bytea, f8 float8);"
                   " ALTER TABLE v REPLICA IDENTITY FULL", [
                       "INSERT INTO v VALUES (1, 1.5, '\\x01', 'NaN'), (2, -0.001, '\\x', '-0')",
                       "UPDATE v SET b = b WHERE id = 1",  # unchanged: skipped
                       "UPDATE v SET b = '\\x02' WHERE id = 1",
                       "UPDATE v SET f8 = f8, n = n WHERE id = 2",  # unchanged: skipped
                       "UPDATE v SET n = 2 WHERE id = 2",
                   ])
    props = {"skip.messages.without.change": "true"}
    parts, conv = capture(pg, dbname, f"parts_{dbname}", 4, **props)
    ops = [d.split("'op': ")[1][1] for _, _, d in decoded(parts, conv)]
    assert ops == ["c", "c", "u", "u"]


KEY_TABLES = """
CREATE DOMAIN k_text AS text;
CREATE TABLE ka (i2 smallint, t text, bo boolean, i8 bigint, d k_text, v int, PRIMARY KEY (i2, t, bo, i8, d));
CREATE TABLE kb (u uuid PRIMARY KEY, ts timestamp, v text);
CREATE TABLE kc (f8 double precision PRIMARY KEY, v int);
CREATE TABLE kd (n numeric PRIMARY KEY, v int);
CREATE TABLE ke (v int);
"""
KEY_WORKLOAD = [
    "INSERT INTO ka VALUES (-32768, '', false, -9223372036854775808, '', NULL),"
    " (32767, 'é\\u2028\"\\\\🎉', true, 9223372036854775807, ' ', 1), (0, 'a', true, 0, 'x', NULL)",
    "INSERT INTO kb VALUES ('00000000-0000-0000-0000-000000000000', 'infinity', ''),"
    " ('ffffffff-ffff-ffff-ffff-ffffffffffff', '0001-01-01 00:00:00', NULL)",
    "INSERT INTO kc VALUES ('NaN', 1), ('-Infinity', 2), ('-0', 3), (1e308, 4), (4.9e-324, 5)",
    # (a numeric key's NaN stops a precise connector, as it stops Debezium: the double key above has it)
    "INSERT INTO kd VALUES (0, 1), (-0.001, 2), (123456789012345678901234567890.123456789, 3)",
    "INSERT INTO ke VALUES (1), (NULL)",
    "BEGIN; INSERT INTO ka VALUES (1, 'b', false, 1, 'y', 2); UPDATE ka SET v = 3 WHERE i2 = 1;"
    " DELETE FROM ka WHERE i2 = 1; INSERT INTO kb VALUES ('12345678-1234-1234-1234-123456789abc', NULL, 'z'); COMMIT",
    "UPDATE kc SET v = 6 WHERE v = 1",  # the NaN key's row
    "UPDATE ka SET t = 'c' WHERE i2 = 0",  # a key change: delete, tombstone, create with Debezium's key headers
]


def refused_keys(monkeypatch: pytest.MonkeyPatch, table: str) -> list[Any]:
    """Makes the key writer from fields (EventSend.key_row) of `table` refuse every key, as spavro refuses a value
    it cannot write; the keys it was given, in order."""
    refusals: list[Any] = []
    first_key = converting.EventSend._first_key

    def refusing(self: Any, key: Any, headers: Any) -> Any:
        converted = first_key(self, key, headers)
        if self.key_row is not None and self.topic.endswith(f".{table}"):
            def refuse(fields: Any) -> bytes:
                refusals.append(fields)
                raise TypeError("refused")
            self.key_row = refuse
        return converted

    monkeypatch.setattr(converting.EventSend, "_first_key", refusing)
    return refusals


@pytest.mark.parametrize(("mode", "refused"), [("precise", False), ("double", False), ("precise", True)])
def test_insert_keys_from_their_fields(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch,
                                       mode: str, refused: bool) -> None:
    """The Avro key of an insert, or of an update without its old row, is written from its fields
    (converters/sink.py `EventSend.keyed`) where every key field is an integer, a string or a boolean (extremes,
    empty and escaped text, a domain, uuids); a key of a double (NaN, the infinities, -0) or a numeric goes the
    JSON way, as a delete's does, and a table without a key writes none. The records, keys included, are the
    general path's. Where the writer refuses a key (made to here, for one table) it goes the JSON way."""
    two_slots_then(pg, dbname, KEY_TABLES, KEY_WORKLOAD)
    keyed: list[str] = []
    keyed_taken(monkeypatch, keyed)
    refusals = refused_keys(monkeypatch, "kb") if refused else []
    changes = 3 + 2 + 5 + 3 + 2 + 4 + 1 + 2
    expected = changes + 2  # the deletes' tombstones
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", changes, **{"decimal.handling.mode": mode})
    # The first insert of each table converts its key from JSON, registering the key's schema first.
    written = [t for t in ("ka", "ka", "kb", "ka", "ka", "kb") if not (refused and t == "kb")]
    assert [t.rsplit(".", 1)[1] for t in keyed] == written
    assert len(refusals) == (2 if refused else 0)
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", changes, **{"decimal.handling.mode": mode})
    assert len(parts) == len(general) == expected
    assert decoded(parts, parts_conv) == decoded(general, general_conv)
    assert [k for t, k, _ in parts if t.endswith(".ke")] == [None, None]


SNAPSHOT_KEY_ROWS = [
    *KEY_WORKLOAD[:5],
    # More rows than one render batch (capture/snapshot.py RENDER_ROWS): the first batch of a table is rendered
    # before its first record is written, so its keys are JSON; the later ones are their fields.
    "INSERT INTO ka SELECT g, md5(g::text), g % 2 = 0, g * 1000000000000000, 'd' || g, g"
    " FROM generate_series(1, 150) g",
    "INSERT INTO kb SELECT md5(g::text)::uuid, NULL, '' FROM generate_series(1, 100) g",
    "INSERT INTO kc SELECT g * 1.5, g FROM generate_series(1, 100) g",
    "INSERT INTO kd SELECT g / 7.0, g FROM generate_series(1, 100) g",
    "INSERT INTO ke SELECT g FROM generate_series(1, 100) g",
]


@pytest.mark.parametrize("refused", [False, True])
def test_snapshot_keys_from_their_fields(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch,
                                         refused: bool) -> None:
    """The initial snapshot's Avro keys are written from the rows' key fields where every key field is an
    integer, a string or a boolean (converters/sink.py `EventSend._key_fields`), from the table's second render
    batch on; a key of a double or a numeric, or a table without a key, as before. Where the writer refuses a key
    (made to here, for one table) it goes through its JSON. The records, keys included, are the general path's."""
    pg.execute(KEY_TABLES + f"; CREATE PUBLICATION pub_{dbname} FOR ALL TABLES", dbname)
    for statement in SNAPSHOT_KEY_ROWS:
        pg.execute(statement, dbname)
    by_fields: list[str] = []
    original = converting.EventSend._key_fields

    def counted(self: Any, fields: Any, headers: Any) -> Any:
        by_fields.append(self.topic.rsplit(".", 1)[1])
        return original(self, fields, headers)

    monkeypatch.setattr(converting.EventSend, "_key_fields", counted)
    refusals = refused_keys(monkeypatch, "kb") if refused else []
    rows = 153 + 102 + 105 + 103 + 102
    props = {"snapshot.mode": "initial"}
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", rows, **props)
    assert {t: by_fields.count(t) for t in set(by_fields)} == {"ka": 153 - 64, "kb": 102 - 64}
    assert len(refusals) == (102 - 64 if refused else 0)
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", rows, **props)
    assert len(parts) == len(general) == rows
    assert decoded(parts, parts_conv, snapshot=True) == decoded(general, general_conv, snapshot=True)


TEMPORAL_KEYS = """
CREATE TABLE kt (d date, ts timestamp, tz timestamptz, tm time, v int, PRIMARY KEY (d, ts, tz, tm));
"""
TEMPORAL_ROWS = [
    "INSERT INTO kt VALUES ('2000-01-01', '2000-01-01', '2000-01-01 00:00+00', '00:00', 0)",
    "INSERT INTO kt VALUES ('infinity', 'infinity', 'infinity', '24:00:00', 1),"
    " ('-infinity', '-infinity', '-infinity', '00:00:00', 2),"
    " ('4713-01-01 BC', '4713-01-01 00:00:00 BC', '4713-01-01 00:00:00+00 BC', '23:59:59.999999', 3),"
    " ('9999-12-31', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00', '12:00', 4),"
    " ('0001-01-01', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00', '00:00:00.000001', 5)",
    "UPDATE kt SET v = 6 WHERE v = 1",
]


@pytest.mark.parametrize("mode", ["adaptive", "connect"])
def test_temporal_keys_from_their_fields(pg: PostgresCluster, dbname: str, monkeypatch: pytest.MonkeyPatch,
                                         mode: str) -> None:
    """Keys of date, timestamp, timestamptz and time columns (integers and, for timestamptz, a string: Debezium's
    types in time.precision.mode adaptive, Connect's logical types in `connect`) at the infinities, BC and the last
    year, written from their fields by inserts and an update: the general path's records."""
    two_slots_then(pg, dbname, TEMPORAL_KEYS, TEMPORAL_ROWS)
    keyed: list[str] = []
    keyed_taken(monkeypatch, keyed)
    props = {"time.precision.mode": mode}
    parts, parts_conv = capture(pg, dbname, f"parts_{dbname}", 7, **props)
    monkeypatch.setattr(converting.ConvertingSink, "event_sender", lambda self, topic, head: None)
    general, general_conv = capture(pg, dbname, f"general_{dbname}", 7, **props)
    assert len(parts) == len(general) == 7
    assert decoded(parts, parts_conv) == decoded(general, general_conv)
    assert len(keyed) == 6  # all but the first insert: every key field is an int32, an int64 or a string
