"""The sans-IO decoder against frames recorded from PostgreSQL 15 (tests/data/pgoutput, see its README).

Values come from the recordings' workloads; LSNs, xids and OIDs differ per recording, so tests take them from
the recorded Relation/Stream Start messages and check how they relate instead of naming them.
"""

from __future__ import annotations

import copy
import operator
import pickle
import re
import struct
import subprocess
import sys
import uuid
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgcdc.errors import ProtocolError, UnsupportedMessage
from pgcdc.lsn import format_lsn, parse_lsn
from pgcdc.protocol import (
    UNCHANGED_TOAST,
    PgoutputDecoder,
    PrimaryKeepalive,
    XLogData,
    parse_copy_data,
    standby_status_update,
)
from pgcdc.protocol import messages as m

DATA = Path(__file__).resolve().parents[1] / "data" / "pgoutput"
SESSIONS = ("proto1", "proto1_binary", "proto2_stream", "proto3_twophase")
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def pg_us(ts: str) -> int:
    """An ISO timestamp as PostgreSQL's wire value: microseconds since 2000-01-01 UTC."""
    delta = datetime.fromisoformat(ts) - PG_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@cache
def frames(session: str) -> tuple[bytes, ...]:
    data = (DATA / f"{session}.bin").read_bytes()
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from("!I", data, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return tuple(out)


@cache
def decoded(session: str) -> tuple[tuple[XLogData, m.Message, bool], ...]:
    """(frame, message, decoded inside a streamed block) for every XLogData of a recording."""
    decoder, out = PgoutputDecoder(), []
    for raw in frames(session):
        frame = parse_copy_data(raw)
        if isinstance(frame, XLogData):
            inside = decoder.in_stream
            out.append((frame, decoder.decode(frame.payload), inside))
    return tuple(out)


def messages(session: str, cls: type | None = None) -> list[Any]:
    return [msg for _, msg, _ in decoded(session) if cls is None or isinstance(msg, cls)]


def relation(session: str, name: str) -> m.Relation:
    return next(r for r in messages(session, m.Relation) if r.name == name)


def type_oid(session: str, name: str) -> int:
    return next(t.oid for t in messages(session, m.TypeMessage) if t.name == name)


class Rel(str):
    """An expected value standing for the OID of the recorded Relation with this name."""


def resolve(session: str, expected: Any) -> Any:
    if isinstance(expected, Rel):
        return relation(session, expected).oid
    if isinstance(expected, tuple):
        return tuple(resolve(session, e) for e in expected)
    return expected


# -- the recordings decode, and hold what their workloads produce ------------------------------------------
@pytest.mark.parametrize("session,expected", [
    ("proto1", {m.Begin, m.Commit, m.TypeMessage, m.Relation, m.Insert, m.Update, m.Delete, m.Truncate,
                m.LogicalMessage, m.Origin}),
    ("proto1_binary", {m.Begin, m.Commit, m.Relation, m.Insert, m.Update, m.LogicalMessage}),
    ("proto2_stream", {m.Begin, m.Commit, m.Relation, m.TypeMessage, m.Insert, m.Update, m.Delete, m.Truncate,
                       m.LogicalMessage, m.StreamStart, m.StreamStop, m.StreamCommit, m.StreamAbort}),
    ("proto3_twophase", {m.Begin, m.Commit, m.Relation, m.Insert, m.LogicalMessage, m.BeginPrepare, m.Prepare,
                         m.CommitPrepared, m.RollbackPrepared, m.StreamStart, m.StreamStop, m.StreamPrepare}),
])
def test_recording_message_types(session: str, expected: set[type]) -> None:
    assert {type(msg) for msg in messages(session)} == expected


NULLS7 = (None,) * 7
ITEM1 = ("1", "apple", "happy", "3", "1.50", "t", "2024-01-02 03:04:05+00", "x" * 3000)
ITEM2 = ("2", "héllo wörld ☃", "sad", None, None, "f", None, "short")
BIN_ROW = (struct.pack("!i", 1), struct.pack("!i", 42), struct.pack("!q", 9_000_000_000), b"text",
           b"\x00\xff", struct.pack("!d", 1.5), struct.pack("!q", pg_us("2024-01-02T03:04:05+00:00")),
           uuid.UUID(int=1).bytes)

# (recording, message class, which occurrence, expected fields). Rel("x") is the OID of recorded Relation x.
CASES = [
    ("proto1", m.TypeMessage, 0, {"xid": None, "namespace": "public", "name": "mood"}),
    # A domain is announced with its base type's name; "" is pg_catalog (logicalrep_write_typ).
    ("proto1", m.TypeMessage, 1, {"xid": None, "namespace": "", "name": "int4"}),
    ("proto1", m.Relation, 0, {"xid": None, "namespace": "public", "name": "items", "replica_identity": "d"}),
    ("proto1", m.Insert, 0, {"xid": None, "relation_oid": Rel("items"), "new": ITEM1}),
    ("proto1", m.Insert, 1, {"relation_oid": Rel("items"), "new": ITEM2}),
    ("proto1", m.Update, 0, {"relation_oid": Rel("items"), "old": None, "old_kind": None,
                             "new": (*ITEM1[:3], "4", *ITEM1[4:7], UNCHANGED_TOAST)}),
    ("proto1", m.Update, 1, {"relation_oid": Rel("items"), "old_kind": "K", "old": ("2", *NULLS7),
                             "new": ("10", *ITEM2[1:])}),
    ("proto1", m.Delete, 0, {"relation_oid": Rel("items"), "old_kind": "K", "old": ("10", *NULLS7)}),
    ("proto1", m.Relation, 1, {"name": "audit", "replica_identity": "f"}),
    ("proto1", m.Insert, 2, {"relation_oid": Rel("audit"), "new": ("1", "first")}),
    ("proto1", m.Update, 2, {"relation_oid": Rel("audit"), "old_kind": "O", "old": ("1", "first"),
                             "new": ("1", "second")}),
    ("proto1", m.Delete, 1, {"relation_oid": Rel("audit"), "old_kind": "O", "old": ("1", "second")}),
    ("proto1", m.Truncate, 0, {"xid": None, "options": 3, "cascade": True, "restart_identity": True,
                               "relation_oids": (Rel("parent"), Rel("child"))}),
    ("proto1", m.Truncate, 1, {"options": 0, "cascade": False, "restart_identity": False,
                               "relation_oids": (Rel("bulk"),)}),
    ("proto1", m.LogicalMessage, 0, {"xid": None, "transactional": True, "prefix": "pgcdc.test",
                                     "content": b"in a transaction"}),
    ("proto1", m.LogicalMessage, 1, {"transactional": False, "prefix": "pgcdc.test",
                                     "content": b"\x00\x01\xff"}),
    ("proto1", m.LogicalMessage, -1, {"transactional": False, "prefix": "pgcdc.record", "content": b"end"}),
    ("proto1", m.Origin, 0, {"name": "pgcdc_origin", "commit_lsn": parse_lsn("0/ABCDEF")}),
    # pg_replication_origin_xact_setup() also sets the commit timestamp the Begin and Commit carry.
    ("proto1", m.Begin, -1, {"commit_ts": pg_us("2024-01-01T00:00:00+00:00")}),
    ("proto1", m.Commit, -1, {"flags": 0, "commit_ts": pg_us("2024-01-01T00:00:00+00:00")}),
    ("proto1", m.Insert, -1, {"relation_oid": Rel("bulk"), "new": ("2", "from origin")}),
    ("proto1_binary", m.Insert, 0, {"relation_oid": Rel("bin"), "new": BIN_ROW}),
    ("proto1_binary", m.Update, 0, {"old": None, "new": (*BIN_ROW[:3], None, b"\x00\xff",
                                                         struct.pack("!d", -0.25), *BIN_ROW[6:])}),
    ("proto2_stream", m.Insert, 0, {"xid": None, "relation_oid": Rel("bulk"),
                                    "new": ("100", "small, not streamed")}),
    ("proto2_stream", m.StreamStart, 0, {"first_segment": True}),
    ("proto2_stream", m.StreamStart, 1, {"first_segment": False}),
    ("proto2_stream", m.TypeMessage, 0, {"namespace": "public", "name": "mood"}),
    ("proto2_stream", m.Insert, 1, {"relation_oid": Rel("items"),
                                    "new": ("100", "streamed", "ok", "1", "0.01", "t",
                                            "2024-01-02 03:04:05+00", "d")}),
    ("proto2_stream", m.Insert, 2, {"relation_oid": Rel("bulk"), "new": ("1000", "s" * 20)}),
    ("proto2_stream", m.Update, 0, {"relation_oid": Rel("bulk"), "old": None, "new": ("1000", "changed")}),
    ("proto2_stream", m.Delete, 0, {"old_kind": "K", "old": ("1003", None)}),
    ("proto2_stream", m.LogicalMessage, 0, {"transactional": True, "content": b"inside a stream"}),
    ("proto2_stream", m.Truncate, 0, {"options": 0, "relation_oids": (Rel("audit"),)}),
    ("proto2_stream", m.StreamCommit, 0, {"flags": 0}),
    ("proto2_stream", m.StreamAbort, 0, {"abort_lsn": None, "abort_ts": None}),
    ("proto2_stream", m.StreamAbort, 1, {"abort_lsn": None, "abort_ts": None}),
    ("proto3_twophase", m.Insert, 0, {"xid": None, "new": ("7000", "plain")}),
    ("proto3_twophase", m.BeginPrepare, 0, {"gid": "pgcdc_gid_1"}),
    ("proto3_twophase", m.Insert, 1, {"xid": None, "new": ("8000", "prepared")}),
    ("proto3_twophase", m.Prepare, 0, {"flags": 0, "gid": "pgcdc_gid_1"}),
    ("proto3_twophase", m.CommitPrepared, 0, {"flags": 0, "gid": "pgcdc_gid_1"}),
    ("proto3_twophase", m.Prepare, 1, {"gid": "pgcdc_gid_2"}),
    ("proto3_twophase", m.RollbackPrepared, 0, {"flags": 0, "gid": "pgcdc_gid_2"}),
    ("proto3_twophase", m.StreamPrepare, 0, {"flags": 0, "gid": "pgcdc_gid_3"}),
    ("proto3_twophase", m.CommitPrepared, 1, {"gid": "pgcdc_gid_3"}),
]


@pytest.mark.parametrize("session,cls,index,expected", CASES,
                         ids=[f"{c[0]}-{c[1].__name__}[{c[2]}]" for c in CASES])
def test_recorded_values(session: str, cls: type, index: int, expected: dict[str, Any]) -> None:
    msg = messages(session, cls)[index]
    assert {k: getattr(msg, k) for k in expected} == {k: resolve(session, v) for k, v in expected.items()}


def test_relation_columns() -> None:
    numeric_10_2 = ((10 << 16) | 2) + 4  # numeric typmod: (precision << 16 | scale) + VARHDRSZ
    items = relation("proto1", "items")
    assert [(c.flags, c.name, c.type_oid, c.type_modifier) for c in items.columns] == [
        (1, "id", 23, -1), (0, "name", 25, -1), (0, "mood", type_oid("proto1", "mood"), -1),
        (0, "qty", type_oid("proto1", "int4"), -1), (0, "price", 1700, numeric_10_2), (0, "active", 16, -1),
        (0, "created", 1184, -1), (0, "doc", 25, -1),
    ]
    assert [c.is_key for c in items.columns] == [True] + [False] * 7
    # REPLICA IDENTITY FULL: every column is part of the identity.
    assert [c.is_key for c in relation("proto1", "audit").columns] == [True, True]


@pytest.mark.parametrize("session", SESSIONS)
def test_transactions_pair_up(session: str) -> None:
    """Begin/Commit and the two-phase messages agree on xid, LSNs and timestamps; LSNs only grow."""
    open_begin: m.Begin | None = None
    prepares: dict[str, m.BeginPrepare] = {}
    prepared: dict[str, m.Prepare | m.StreamPrepare] = {}
    last_end = 0
    for msg in messages(session):
        if isinstance(msg, m.Begin):
            assert open_begin is None
            open_begin = msg
        elif isinstance(msg, m.Commit):
            assert open_begin is not None
            assert (msg.commit_lsn, msg.commit_ts) == (open_begin.final_lsn, open_begin.commit_ts)
            assert last_end <= msg.commit_lsn < msg.end_lsn
            last_end, open_begin = msg.end_lsn, None
        elif isinstance(msg, m.BeginPrepare):
            prepares[msg.gid] = msg
        elif isinstance(msg, m.Prepare):
            begin = prepares[msg.gid]
            assert (msg.prepare_lsn, msg.end_lsn, msg.prepare_ts, msg.xid) == (
                begin.prepare_lsn, begin.end_lsn, begin.prepare_ts, begin.xid)
            prepared[msg.gid] = msg
        elif isinstance(msg, m.StreamPrepare):
            prepared[msg.gid] = msg
        elif isinstance(msg, m.CommitPrepared):
            assert msg.xid == prepared[msg.gid].xid and msg.commit_lsn >= prepared[msg.gid].end_lsn
            assert msg.commit_ts >= prepared[msg.gid].prepare_ts
        elif isinstance(msg, m.RollbackPrepared):
            assert msg.xid == prepared[msg.gid].xid and msg.prepare_end_lsn == prepared[msg.gid].end_lsn
            assert msg.rollback_end_lsn > msg.prepare_end_lsn and msg.rollback_ts >= msg.prepare_ts
    assert open_begin is None
    starts = [f.start_lsn for f, _, _ in decoded(session) if f.start_lsn]  # 0/0: written ahead of a change
    assert starts == sorted(starts)
    assert all(f.end_lsn >= f.start_lsn for f, _, _ in decoded(session))


XID_MESSAGES = (m.Relation, m.TypeMessage, m.Insert, m.Update, m.Delete, m.Truncate, m.LogicalMessage)


@pytest.mark.parametrize("session", SESSIONS)
def test_xid_only_inside_streams(session: str) -> None:
    for _, msg, inside in decoded(session):
        if isinstance(msg, XID_MESSAGES):
            assert (msg.xid is not None) == inside, msg


def test_streamed_transactions() -> None:
    """Stream blocks of proto2_stream: committed, aborted whole, and committed with an aborted subxact."""
    blocks: list[tuple[int, list[m.Message]]] = []
    ends: list[m.StreamCommit | m.StreamAbort] = []
    for msg in messages("proto2_stream"):
        if isinstance(msg, m.StreamStart):
            blocks.append((msg.xid, []))
        elif isinstance(msg, (m.StreamCommit, m.StreamAbort)):
            ends.append(msg)
        elif isinstance(msg, XID_MESSAGES) and msg.xid is not None:
            blocks[-1][1].append(msg)
    committed, aborted, with_sub = sorted({xid for xid, _ in blocks})
    assert [type(e) for e in ends] == [m.StreamCommit, m.StreamAbort, m.StreamAbort, m.StreamCommit]
    assert [e.xid for e in ends] == [committed, aborted, with_sub, with_sub]
    assert ends[1].subxid == aborted  # the whole transaction rolled back
    sub = ends[2].subxid
    assert sub != with_sub
    # Changes made in a subtransaction carry its own xid, not the top-level one.
    rows = {msg.new[0]: msg.xid for xid, block in blocks if xid == with_sub for msg in block
            if isinstance(msg, m.Insert)}
    assert rows["5000"] == with_sub and {x for row, x in rows.items() if row.startswith("6")} == {sub}
    # ROLLBACK TO SAVEPOINT keeps the savepoint: the next change is in a fresh subtransaction.
    assert rows["5001"] not in (with_sub, sub)
    # Only what overflowed logical_decoding_work_mem was streamed before the subtransaction aborted.
    assert "6000" in rows and "6599" not in rows
    assert all(msg.xid == committed for xid, block in blocks if xid == committed for msg in block)
    inserted = [msg.new[0] for xid, block in blocks if xid == committed for msg in block
                if isinstance(msg, m.Insert) and msg.relation_oid == relation("proto2_stream", "bulk").oid]
    assert inserted == [str(i) for i in range(1000, 1600)]


@pytest.mark.parametrize("session", SESSIONS)
def test_copy_frames(session: str) -> None:
    raw = frames(session)
    parsed = [parse_copy_data(f) for f in raw]
    keepalives = [p for p in parsed if isinstance(p, PrimaryKeepalive)]
    assert keepalives and isinstance(parsed[-1], PrimaryKeepalive)  # the recorder stops on a keepalive
    assert not any(k.reply_requested for k in keepalives)
    last = max(p.start_lsn for p in parsed if isinstance(p, XLogData))
    assert parsed[-1].end_lsn >= last
    x = next(p for p in parsed if isinstance(p, XLogData))
    first = next(f for f in raw if f[:1] == b"w")
    assert x.payload.obj is first and bytes(x.payload) == first[25:]  # a view, not a copy


@pytest.mark.parametrize("session", SESSIONS)
def test_decode_accepts_bytes_and_memoryview(session: str) -> None:
    d1, d2 = PgoutputDecoder(), PgoutputDecoder()
    for frame, msg, _ in decoded(session)[:200]:
        assert d1.decode(bytes(frame.payload)) == msg == d2.decode(frame.payload)


@pytest.mark.parametrize("cls", [m.Begin, m.Commit, m.Insert, m.Update, m.Delete])
def test_hot_messages_match_their_constructor(cls: type) -> None:
    """The decoder builds these named tuples with tuple.__new__; they must equal, hash and print like the
    class's own constructor's."""
    found = messages("proto1", cls)
    assert found
    for msg in found:
        again = cls(**{name: getattr(msg, name) for name in cls._fields})  # type: ignore[attr-defined]
        assert type(msg) is cls and msg == again and hash(msg) == hash(again) and repr(msg) == repr(again)


@pytest.mark.parametrize("cls", [m.Begin, m.Insert, m.Relation])
def test_messages_are_immutable(cls: type) -> None:
    msg = messages("proto1", cls)[0]
    with pytest.raises((FrozenInstanceError, AttributeError)):
        msg.xid = 1
    assert not hasattr(msg, "__dict__")
    assert copy.deepcopy(UNCHANGED_TOAST) is UNCHANGED_TOAST
    assert pickle.loads(pickle.dumps(UNCHANGED_TOAST)) is UNCHANGED_TOAST


def test_protocol_imports_no_driver() -> None:
    code = ("import sys, pgcdc.protocol, pgcdc.lsn; "
            "assert not {'psycopg', 'confluent_kafka'} & {n.split('.')[0] for n in sys.modules}")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- messages PostgreSQL 15 cannot send, built from the docs ----------------------------------------------
def test_stream_abort_v4() -> None:
    """Protocol 4 with streaming = parallel adds abort LSN and abort timestamp (PG 16+)."""
    d = PgoutputDecoder()
    ts = pg_us("2024-05-06T07:08:09.123456+00:00")
    v4 = d.decode(b"A" + struct.pack("!IIQq", 900, 901, parse_lsn("1/2345ABCD"), ts))
    assert v4 == m.StreamAbort(900, 901, 0x1_2345_ABCD, ts)
    assert d.decode(b"A" + struct.pack("!II", 900, 900)) == m.StreamAbort(900, 900, None, None)


def test_decoder_state() -> None:
    d = PgoutputDecoder()
    assert not d.in_stream
    assert d.decode(b"S" + struct.pack("!IB", 7, 1)) == m.StreamStart(7, True)
    assert d.in_stream
    insert = b"I" + struct.pack("!IIcH", 7, 16384, b"N", 3) + b"nub" + struct.pack("!I", 2) + b"\x01\x02"
    assert d.decode(insert) == m.Insert(7, 16384, (None, UNCHANGED_TOAST, b"\x01\x02"))
    assert d.decode(b"E") == m.StreamStop()
    assert not d.in_stream
    d.decode(b"S" + struct.pack("!IB", 7, 0))
    d.reset()
    assert not d.in_stream


def bad(data: bytes, text: str, *, inside: bool = False, error: type[Exception] = ProtocolError) -> Any:
    """A malformed-input case: the bytes, text the one-line error must contain, decoder state, error class."""
    return pytest.param(data, inside, error, text, id=text.split(":")[-1].strip() or text)


HEAD = struct.Struct("!IcH").pack  # Insert/Update/Delete: relation OID, tuple type, column count
MALFORMED = [
    bad(b"", "empty pgoutput message"),
    bad(b"Z\x00\x01", "unsupported pgoutput message type b'Z' at offset 0", error=UnsupportedMessage),
    bad(b"B" + bytes(10), "Begin message at offset 11 of 11 bytes: message truncated"),
    bad(b"C" + bytes(25) + b"!", "Commit message at offset 26 of 27 bytes: 1 unexpected trailing byte(s)"),
    bad(b"I" + HEAD(1, b"N", 1) + b"t" + struct.pack("!I", 10) + b"abc",
        "Insert message at offset 16 of 16 bytes: message truncated"),
    bad(b"I" + HEAD(1, b"N", 2) + b"n", "Insert message at offset 9 of 9 bytes: message truncated"),
    bad(b"I" + HEAD(1, b"N", 1) + b"x", "Insert message at offset 8 of 9 bytes: unknown column kind 0x78"),
    bad(b"I" + HEAD(1, b"X", 0), "Insert message at offset 5 of 8 bytes: expected tuple type 'N', got b'X'"),
    bad(b"I" + HEAD(1, b"N", 1) + b"t" + struct.pack("!I", 2) + b"\xc3(",
        "Insert message at offset 13 of 15 bytes: column value is not valid UTF-8"),
    bad(b"I\x00\x00", "Insert message at offset 3 of 3 bytes: message truncated"),
    bad(b"U" + HEAD(1, b"O", 1) + b"n", "Update message at offset 9 of 9 bytes: message truncated"),
    bad(b"U" + HEAD(1, b"K", 1) + b"n" + b"X" + struct.pack("!H", 1) + b"n",
        "Update message at offset 9 of 13 bytes: expected tuple type 'N', got b'X'"),
    bad(b"D" + HEAD(1, b"N", 0), "Delete message at offset 5 of 8 bytes: expected tuple type 'K' or 'O'"),
    bad(b"R" + struct.pack("!I", 1) + b"public",
        "Relation message at offset 5 of 11 bytes: unterminated string"),
    bad(b"R" + struct.pack("!I", 1) + b"p\x00t\x00d" + struct.pack("!H", 1) + b"\x01id",
        "Relation message at offset 13 of 15 bytes: unterminated string"),
    bad(b"Y" + struct.pack("!I", 1) + b"\xff\x00t\x00",
        "Type message at offset 5 of 9 bytes: string is not valid UTF-8"),
    bad(b"T" + struct.pack("!IBI", 2, 0, 1), "Truncate message at offset 10 of 10 bytes: message truncated"),
    bad(b"M\x01" + bytes(8) + b"p\x00" + struct.pack("!I", 5) + b"abc",
        "Message message at offset 19 of 19 bytes: message truncated"),
    bad(b"A" + bytes(12), "Stream Abort message at offset 9 of 13 bytes: 4 unexpected trailing byte(s)"),
    bad(b"P" + bytes(29) + b"gid", "Prepare message at offset 30 of 33 bytes: unterminated string"),
    bad(b"E", "unexpected pgoutput Stream Stop message at offset 0: not valid outside"),
    bad(b"B" + bytes(20), "unexpected pgoutput Begin message at offset 0: not valid inside", inside=True),
    bad(b"I\x00\x00\x00", "Insert message at offset 4 of 4 bytes: message truncated", inside=True),
    bad(b"E!", "Stream Stop message at offset 1 of 2 bytes: 1 unexpected trailing byte(s)", inside=True),
]


@pytest.mark.parametrize("data,inside,error,text", MALFORMED)
def test_malformed(data: bytes, inside: bool, error: type[Exception], text: str) -> None:
    d = PgoutputDecoder()
    if inside:
        d.decode(b"S" + struct.pack("!IB", 1, 1))
    with pytest.raises(error) as exc:
        d.decode(data)
    assert type(exc.value) is error and text in str(exc.value) and "\n" not in str(exc.value)
    assert d.in_stream == inside  # a failed decode leaves the state alone


# -- fuzzing: nothing but ProtocolError ever escapes ------------------------------------------------------
def _samples() -> list[tuple[bytes, bool]]:
    """One recorded payload per (message type, streamed or not), plus a few long ones."""
    seen: dict[tuple[type, bool], tuple[bytes, bool]] = {}
    for session in SESSIONS:
        for frame, msg, inside in decoded(session):
            seen.setdefault((type(msg), inside), (bytes(frame.payload), inside))
    long = [(bytes(f.payload), i) for f, msg, i in decoded("proto1") if isinstance(msg, (m.Insert, m.Update))]
    return list(seen.values()) + long


SAMPLES = _samples()
MESSAGE_BYTES = [bytes([b]) for b in b"BCORYIUDTMSEcAbPKrp"]
FUZZ = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decode_or_protocol_error(data: bytes, inside: bool) -> None:
    d = PgoutputDecoder()
    if inside:
        d.decode(b"S" + struct.pack("!IB", 1, 1))
    try:
        d.decode(data)
    except ProtocolError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(data=st.binary(max_size=64) | st.builds(operator.add, st.sampled_from(MESSAGE_BYTES),
                                               st.binary(max_size=80)),
       inside=st.booleans())
def test_fuzz_random_bytes(data: bytes, inside: bool) -> None:
    _decode_or_protocol_error(data, inside)


@FUZZ
@given(sample=st.sampled_from(SAMPLES), data=st.data())
def test_fuzz_mutated_recordings(sample: tuple[bytes, bool], data: st.DataObject) -> None:
    payload, inside = sample
    buf = bytearray(payload)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(("flip", "cut", "insert", "delete")))
        i = data.draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[i] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del buf[i:]
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        elif buf:
            del buf[i]
    _decode_or_protocol_error(bytes(buf), inside)


