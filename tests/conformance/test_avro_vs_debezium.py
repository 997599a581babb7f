"""Confluent's AvroConverter through a Connect worker (the oracle: Debezium 3.6's SourceRecords converted by
Confluent 7.0.16's AvroConverter) and pgcdc's: the same registered schema text and, after the 5-byte
header (magic byte, schema id), the same Avro bytes, record by record, for the type zoo in every handling mode,
streaming and snapshot.

Ids differ by nature (two registries); so do the envelope's processing timestamps (`ts_ms`/`ts_us`/`ts_ns`),
and for snapshot records the source fields of each connector's own slot (compare.SNAPSHOT_FIELDS). Those are
masked by decoding both records with the registered schema, zeroing them and encoding again; each side's
bytes must first decode and encode back to themselves, so the masking hides nothing else.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import fastavro
import pytest

from pgcdc.converters.avro_schema import writer_schema
from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.local import PostgresCluster
from tests.conformance.test_toast_placeholders import MODES as TOAST_MODES
from tests.conformance.test_toast_placeholders import SETUP as TOAST_SETUP
from tests.conformance.test_toast_placeholders import WORKLOAD as TOAST_WORKLOAD
from tests.conformance.compare import SNAPSHOT_FIELDS
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_null_defaults_vs_debezium import PROPS as ND_PROPS
from tests.conformance.test_null_defaults_vs_debezium import SETUP as ND_SETUP
from tests.conformance.test_null_defaults_vs_debezium import WORKLOAD as ND_WORKLOAD
from tests.conformance.test_debezium_streaming import (MORE_SETUP, MORE_WORKLOAD, SCENARIOS, TYPES_SETUP,
                                                        TYPES_WORKLOAD, run_workload, slot_active)
from tests.conformance.test_types_more import (ARR_SETUP, ARR_WORKLOAD, BC_SETUP, BC_WORKLOAD, GEO_SETUP,
                                               GEO_WORKLOAD, GIS_SETUP, GIS_WORKLOAD, TIME_MODES)
from tests.harness import Running, make_config, wait_for

AVRO = "io.confluent.connect.avro.AvroConverter"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class RawSink:
    """Records as JSON lines with key and value as hex, so both sides are read the same way."""

    def __init__(self, path: Path) -> None:
        self.out = open(path, "w")

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.out.write(json.dumps({"topic": topic, "key": key.hex() if key is not None else None,
                                   "value": value.hex() if value is not None else None}) + "\n")
        self.out.flush()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.out.close()


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().split("\n")[:-1]
            if line.strip() and '"topic": "__debezium-heartbeat' not in line]


def run_both_avro(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                  workload: list[str], snapshot: bool = False, options: dict[str, str] | None = None,
                  ours_props: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`options`: the AvroConverter's own options, for both sides' converters on both connectors; `ours_props`:
    pgcdc's connector properties that are not Debezium's (a signal table of its own)."""
    options = options or {}
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial" if snapshot else "no_data", **props}
    oracle = start_oracle({"name": "oracle", "avro": {"key": options, "value": options}, "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{
            **common, **(ours_props or {}), "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
            "publication.name": f"pgcdcpub_{dbname}",
            "key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": "mock://conformance",
            **{f"converter.{k}": v for k, v in options.items()}})
        key_conv, value_conv, _ = make_converters(config, lambda: False)
        sink = ConvertingSink(RawSink(ours_path), key_conv, value_conv)
        with Running(config, sink=sink):
            run_workload(pg, dbname, workload, lambda: len(_lines(theirs_path)), lambda: len(_lines(ours_path)))
    finally:
        stop_oracle(oracle, theirs_path)
    ours = _lines(ours_path)
    for rec in ours:  # the schema text each record's id stands for, from the registry it was registered in
        for side, conv in (("key", key_conv), ("value", value_conv)):
            data = rec[side]
            assert conv is not None
            rec[f"{side}_schema"] = None if data is None else conv.client.get_schema(  # type: ignore[attr-defined]
                int(data[2:10], 16)).schema_str
    return ours, _lines(theirs_path)


def _encode(text: str, datum: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer_schema(text)), datum)
    return out.getvalue()


