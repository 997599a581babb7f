"""Confluent's ProtobufConverter through a Connect worker (the oracle: Debezium 3.6's SourceRecords converted by
Confluent 7.0.16's ProtobufConverter) and pgcdc's: the same registered schema text and, after the 5-byte header
(magic byte, schema id), the same message-index array and Protobuf bytes, record by record, for the type zoo in
every handling mode and the type scenarios, streaming and snapshot.

Confluent's converter throws on a null array element (ProtobufData hands the protobuf runtime a list holding a
null: NullPointerException), which fails a Connect worker's task; the oracle records the failure and goes on, and
so does the pgcdc side here (each record converted on its own), so both sides must fail on the same records.
A real pgcdc run stops there with one line (the last test).

The envelope's processing timestamps and, for snapshot records, the source fields of each connector's own slot
are masked by parsing both messages, clearing those fields and serializing again; each side's bytes must first
serialize back to themselves, so the masking hides nothing else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pgcdc.converters.sink import ConvertingSink, _Side, make_converters
from pgcdc.errors import ConversionError
from pgcdc.local import PostgresCluster
from tests.conformance.compare import SNAPSHOT_FIELDS
from tests.conformance.oracle import PROTOBUF, start_oracle, stop_oracle
from tests.conformance.test_avro_vs_debezium import SCRUB_SETUP, SCRUB_WORKLOAD, RawSink, _lines
from tests.conformance.test_debezium_streaming import (MORE_SETUP, MORE_WORKLOAD, SCENARIOS, TYPES_SETUP,
                                                        TYPES_WORKLOAD, run_workload, slot_active)
from tests.conformance.test_toast_placeholders import MODES as TOAST_MODES
from tests.conformance.test_toast_placeholders import SETUP as TOAST_SETUP
from tests.conformance.test_toast_placeholders import WORKLOAD as TOAST_WORKLOAD
from tests.conformance.test_types_more import BC_SETUP, BC_WORKLOAD, TIME_MODES
from tests.conformance.test_zoo_vs_debezium import (ARRAYS_ROWS, DOMAIN_ARRAYS, DOMAIN_VALUES, MODES,
                                                     NUMERIC_VALUES, ROWS, SETUP)
from tests.harness import Running, make_config, wait_for


class ConvertEachSink(RawSink):
    """Converts each record's key and value on its own, as the oracle does, writing a conversion error in the
    record's line instead of stopping."""

    def __init__(self, path: Path, key: Any, value: Any) -> None:
        super().__init__(path)
        self.sides = {"key": _Side(key, "key"), "value": _Side(value, "value")}

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        line: dict[str, Any] = {"topic": topic}
        for side, data in (("key", key), ("value", value)):
            try:
                out = self.sides[side](topic, data)
                line[side] = None if out is None else out.hex()
            except ConversionError as exc:
                line[side], line[f"{side}_error"] = None, str(exc)
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()


def run_both(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
             workload: list[str], snapshot: bool = False, options: dict[str, str] | None = None
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """`options`: the ProtobufConverter's own options, for both sides' converters on both connectors."""
    options = options or {}
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial" if snapshot else "no_data", **props}
    oracle = start_oracle({"name": "oracle", "avro": {"class": PROTOBUF, "key": options, "value": options}, "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{
            **common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}", "publication.name": f"pgcdcpub_{dbname}",
            "key.converter": PROTOBUF, "value.converter": PROTOBUF,
            "converter.schema.registry.url": "mock://conformance", **{f"converter.{k}": v for k, v in options.items()}})
        key_conv, value_conv, _ = make_converters(config, lambda: False)
        sink = ConvertEachSink(ours_path, key_conv, value_conv)
        with Running(config, sink=ConvertingSink(sink, None, None)):  # converting already: not wrapped again
            run_workload(pg, dbname, workload, lambda: len(_lines(theirs_path)), lambda: len(_lines(ours_path)))
    finally:
        stop_oracle(oracle, theirs_path)
    ours = _lines(ours_path)
    classes: dict[str, Any] = {}  # registered text -> pgcdc's message class for it
    for side in sink.sides.values():
        for prepared in side.prepared.values():
            classes[prepared.form.text] = prepared.form.message_class  # type: ignore[attr-defined]
    for rec in ours:
        for side, conv in (("key", key_conv), ("value", value_conv)):
            data = rec[side]
            assert conv is not None
            rec[f"{side}_schema"] = None if data is None else conv.client.get_schema(  # type: ignore[attr-defined]
                int(data[2:10], 16)).schema_str
    return ours, _lines(theirs_path), classes