@FUZZ
@given(data=st.binary(max_size=40) | st.builds(operator.add, st.sampled_from([b"w", b"k"]),
                                               st.binary(max_size=40)))
def test_fuzz_copy_frames(data: bytes) -> None:
    try:
        frame = parse_copy_data(data)
    except ProtocolError:
        return
    assert isinstance(frame, (XLogData, PrimaryKeepalive))


# -- COPY frames and LSN text -----------------------------------------------------------------------------
@pytest.mark.parametrize("data,expected", [
    (b"w" + struct.pack("!QQq", 10, 20, 30) + b"Epayload", XLogData(10, 20, 30, memoryview(b"Epayload"))),
    (b"w" + struct.pack("!QQq", 1, 2, -3), XLogData(1, 2, -3, memoryview(b""))),
    (b"k" + struct.pack("!QqB", 99, 123, 1), PrimaryKeepalive(99, 123, True)),
    (b"k" + struct.pack("!QqB", 99, 123, 0), PrimaryKeepalive(99, 123, False)),
])
def test_parse_copy_data(data: bytes, expected: XLogData | PrimaryKeepalive) -> None:
    assert parse_copy_data(data) == expected
    assert parse_copy_data(memoryview(data)) == expected


@pytest.mark.parametrize("data,error,text", [
    (b"", ProtocolError, "empty CopyData frame"),
    (b"w" + bytes(23), ProtocolError, "XLogData frame truncated at offset 24"),
    (b"k" + bytes(16), ProtocolError, "Primary keepalive frame truncated at offset 17"),
    (b"k" + bytes(18), ProtocolError, "keepalive frame has 1 unexpected trailing byte(s) at offset 18"),
    (b"d" + bytes(30), UnsupportedMessage, "unsupported CopyData frame type b'd' at offset 0"),
])
def test_parse_copy_data_malformed(data: bytes, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=re.escape(text)):
        parse_copy_data(data)


