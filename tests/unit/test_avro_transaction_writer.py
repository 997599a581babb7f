"""A transaction's source fields written from its numbers (converters/avro_source.py `_transaction_writer`) are the
bytes spavro writes for the whole source record, both as runs kept for a transaction's events and written straight
into a first event's buffer with its sequence and lsn: commit times sharing a millisecond (whose bytes are kept),
more distinct milliseconds than are kept, the extremes of a long, and a null xid."""

from __future__ import annotations

import io
from typing import Any

import pytest
from spavro.fast_binary import get_writer

from pgcdc.converters.avro_source import _transaction_writer

OPTIONAL_LONG = ["null", "long"]
SOURCE = {"type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql", "fields": [
    {"name": "version", "type": "string"}, {"name": "ts_ms", "type": "long"},
    {"name": "snapshot", "type": ["null", "string"]}, {"name": "db", "type": "string"},
    {"name": "sequence", "type": ["null", "string"]}, {"name": "ts_us", "type": OPTIONAL_LONG},
    {"name": "ts_ns", "type": OPTIONAL_LONG}, {"name": "table", "type": "string"},
    {"name": "txId", "type": OPTIONAL_LONG}, {"name": "lsn", "type": OPTIONAL_LONG},
    {"name": "xmin", "type": OPTIONAL_LONG}, {"name": "origin", "type": ["null", "string"]},
]}
OTHERS = {"version": "3.6.3.Final", "snapshot": "false", "db": "dé", "table": "t", "xmin": None, "origin": None}
MAX = 2**63 - 1


def _full(record: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    get_writer(SOURCE)(out, record)
    return out.getvalue()


def _commits() -> list[tuple[int, Any]]:
    same_ms = [(1_732_700_000_123_000 + i, 700 + i) for i in range(5)]  # five commits in one millisecond
    many = [(1_000 * i + 7, i) for i in range(150)]  # more distinct milliseconds than are kept (64)
    extremes = [(0, 0), (-1, None), (MAX // 1000, 2**32 - 1), (-(MAX // 1000), 1), (1_000, 5)]
    return same_ms + many + same_ms + extremes


@pytest.mark.parametrize("others", [OTHERS, {**OTHERS, "xmin": 42, "origin": "o"}])
def test_the_runs_are_spavros_bytes_of_the_whole_source(others: dict[str, Any]) -> None:
    fields = SOURCE["fields"]
    names = [f["name"] for f in fields]
    seq, lsn = names.index("sequence"), names.index("lsn")
    seq_w, lsn_w = (get_writer(fields[i]["type"]) for i in (seq, lsn))
    tx, direct = _transaction_writer((fields[:seq], fields[seq + 1:lsn], fields[lsn + 1:]), others, seq_w, lsn_w)
    sequence, position = '["100","200"]', 200
    seq_bytes, lsn_bytes = _full_field(fields[seq], sequence), _full_field(fields[lsn], position)
    for commit_us, xid in _commits():
        ms, ns = commit_us // 1000, commit_us * 1000
        if abs(ns) > MAX:  # ts_ns beyond a long: not a commit time PostgreSQL has
            continue
        head, mid, end = tx(ms, commit_us, ns, xid)
        record = {**others, "ts_ms": ms, "ts_us": commit_us, "ts_ns": ns, "txId": xid, "sequence": sequence,
                  "lsn": position}
        assert head + seq_bytes + mid + lsn_bytes + end == _full(record), (commit_us, xid)
        out = io.BytesIO()
        out.write(b"before")
        direct(out, (ms, commit_us, ns, xid), sequence, position)
        assert out.getvalue() == b"before" + _full(record), (commit_us, xid)


def _full_field(field: dict[str, Any], value: Any) -> bytes:
    out = io.BytesIO()
    get_writer(field["type"])(out, value)
    return out.getvalue()