def _masked(data: bytes, cls: Any, snapshot_fields: tuple[str, ...]) -> bytes:
    msg = cls()
    msg.ParseFromString(data)
    assert msg.SerializeToString() == data, "Protobuf bytes that are not what their message serializes to"
    fields = {f.name for f in msg.DESCRIPTOR.fields}
    if "status" in fields and msg.status == "END":  # as compare.mask: a Java identity hash
        for dc in msg.data_collections:
            dc.data_collection = re.sub(r"@[0-9a-f]+$", "@<hash>", dc.data_collection)
        ordered = sorted(dc.SerializeToString() for dc in msg.data_collections)
        del msg.data_collections[:]
        for raw in ordered:
            msg.data_collections.add().ParseFromString(raw)
    if "op" in fields:
        for k in ("ts_ms", "ts_us", "ts_ns"):
            if k in fields:
                msg.ClearField(k)
        if msg.op == "r":
            for k in snapshot_fields:
                msg.source.ClearField(k)
    return bytes(msg.SerializeToString())


def differences(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], classes: dict[str, Any],
                snapshot: bool) -> list[str]:
    fields = SNAPSHOT_FIELDS if snapshot else ()
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        where = f"record {i} ({b['topic']})"
        if a["topic"] != b["topic"]:
            problems.append(f"{where}: topic {a['topic']} != {b['topic']}")
            continue
        for side in ("key", "value"):
            if (f"{side}_error" in a) != (f"{side}_error" in b):
                problems.append(f"{where}: {side} error: pgcdc {a.get(f'{side}_error')}; "
                                f"Debezium {b.get(f'{side}_error')}")
                continue
            x, y = a[side], b[side]
            if (x is None) != (y is None):
                problems.append(f"{where}: {side} {x} != {y}")
                continue
            if x is None:
                continue
            ta, tb = a[f"{side}_schema"], b[f"{side}_schema"]
            if ta != tb:
                at = next((j for j, (p, q) in enumerate(zip(ta, tb)) if p != q), min(len(ta), len(tb)))
                problems.append(f"{where}: {side} schema differs at {at}\n  ours   …{ta[max(0, at - 120):at + 80]}"
                                f"\n  theirs …{tb[max(0, at - 120):at + 80]}")
                continue
            if x[:2] != "00" or y[:2] != "00" or x[10:12] != "00" or y[10:12] != "00":
                problems.append(f"{where}: {side} magic byte / message index {x[:12]} / {y[:12]}")
                continue
            cls = classes[ta]
            if _masked(bytes.fromhex(x[12:]), cls, fields) != _masked(bytes.fromhex(y[12:]), cls, fields):
                problems.append(f"{where}: {side} bytes\n  ours   {x[12:]}\n  theirs {y[12:]}")
    return problems


def assert_same(label: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], classes: dict[str, Any],
                snapshot: bool = False) -> None:
    problems = differences(ours, theirs, classes, snapshot)
    schemas = {r[f"{s}_schema"] for r in theirs for s in ("key", "value") if r.get(f"{s}_schema")}
    failed = sum(1 for r in theirs if "value_error" in r or "key_error" in r)
    print(f"{label}: {len(theirs)} Debezium records ({failed} refused by the converter), {len(ours)} pgcdc records, "
          f"{len(schemas)} schemas, {len(problems)} differences")
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_protobuf_zoo_matches_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str,
                                        phase: str) -> None:
    if phase == "snapshot":
        inserts = [row for row in ROWS if row.startswith("INSERT")]
        ours, theirs, classes = run_both(pg, dbname, tmp_path, ";".join([SETUP, *inserts]), MODES[mode], [],
                                         snapshot=True)
    else:
        ours, theirs, classes = run_both(pg, dbname, tmp_path, SETUP, MODES[mode], ROWS)
    assert_same(f"zoo {mode} {phase}", ours, theirs, classes, snapshot=phase == "snapshot")


