"""File and memory offset stores and the file sink (no services)."""

from __future__ import annotations

import orjson
import pytest

from pgcdc.errors import OffsetError, SinkError
from pgcdc.offsets import offset_key
from pgcdc.offsets.file import FileOffsetStore, decode, encode
from pgcdc.sink.file import FileSink


def test_offset_key_is_connects() -> None:
    assert offset_key("inventory-connector", "dbserver1") == b'["inventory-connector",{"server":"dbserver1"}]'


# An offset file written by Debezium 3.6.3's FileOffsetBackingStore (Kafka Connect), byte for byte.
DEBEZIUM_FILE = bytes.fromhex(
    "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f"
    "724900097468726573686f6c6478703f4000000000000c77080000001000000001757200025b42acf317f8060854e002"
    "000078700000001c5b226f222c7b22736572766572223a22646273657276657231227d5d7571007e0002000000627b22"
    "6c736e5f70726f63223a32363336363833322c226d65737361676554797065223a224d455353414745222c226c736e22"
    "3a32363336363935322c2274784964223a3732392c2274735f75736563223a313739353431393837363630333936327d"
    "78"
)


def test_reads_and_rewrites_connects_offset_file_byte_for_byte(tmp_path) -> None:
    entries = decode(DEBEZIUM_FILE)
    assert entries == {b'["o",{"server":"dbserver1"}]': b'{"lsn_proc":26366832,"messageType":"MESSAGE",'
                       b'"lsn":26366952,"txId":729,"ts_usec":1795419876603962}'}
    assert encode(entries) == DEBEZIUM_FILE
    path = tmp_path / "offsets.dat"
    path.write_bytes(DEBEZIUM_FILE)
    store = FileOffsetStore(path, offset_key("o", "dbserver1"))
    assert store.load() == {"lsn_proc": 26366832, "messageType": "MESSAGE", "lsn": 26366952, "txId": 729,
                            "ts_usec": 1795419876603962}
    store.store(store.load() or {})
    assert path.read_bytes() == DEBEZIUM_FILE


def test_file_store_round_trip_keeps_other_keys(tmp_path) -> None:
    path = tmp_path / "offsets.dat"
    a = FileOffsetStore(path, offset_key("a", "p"))
    b = FileOffsetStore(path, offset_key("b", "p"))
    assert a.load() is None
    a.store({"lsn": 1, "txId": 2})
    b.store({"lsn": 7})
    a.store({"lsn": 3, "txId": 4})
    assert a.load() == {"lsn": 3, "txId": 4} and b.load() == {"lsn": 7}
    assert not (tmp_path / "offsets.dat.tmp").exists()
    assert len(decode(path.read_bytes())) == 2


def test_file_store_corrupt(tmp_path) -> None:
    path = tmp_path / "offsets.dat"
    path.write_bytes(b"\xac\xed\x00\x05 not a map")
    with pytest.raises(OffsetError, match="offset.storage.file.filename: cannot read"):
        FileOffsetStore(path, b"[]").load()


def test_file_sink_lines(tmp_path) -> None:
    path = tmp_path / "out.jsonl"
    sink = FileSink(str(path))
    sink.send("t", b'{"schema":null,"payload":{"id":1}}', None, [("h", b'"v"')])
    sink.send("t", None, b'{"a":[1,2]}')
    sink.close()
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert lines == [
        {"topic": "t", "partition": None, "key": {"schema": None, "payload": {"id": 1}}, "value": None,
         "headers": [["h", "v"]]},
        {"topic": "t", "partition": None, "key": None, "value": {"a": [1, 2]}, "headers": []},
    ]


def test_file_sink_bad_path(tmp_path) -> None:
    with pytest.raises(SinkError, match="sink.file.path: cannot open"):
        FileSink(str(tmp_path / "missing" / "dir" / "out"))