def _masked(data: bytes, text: str, snapshot_fields: tuple[str, ...]) -> bytes:
    parsed = fastavro.parse_schema(writer_schema(text))
    datum = fastavro.schemaless_reader(io.BytesIO(data), parsed, None)
    assert _encode(text, datum) == data, "Avro bytes that are not what their datum encodes to"
    if isinstance(datum, dict) and datum.get("status") == "END":  # as compare.mask: a Java identity hash
        collections = datum.get("data_collections") or []
        for dc in collections:
            dc["data_collection"] = re.sub(r"@[0-9a-f]+$", "@<hash>", dc["data_collection"])
        collections.sort(key=lambda dc: dc["data_collection"])
    if isinstance(datum, dict) and (set(datum) == {"id"} or "aggregate_type" in datum):  # a notification's
        if _UUID.match(str(datum["id"])):  # random id (an incremental snapshot's is its signal's)
            datum["id"] = "<uuid>"
        if "timestamp" in datum:
            datum["timestamp"] = 0
        if isinstance(datum.get("additional_data"), dict):  # HashMap order, which moves between JVMs
            datum["additional_data"] = dict(sorted(datum["additional_data"].items()))
    if isinstance(datum, dict) and "op" in datum:
        for k in ("ts_ms", "ts_us", "ts_ns"):
            if k in datum:
                datum[k] = 0
        if datum.get("op") == "r":
            for k in snapshot_fields:
                datum["source"][k] = None if k in ("txId", "lsn", "sequence") else 0
    return _encode(text, datum)


def avro_differences(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], snapshot: bool) -> list[str]:
    fields = SNAPSHOT_FIELDS if snapshot else ()
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        where = f"record {i} ({b['topic']})"
        if a["topic"] != b["topic"]:
            problems.append(f"{where}: topic {a['topic']} != {b['topic']}")
            continue
        for side in ("key", "value"):
            x, y = a[side], b[side]
            if (x is None) != (y is None):
                problems.append(f"{where}: {side} {x} != {y}")
                continue
            if x is None:
                continue
            ta, tb = a[f"{side}_schema"], b[f"{side}_schema"]
            if ta != tb:
                at = next((j for j, (p, q) in enumerate(zip(ta, tb)) if p != q), min(len(ta), len(tb)))
                problems.append(f"{where}: {side} schema differs at {at}\n  ours   …{ta[max(0, at - 80):at + 80]}"
                                f"\n  theirs …{tb[max(0, at - 80):at + 80]}")
                continue
            if x[:2] != "00" or y[:2] != "00":
                problems.append(f"{where}: {side} magic byte {x[:2]} / {y[:2]}")
            text = b[f"{side}_schema"]
            if _masked(bytes.fromhex(x[10:]), text, fields) != _masked(bytes.fromhex(y[10:]), text, fields):
                problems.append(f"{where}: {side} bytes\n  ours   {x[10:]}\n  theirs {y[10:]}")
    return problems


def assert_same_avro(label: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
                     snapshot: bool = False) -> None:
    problems = avro_differences(ours, theirs, snapshot)
    print(f"{label}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:20])


# The type zoo in every handling mode, and the record kinds around it: tombstones, key changes, keyless tables,
# truncates, logical-decoding messages, transaction metadata, column defaults and schema changes mid-stream.
AVRO_SCENARIOS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    **{name: SCENARIOS[name] for name in SCENARIOS if name.startswith("types")},
    **{name: SCENARIOS[name] for name in ("ops", "txmeta", "toast_defaults_ddl", "propagate_source_types")},
    **{name: SCENARIOS[name] for name in ("name_adjustment_avro", "name_adjustment_avro_unicode")},
    "geometric_unknown": (GEO_SETUP, {"include.unknown.datatypes": "true"}, GEO_WORKLOAD),
    "postgis": (GIS_SETUP, {}, GIS_WORKLOAD),
    **{f"bc_{mode}": (BC_SETUP, props, BC_WORKLOAD) for mode, props in TIME_MODES.items()},
    "arrays_unknown": (ARR_SETUP, {"include.unknown.datatypes": "true"}, ARR_WORKLOAD),
    "null_defaults": (ND_SETUP, ND_PROPS, ND_WORKLOAD),  # NULLs in nullable columns with DEFAULTs
    # Unchanged TOASTed values of every type: a placeholder where the field takes one, null elsewhere.
    **{f"toast_placeholders_{mode}": (TOAST_SETUP, {"include.unknown.datatypes": "true", **TOAST_MODES[mode]},
                                      TOAST_WORKLOAD)
       for mode in TOAST_MODES},
    # Defaults JSON has no number for (a string in the Avro schema), on columns and a domain, NOT NULL too.
    "special_float_defaults": (
        "CREATE DOMAIN d_f8 AS float8 DEFAULT 'Infinity'; CREATE TABLE fd (id int PRIMARY KEY,"
        " a float8 DEFAULT 'NaN', b float8 DEFAULT 'Infinity', c real DEFAULT '-Infinity', d float8 NOT NULL"
        " DEFAULT 'NaN', e real NOT NULL DEFAULT 'NaN', f float8 DEFAULT '-0', g d_f8)",
        {}, ["INSERT INTO fd (id) VALUES (1)", "INSERT INTO fd VALUES (2, 1, 2, 3, 4, 5, 6, 7)",
             "UPDATE fd SET a = 'NaN' WHERE id = 2", "DELETE FROM fd"]),
}