# Confluent's converter refuses most zoo rows (their arrays hold NULLs): the same values without NULL elements, so
# the numeric values and domain arrays are compared as bytes too.
VALUE_ROWS = [f"INSERT INTO nums VALUES ({i}, '{v}', '1.5', {i}, '{{{v},{v}}}', '{{1.5,-2}}')"
              for i, v in enumerate(NUMERIC_VALUES, 1)] + [
    "INSERT INTO doms VALUES (1, " + ", ".join(f"'{v}'" for v in DOMAIN_VALUES.values()) + ", "
    + ", ".join(f"ARRAY['{DOMAIN_VALUES[d]}'::{d}]" for d in DOMAIN_ARRAYS) + ")",
    ARRAYS_ROWS[5]]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_protobuf_zoo_values_match_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs, classes = run_both(pg, dbname, tmp_path, SETUP, MODES[mode], VALUE_ROWS)
    assert_same(f"zoo values {mode}", ours, theirs, classes)


# The type scenarios in every time, decimal, binary, interval and hstore mode, and the record kinds around them.
PROTOBUF_SCENARIOS = {
    **{name: SCENARIOS[name] for name in SCENARIOS
       if name.startswith("types") or name in ("ops", "txmeta", "toast_defaults_ddl")},
    # Dates and timestamps before year 1 and around the 1582 cutover: in connect mode google.type.Date and
    # google.protobuf.Timestamp, as Java's calendar and Timestamps.fromMillis make them.
    **{f"bc_{mode}": (BC_SETUP, TIME_MODES[mode], BC_WORKLOAD) for mode in ("adaptive", "connect")},
    # Unchanged TOASTed values of every type: a placeholder where the field takes one, null elsewhere.
    **{f"toast_placeholders_{mode}": (TOAST_SETUP, {"include.unknown.datatypes": "true", **props}, TOAST_WORKLOAD)
       for mode, props in TOAST_MODES.items()},
}


@pytest.mark.parametrize("scenario", sorted(PROTOBUF_SCENARIOS))
def test_protobuf_streaming_matches_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                              scenario: str) -> None:
    setup, props, workload = PROTOBUF_SCENARIOS[scenario]
    ours, theirs, classes = run_both(pg, dbname, tmp_path, setup, props, workload)
    assert_same(scenario, ours, theirs, classes)


@pytest.mark.parametrize("props", [{}, {"decimal.handling.mode": "string", "time.precision.mode": "connect",
                                        "binary.handling.mode": "base64", "interval.handling.mode": "string",
                                        "hstore.handling.mode": "map"}], ids=["defaults", "modes"])
def test_protobuf_snapshot_matches_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                             props: dict[str, str]) -> None:
    setup = ";".join([TYPES_SETUP, MORE_SETUP, *TYPES_WORKLOAD[:4], *MORE_WORKLOAD])
    ours, theirs, classes = run_both(pg, dbname, tmp_path, setup, props, ["INSERT INTO more (id) VALUES (99)"],
                                     snapshot=True)
    assert_same("snapshot types", ours, theirs, classes, snapshot=True)