@pytest.mark.parametrize("args,expected", [
    ((1, 2, 3, 4), b"r" + struct.pack("!QQQqB", 1, 2, 3, 4, 0)),
    ((0x16B374D848, 0x16B374D848, 0, -5, True),
     b"r" + struct.pack("!QQQqB", 0x16B374D848, 0x16B374D848, 0, -5, 1)),
])
def test_standby_status_update(args: tuple[Any, ...], expected: bytes) -> None:
    assert standby_status_update(*args) == expected and len(expected) == 34


def test_standby_status_update_out_of_range() -> None:
    with pytest.raises(ValueError, match="out of range"):
        standby_status_update(-1, 0, 0, 0)


@pytest.mark.parametrize("text,value,canonical", [
    ("0/0", 0, "0/0"),
    ("16/B374D848", 0x16_B374_D848, "16/B374D848"),
    ("16/b374d848", 0x16_B374_D848, "16/B374D848"),
    ("0/ABCDEF", 0xAB_CDEF, "0/ABCDEF"),
    ("00000001/00000002", (1 << 32) | 2, "1/2"),
    ("FFFFFFFF/FFFFFFFF", 2**64 - 1, "FFFFFFFF/FFFFFFFF"),
])
def test_lsn_text(text: str, value: int, canonical: str) -> None:
    assert parse_lsn(text) == value
    assert format_lsn(value) == canonical


@pytest.mark.parametrize("text", ["", "16", "16/", "/1", "g/1", "1/2/3", "123456789/0", "-1/0", "0x1/0",
                                  " 1/0", "1_0/0", "+1/0"])
def test_lsn_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="invalid LSN"):
        parse_lsn(text)


@pytest.mark.parametrize("value", [-1, 2**64])
def test_lsn_out_of_range(value: int) -> None:
    with pytest.raises(ValueError):
        format_lsn(value)


@given(st.integers(0, 2**64 - 1))
def test_lsn_round_trip(value: int) -> None:
    assert parse_lsn(format_lsn(value)) == value