@pytest.mark.parametrize("scenario", sorted(AVRO_SCENARIOS))
def test_avro_streaming_matches_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path, scenario: str) -> None:
    setup, props, workload = AVRO_SCENARIOS[scenario]
    ours, theirs = run_both_avro(pg, dbname, tmp_path, setup, props, workload)
    assert_same_avro(scenario, ours, theirs)


@pytest.mark.parametrize("props", [{}, {"decimal.handling.mode": "string", "time.precision.mode": "connect",
                                        "binary.handling.mode": "base64", "interval.handling.mode": "string",
                                        "hstore.handling.mode": "map"}], ids=["defaults", "modes"])
def test_avro_snapshot_matches_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                         props: dict[str, str]) -> None:
    setup = ";".join([TYPES_SETUP, MORE_SETUP, *TYPES_WORKLOAD[:4], *MORE_WORKLOAD])
    ours, theirs = run_both_avro(pg, dbname, tmp_path, setup, props, ["INSERT INTO more (id) VALUES (99)"],
                                 snapshot=True)
    assert_same_avro("snapshot types", ours, theirs, snapshot=True)


def test_a_name_avro_refuses_stops_pgcdc_as_it_stops_confluents_converter(pg: PostgresCluster, dbname: str) -> None:
    """A column named `c🎉` (tests/conformance/test_types_more.py's unicode table): Confluent's converter fails
    the task with Avro's `SchemaParseException: Illegal character in: c🎉` (measured); pgcdc stops with one
    line naming the side, the topic and Avro's reason, having written nothing for that table."""
    from pgcdc.errors import ConversionError
    from tests.conformance.test_types_more import UNI_SETUP

    pg.execute(UNI_SETUP + "; INSERT INTO uni (k, \"c🎉\") VALUES ('1', 'x')", dbname)
    config = make_config(pg, dbname, **{"topic.prefix": "dbserver1", "snapshot.mode": "initial",
                                        "value.converter": AVRO, "value.converter.schema.registry.url": "mock://u"})
    inner = RawSink(Path("/dev/null"))
    running = Running(config, sink=ConvertingSink(inner, *make_converters(config, lambda: False)))
    running.thread.start()
    running.thread.join(60)
    assert isinstance(running.error, ConversionError)
    message = str(running.error)
    assert message == ("value.converter: topic dbserver1.public.uni: no AvroConverter form of its schema: "
                       "Illegal character in: c🎉 (field.name.adjustment.mode=avro and "
                       "schema.name.adjustment.mode=avro, or the converter's scrub.invalid.names=true, make names "
                       "Avro's)"), message
    assert "\n" not in message


# The converter's own options that change the schema (`connect.meta.data`, `scrub.invalid.names`) or are taken
# with the schemas unchanged (`enhanced.avro.schema.support`), each set on both connectors' converters; rows in
# the table at the snapshot, then the workload streamed.
SCRUB_SETUP = ('CREATE SCHEMA "1s"; CREATE TABLE "1s"."my-table" ("k-1" int PRIMARY KEY, "c🎉" text, "1st" int,'
               ' "a-b" int, "é" int, "_ok" int, "x.y" int, "ab%" int, "Ü2" int, "9" int, "t~" text);'
               ' INSERT INTO "1s"."my-table" VALUES (1, \'🎉\', 1, 2, 3, 4, 5, 6, 7, 8, \'~\')')
SCRUB_WORKLOAD = ["INSERT INTO \"1s\".\"my-table\" VALUES (2, NULL, -1, 0, NULL, 2147483647, -2147483648, 1, 1, 1, '')",
                  "UPDATE \"1s\".\"my-table\" SET \"c🎉\" = 'x', \"k-1\" = 3 WHERE \"k-1\" = 2",
                  "DELETE FROM \"1s\".\"my-table\" WHERE \"k-1\" = 1"]