def test_a_null_array_element_stops_pgcdc_as_it_fails_confluents_converter(pg: PostgresCluster,
                                                                            dbname: str) -> None:
    """A NULL element in an array column: Confluent's converter throws (measured above: NullPointerException);
    pgcdc stops with one line naming the side, the topic and the field, having written nothing for it."""
    pg.execute("CREATE TABLE arr (id int PRIMARY KEY, a int[]); INSERT INTO arr VALUES (1, '{1,NULL}')", dbname)
    config = make_config(pg, dbname, **{"topic.prefix": "dbserver1", "snapshot.mode": "initial",
                                        "value.converter": PROTOBUF, "value.converter.schema.registry.url": "mock://u"})
    inner = RawSink(Path("/dev/null"))
    running = Running(config, sink=ConvertingSink(inner, *make_converters(config, lambda: False)))
    running.thread.start()
    running.thread.join(60)
    assert isinstance(running.error, ConversionError)
    message = str(running.error)
    assert message == ("value.converter: topic dbserver1.public.arr: ProtobufConverter cannot write a record: "
                       "field a: a null array element (Confluent's converter fails on it)"), message


# The converter's own options, each set on both connectors' converters: the zoo and the types table with rows at
# the snapshot (the values without NULL elements, then zeros, empty text and bytes, the other integer limits and
# -Infinity, which a wrapper or an `optional` field writes where a plain proto3 field writes nothing), then the
# zoo's rows (NULL elements, NULL arrays, NaN) and the types workload streamed; one handling mode per option set.
ZERO_ROWS = ["INSERT INTO t_types (i2, i4, i8, n, nv, r, d, b, t, vc, c, by, u, ai, at, nn) VALUES (0, 0, 0, 0, 0, 0, "
             "'-Infinity', false, '', '', '', '', '00000000-0000-0000-0000-000000000000', '{0}', '{\"\"}', 0)",
             "INSERT INTO t_types (i2, i4, i8, r, d) VALUES (32767, -2147483648, 9223372036854775807, '-Infinity', "
             "-0.0)"]
OPTION_SETUP = ";".join([SETUP, TYPES_SETUP, *(r.replace("VALUES (", "VALUES (1000 + ", 1) for r in VALUE_ROWS),
                         *TYPES_WORKLOAD[:4], *ZERO_ROWS])
OPTION_WORKLOAD = [*ROWS, *TYPES_WORKLOAD, *ZERO_ROWS]
PROTOBUF_OPTION_SCENARIOS: dict[str, tuple[str, dict[str, str], list[str], dict[str, str]]] = {
    "wrapper_for_nullables": (OPTION_SETUP, MODES["precise_bytes_json"], OPTION_WORKLOAD,
                              {"wrapper.for.nullables": "true"}),
    "optional_for_nullables": (OPTION_SETUP, {**MODES["double_hex_map"], "time.precision.mode": "connect"},
                               OPTION_WORKLOAD, {"optional.for.nullables": "true"}),
    # enhanced.protobuf.schema.support, optional.for.proto2 and reference.lookup.only: read back only, or nothing to
    # look up without references: the same schemas and bytes.
    "wrapper_optional_enhanced": (OPTION_SETUP, MODES["precise_urlsafe_map"], OPTION_WORKLOAD,
                                  {"wrapper.for.nullables": "true", "optional.for.nullables": "true",
                                   "enhanced.protobuf.schema.support": "true", "optional.for.proto2": "false",
                                   "reference.lookup.only": "true"}),
    # use.latest.version with auto.register.schemas (the default): Confluent's registers, so the record's schema.
    "scrub_invalid_names": (SCRUB_SETUP, {}, SCRUB_WORKLOAD, {"scrub.invalid.names": "true",
                                                              "wrapper.for.nullables": "true",
                                                              "use.latest.version": "true"}),
}


@pytest.mark.parametrize("scenario", sorted(PROTOBUF_OPTION_SCENARIOS))
def test_protobuf_converter_options_match_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                   scenario: str) -> None:
    setup, props, workload, options = PROTOBUF_OPTION_SCENARIOS[scenario]
    ours, theirs, classes = run_both(pg, dbname, tmp_path, setup, props, workload, snapshot=True, options=options)
    assert_same(scenario, ours, theirs, classes, snapshot=True)
