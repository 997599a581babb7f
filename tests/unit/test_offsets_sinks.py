"""File and memory offset stores and the file sink (no services)."""

from __future__ import annotations

import orjson
import pytest

from pgcdc.errors import OffsetError, SinkError
from pgcdc.offsets import offset_key
from pgcdc.offsets.file import FileOffsetStore
from pgcdc.sink.file import FileSink


def test_offset_key_is_connects() -> None:
    assert offset_key("inventory-connector", "dbserver1") == b'["inventory-connector",{"server":"dbserver1"}]'


def test_file_store_round_trip_keeps_other_keys(tmp_path) -> None:
    path = tmp_path / "offsets.json"
    a = FileOffsetStore(path, offset_key("a", "p"))
    b = FileOffsetStore(path, offset_key("b", "p"))
    assert a.load() is None
    a.store({"lsn": 1, "txId": 2})
    b.store({"lsn": 7})
    a.store({"lsn": 3, "txId": 4})
    assert a.load() == {"lsn": 3, "txId": 4} and b.load() == {"lsn": 7}
    assert not (tmp_path / "offsets.json.tmp").exists()


def test_file_store_corrupt(tmp_path) -> None:
    path = tmp_path / "offsets.json"
    path.write_bytes(b"\xac\xed\x00\x05 java serialized")
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