AVRO_OPTION_SCENARIOS: dict[str, tuple[str, dict[str, str], list[str], dict[str, str]]] = {
    "connect_meta_data_false": (";".join([ND_SETUP, *ND_WORKLOAD[:4]]), ND_PROPS, ND_WORKLOAD[4:],
                                {"connect.meta.data": "false"}),
    "connect_meta_data_false_modes": (";".join([TYPES_SETUP, *TYPES_WORKLOAD[:4]]),
                                      SCENARIOS["types_double_micro_hex"][1], TYPES_WORKLOAD[4:],
                                      {"connect.meta.data": "false"}),
    # with use.latest.version, which Confluent's serializer ignores while auto.register.schemas is true (default)
    "enhanced_avro_schema_support": (";".join([MORE_SETUP, *MORE_WORKLOAD[:1]]), SCENARIOS["types_more_modes"][1],
                                     MORE_WORKLOAD[1:], {"enhanced.avro.schema.support": "true",
                                                         "avro.remove.java.properties": "true",
                                                         "use.latest.version": "true"}),
    "normalize_schemas": (";".join([ND_SETUP, *ND_WORKLOAD[:4]]), ND_PROPS, ND_WORKLOAD[4:],
                          {"normalize.schemas": "true"}),
    # NaN and infinite defaults of nullable doubles and reals: they stay (measured)
    "normalize_schemas_special_defaults": (AVRO_SCENARIOS["special_float_defaults"][0] + "; INSERT INTO fd (id)"
                                           " VALUES (0)", {}, AVRO_SCENARIOS["special_float_defaults"][2],
                                           {"normalize.schemas": "true"}),
    "scrub_invalid_names": (SCRUB_SETUP, {}, SCRUB_WORKLOAD, {"scrub.invalid.names": "true"}),
}


@pytest.mark.parametrize("scenario", sorted(AVRO_OPTION_SCENARIOS))
def test_avro_converter_options_match_confluent(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                               scenario: str) -> None:
    setup, props, workload, options = AVRO_OPTION_SCENARIOS[scenario]
    ours, theirs = run_both_avro(pg, dbname, tmp_path, setup, props, workload, snapshot=True, options=options)
    assert_same_avro(scenario, ours, theirs, snapshot=True)


def test_a_scrubbed_name_met_twice_stops_pgcdc_as_it_fails_confluents_converter(pg: PostgresCluster, dbname: str,
                                                                                tmp_path: Path) -> None:
    """`a-b` and `a b` both scrub to `a_b`: Confluent's converter fails the record with Avro's duplicate-field
    error (measured here, from the oracle's line); pgcdc stops with one line carrying the same reason, having
    written nothing for that table."""
    from pgcdc.errors import ConversionError

    pg.execute('CREATE TABLE dup (id int PRIMARY KEY, "a-b" int, "a b" int); INSERT INTO dup VALUES (1, 2, 3)', dbname)
    options = {"scrub.invalid.names": "true"}
    theirs_path = tmp_path / "debezium.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial"}
    oracle = start_oracle({"name": "oracle", "avro": {"key": options, "value": options}, "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        wait_for(lambda: any(r["topic"].endswith(".dup") for r in _lines(theirs_path)), 120, "Debezium's record")
    finally:
        stop_oracle(oracle, theirs_path)
    theirs = next(r for r in _lines(theirs_path) if r["topic"].endswith(".dup"))
    assert theirs["value"] is None and theirs["value_error"].startswith("org.apache.avro.AvroRuntimeException: ")
    reason = theirs["value_error"].split(": ", 1)[1]
    config = make_config(pg, dbname, **{**common, "value.converter": AVRO, "value.converter.schema.registry.url":
                                        "mock://dup", "value.converter.scrub.invalid.names": "true"})
    ours_path = tmp_path / "pgcdc.jsonl"
    running = Running(config, sink=ConvertingSink(RawSink(ours_path), *make_converters(config, lambda: False)))
    running.thread.start()
    running.thread.join(60)
    assert isinstance(running.error, ConversionError)
    assert str(running.error) == f"value.converter: topic dbserver1.public.dup: no AvroConverter form of its schema: " \
                                 f"{reason}", (str(running.error), reason)
    assert not any(r["topic"].endswith(".dup") for r in _lines(ours_path))
