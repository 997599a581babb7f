"""Kafka's StringConverter, SimpleHeaderConverter and primitive converters and Debezium's BinaryDataConverter
and ByteArrayConverter, in pgcdc and in a Connect worker (the oracle: Debezium 3.6.3's SourceRecords converted
in the JVM by instances of those classes): the same key, value and header bytes, record by record, for the type
zoo in every handling mode, snapshot and streaming.

Masked on both sides, as in every comparison: the envelope's processing timestamps, the run id header, for
snapshot records the source fields of each connector's own slot (compare.SNAPSHOT_FIELDS), and the identity
hash Java prints for a byte[] inside Struct.toString (`[B@1b6d3586`: a number drawn per object per JVM run).
A record the oracle's converter throws on must be where pgcdc stops with its one line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import SNAPSHOT_FIELDS
from tests.conformance.converted import run_both_converted
from tests.conformance.test_debezium_streaming import MORE_SETUP, MORE_WORKLOAD, SCENARIOS, TYPES_SETUP, TYPES_WORKLOAD
from tests.conformance.test_null_defaults_vs_debezium import PROPS as ND_PROPS
from tests.conformance.test_null_defaults_vs_debezium import SETUP as ND_SETUP
from tests.conformance.test_null_defaults_vs_debezium import WORKLOAD as ND_WORKLOAD
from tests.conformance.test_types_more import (ARR_SETUP, ARR_WORKLOAD, BC_SETUP, BC_WORKLOAD, GEO_SETUP,
                                               GEO_WORKLOAD, GIS_SETUP, GIS_WORKLOAD)
from tests.conformance.test_zoo_vs_debezium import MODES as ZOO_MODES
from tests.conformance.test_zoo_vs_debezium import ROWS as ZOO_ROWS
from tests.conformance.test_zoo_vs_debezium import SETUP as ZOO_SETUP

STRING = "org.apache.kafka.connect.storage.StringConverter"
SIMPLE_HEADER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
TEXT = {"key": {"class": STRING}, "value": {"class": STRING}, "header": {"class": SIMPLE_HEADER}}

_ENVELOPE_TS = re.compile(r"((?:op=[a-z],|Struct\{op=m,)ts_ms=)\d+(,ts_us=\d+,ts_ns=\d+)?")
_SNAPSHOT = re.compile(r"\b(ts_ms|ts_us|ts_ns|lsn|txId)=\d+|\bsequence=\[[^\]]*\]")
_ENVELOPE_JSON_TS = re.compile(r'("op":"[a-z]","ts_ms":)\d+,"ts_us":\d+,"ts_ns":\d+')
_IDENTITY = re.compile(r"\[B@[0-9a-f]+")
_MESSAGE_ID = re.compile(r"(LogicalDecodingMessageId)@[0-9a-f]+")  # a Java identity hash too (compare.mask)
# The one form pgcdc cannot know from a record: Debezium fills a NOT NULL bytea column missing from a key-only
# old tuple with an empty byte[] (Struct.toString: an identity hash), where a bytea value is a ByteBuffer
# (docs/compatibility.md). Counted and printed, not hidden.
_FILLED_BYTEA = "=java.nio.HeapByteBuffer[pos=0 lim=0 cap=0]"


def _text(data: str | None, snapshot: bool) -> str | None:
    if data is None:
        return None
    text = bytes.fromhex(data).decode("utf-8", "replace")
    text = _IDENTITY.sub("[B@<hash>", _ENVELOPE_TS.sub(r"\1<ts>", _MESSAGE_ID.sub(r"\1@<hash>", text)))
    text = _ENVELOPE_JSON_TS.sub(r"\1<ts>", text)
    if snapshot and ",op=r," in text:
        text = _SNAPSHOT.sub("<snapshot>", text)
    return text


def _header(name: str, data: str | None, snapshot: bool) -> str | None:
    # ExtractNewRecordState's add.headers copies of snapshot fields (source.ts_ms, source.sequence)
    if snapshot and name.startswith("__source_") and name[9:] in SNAPSHOT_FIELDS:
        return "<snapshot>"
    return _text(data, snapshot)


def differences(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], error: str | None,
                snapshot: bool = False) -> list[str]:
    """What differs; a record the oracle's converter threw on must be the first pgcdc did not write, with
    pgcdc stopped on an error."""
    problems = []
    failed = next((i for i, r in enumerate(theirs) if r["key_error"] or r["value_error"]
                   or any(h[2] for h in r["headers"])), None)
    expected = theirs if failed is None else theirs[:failed]
    if failed is not None:
        if error is None:
            problems.append(f"record {failed}: Debezium's converter threw ({theirs[failed]['key_error'] or ''}"
                            f"{theirs[failed]['value_error'] or ''}) and pgcdc did not stop")
    elif error is not None:
        problems.append(f"pgcdc stopped: {error}")
    if len(ours) != len(expected):
        problems.append(f"record count {len(ours)} (pgcdc) != {len(expected)} (Debezium)")
    for i, (a, b) in enumerate(zip(ours, expected)):
        where = f"record {i} ({b['topic']})"
        if a["topic"] != b["topic"]:
            problems.append(f"{where}: topic {a['topic']} != {b['topic']}")
            continue
        for side in ("key", "value"):
            x, y = _text(a[side], snapshot), _text(b[side], snapshot)
            if x != y and x is not None and ",op=d," in x and x.replace(_FILLED_BYTEA, "=[B@<hash>") == y:
                print(f"{where}: {x.count(_FILLED_BYTEA)} filled bytea columns: ByteBuffer (pgcdc), byte[] "
                      "(Debezium)")
                continue
            if x != y:
                problems.append(f"{where}: {side}\n  ours   {x if x is None else x[:3000]}\n  theirs {y}")
        hx = [(h[0], _header(h[0], h[1], snapshot)) for h in a["headers"] if h[0] != "__debezium.context.runId"]
        hy = [(h[0], _header(h[0], h[1], snapshot)) for h in b["headers"] if h[0] != "__debezium.context.runId"]
        if hx != hy:
            problems.append(f"{where}: headers\n  ours   {hx}\n  theirs {hy}")
    return problems


def check(label: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], error: str | None,
          snapshot: bool = False, fails: bool = False) -> None:
    problems = differences(ours, theirs, error, snapshot)
    print(f"{label}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences"
          + (f"; pgcdc stopped: {error}" if error else ""))
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:20])
    assert (error is not None) == fails, error


UNWRAP_HEADERS = {
    "transforms": "h,u", "transforms.h.type": "org.apache.kafka.connect.transforms.InsertHeader",
    "transforms.h.header": "hd", "transforms.h.value.literal": "42",
    "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.u.add.headers": "op,source.ts_ms,source.sequence,source.db",
    "transforms.u.delete.tombstone.handling.mode": "rewrite"}
ALL_TYPES = ";".join([TYPES_SETUP, MORE_SETUP, SCENARIOS["ops"][0]])
ALL_WORKLOAD = [*TYPES_WORKLOAD, *MORE_WORKLOAD, *SCENARIOS["ops"][2]]
# Recorded for tests/unit/test_converters_recorded.py (PGCDC_RECORD_CONVERTERS=1).
RECORD = ("types_ops", "types_connect_map_unwrap_headers", "zoo_precise_bytes_json", "zoo_double_hex_map",
          "geometric_unknown", "bc_connect")
# Struct.toString, AbstractCollection/AbstractMap.toString, Values.convertToString of every value kind.
STRING_SCENARIOS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "types_ops": (ALL_TYPES, {}, ALL_WORKLOAD),
    "types_connect_map_unwrap_headers": (ALL_TYPES, {
        "time.precision.mode": "connect", "hstore.handling.mode": "map", "interval.handling.mode": "string",
        "binary.handling.mode": "base64", **UNWRAP_HEADERS}, ALL_WORKLOAD),
    "types_string_micro_hex": (ALL_TYPES, {"decimal.handling.mode": "string", "binary.handling.mode": "hex",
                                           "time.precision.mode": "adaptive_time_microseconds"}, ALL_WORKLOAD),
    **{f"zoo_{mode}": (ZOO_SETUP, props, ZOO_ROWS) for mode, props in ZOO_MODES.items()},
    "geometric_unknown": (GEO_SETUP, {"include.unknown.datatypes": "true"}, GEO_WORKLOAD),
    "postgis": (GIS_SETUP, {}, GIS_WORKLOAD),
    "bc_connect": (BC_SETUP, {"time.precision.mode": "connect"}, BC_WORKLOAD),
    "bc_adaptive": (BC_SETUP, {}, BC_WORKLOAD),
    "arrays_unknown": (ARR_SETUP, {"include.unknown.datatypes": "true"}, ARR_WORKLOAD),
    "null_defaults": (ND_SETUP, ND_PROPS, ND_WORKLOAD),
    "txmeta": SCENARIOS["txmeta"],
}


@pytest.mark.parametrize("scenario", sorted(STRING_SCENARIOS))
def test_string_converter_streaming(pg: PostgresCluster, dbname: str, tmp_path: Path, scenario: str) -> None:
    setup, props, workload = STRING_SCENARIOS[scenario]
    check(scenario, *run_both_converted(pg, dbname, tmp_path, setup, props, workload, TEXT,
                                        record_as=f"string_{scenario}" if scenario in RECORD else None))


@pytest.mark.parametrize("mode", ["defaults", "connect_map", *sorted(ZOO_MODES)])
def test_string_converter_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    if mode in ZOO_MODES:
        setup = ";".join([ZOO_SETUP, *(r for r in ZOO_ROWS if r.startswith("INSERT"))])
        props = ZOO_MODES[mode]
    else:
        setup = ";".join([TYPES_SETUP, MORE_SETUP, *TYPES_WORKLOAD[:4], *MORE_WORKLOAD])
        props = {} if mode == "defaults" else {"time.precision.mode": "connect", "hstore.handling.mode": "map",
                                               **UNWRAP_HEADERS}
    ours, theirs, error = run_both_converted(pg, dbname, tmp_path, setup, props, [], TEXT, snapshot=True)
    check(f"snapshot {mode}", ours, theirs, error, snapshot=True)


PRIM_SETUP = ("CREATE TABLE prim (id bigint PRIMARY KEY, i2 smallint, i4 int, f4 real, f8 double precision,"
              " b boolean, by bytea, t text)")
PRIM_WORKLOAD = [
    "INSERT INTO prim VALUES (1, -32768, 2147483647, 1.5, 1e-300, true, '\\x00ff10', 'x'),"
    " (2, 7, -1, 'NaN', 'Infinity', false, '', ''), (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "UPDATE prim SET f8 = -0.0, f4 = '-Infinity', i4 = 0 WHERE id = 2",
    "DELETE FROM prim WHERE id = 1",
]


def _extract(field: str, key_field: str = "id") -> dict[str, str]:
    return {"transforms": "u,k,v", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.k.type": "org.apache.kafka.connect.transforms.ExtractField$Key",
            "transforms.k.field": key_field,
            "transforms.v.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
            "transforms.v.field": field}


_C = "org.apache.kafka.connect.converters."
# (value column, value converter): a primitive value reaches a primitive converter through ExtractField.
PRIMITIVES = {"Double": "f8", "Float": "f4", "Integer": "i4", "Short": "i2", "Boolean": "b"}


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_primitive_converters(pg: PostgresCluster, dbname: str, tmp_path: Path, name: str) -> None:
    sides = {"key": {"class": _C + "LongConverter"}, "value": {"class": f"{_C}{name}Converter"},
             "header": {"class": JSON}}
    check(name, *run_both_converted(pg, dbname, tmp_path, PRIM_SETUP, _extract(PRIMITIVES[name]), PRIM_WORKLOAD,
                                    sides, record_as=f"primitive_{name}"))


# A converter that cannot write Debezium's change events: Connect's task fails on the first record; pgcdc stops
# with one line there.
FAILING = {
    "integer_value": {"value": {"class": _C + "IntegerConverter"}},
    "long_key_of_text": {"key": {"class": _C + "LongConverter"}},
    "boolean_value": {"value": {"class": _C + "BooleanConverter"}},
    "kafka_bytearray_value": {"value": {"class": _C + "ByteArrayConverter"}},
    "binarydata_no_delegate": {"value": {"class": "io.debezium.converters.BinaryDataConverter"}},
    # a header converter gets no delegate (HeaderConverter.configure(Map)): the string headers fail
    "bytearray_headers": {"header": {"class": "io.debezium.converters.ByteArrayConverter",
                                     "delegate.converter.type": STRING}},
}


@pytest.mark.parametrize("case", sorted(FAILING))
def test_converters_that_fail_on_change_events(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                               case: str) -> None:
    sides = {"key": {"class": JSON}, "value": {"class": JSON}, "header": {"class": JSON}, **FAILING[case]}
    check(case, *run_both_converted(pg, dbname, tmp_path, PRIM_SETUP, {}, PRIM_WORKLOAD, sides, pgcdc_fails=True,
                                    record_as=f"failing_{case}"), fails=True)


_D = "io.debezium.converters."
BINARY = {
    # bytes through (an outbox-like payload column), a struct key to the delegate
    "binarydata_bytes_delegate_string": ({"key": {"class": _D + "BinaryDataConverter",
                                                  "delegate.converter.type": STRING},
                                          "value": {"class": _D + "BinaryDataConverter"}}, _extract("by")),
    # Debezium's ByteArrayConverter takes a byte[] only: a bytea value (a ByteBuffer) goes to the delegate
    "bytearray_bytes": ({"key": {"class": _D + "ByteArrayConverter", "delegate.converter.type": JSON,
                                 "delegate.converter.type.schemas.enable": "false"},
                         "value": {"class": _D + "ByteArrayConverter", "delegate.converter.type": STRING}},
                        _extract("by")),
    "kafka_bytearray_bytes": ({"value": {"class": _C + "ByteArrayConverter"}}, _extract("by")),
    # change events to the delegate, JsonConverter with and without schemas
    "binarydata_envelope_json": ({"key": {"class": _D + "BinaryDataConverter", "delegate.converter.type": JSON},
                                  "value": {"class": _D + "BinaryDataConverter", "delegate.converter.type": JSON,
                                            "delegate.converter.type.schemas.enable": "false"}}, {}),
}


@pytest.mark.parametrize("case", sorted(BINARY))
def test_debezium_binary_converters(pg: PostgresCluster, dbname: str, tmp_path: Path, case: str) -> None:
    sides, props = BINARY[case]
    sides = {"key": {"class": JSON}, "value": {"class": JSON}, "header": {"class": JSON}, **sides}
    check(case, *run_both_converted(pg, dbname, tmp_path, PRIM_SETUP, props, PRIM_WORKLOAD, sides,
                                    record_as=f"debezium_{case}"))


@pytest.mark.parametrize("encodings", [("UTF-16", "ISO-8859-1"), ("US-ASCII", "UTF8")], ids=["utf16_latin1", "ascii"])
def test_string_converter_encodings(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                    encodings: tuple[str, str]) -> None:
    """converter.encoding: Java's charsets (UTF-16 with its big-endian byte order mark; a character the charset
    lacks written as `?`)."""
    sides = {"key": {"class": STRING, "converter.encoding": encodings[0]},
             "value": {"class": STRING, "converter.encoding": encodings[1]}, "header": {"class": SIMPLE_HEADER}}
    ours, theirs, error = run_both_converted(pg, dbname, tmp_path, TYPES_SETUP, {}, TYPES_WORKLOAD[:2], sides,
                                             record_as=f"string_encoding_{encodings[0]}")
    # compared as bytes: the masks read UTF-8 text, and these records have no byte[] nor processing time to mask
    # beyond the envelope's, which is masked in the decoded text only where it decodes
    assert [r["key"] for r in ours] == [r["key"] for r in theirs]
    check("encodings", ours, theirs, error)
