"""The transform chain replayed on recorded input: pgcdc's untransformed records of a conformance run, through
the chain its configuration builds, give the records Debezium 3.6 produced in that run (recorded with
PGCDC_RECORD_TRANSFORMS=1 by tests/conformance/test_transforms_vs_debezium.py; both read the same WAL)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from pgcdc.errors import ConfigError
from pgcdc.sink import Headers
from pgcdc.transforms import Record
from pgcdc.transforms.chain import TransformError, TransformingSink
from pgcdc.transforms.config import build_chain
from tests.conformance.compare import Num, compare, load

DATA = Path(__file__).resolve().parents[1] / "data" / "transforms"
SCENARIOS = sorted(p.name.removesuffix(".props.json") for p in DATA.glob("*.props.json"))
SNAPSHOT_FIELDS = ("ts_ms", "ts_us", "ts_ns", "lsn", "sequence", "txId")


class Lines:
    """A sink keeping records in the file sink's shape, numbers as their text (as compare.load reads them)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None = None,
             partition: int | None = None) -> None:
        def parse(b: bytes | None) -> Any:
            return None if b is None else json.loads(b, parse_float=Num, parse_int=Num)
        self.records.append({"topic": topic, "partition": partition, "key": parse(key), "value": parse(value),
                             "headers": [[n, parse(v)] for n, v in headers or ()]})

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def replay(scenario: str, props: dict[str, str] | None = None) -> list[dict[str, Any]]:
    props = props or json.loads((DATA / f"{scenario}.props.json").read_text())
    chain = build_chain(props)
    assert chain is not None
    out = Lines()
    sink = TransformingSink(out, chain)
    for line in (DATA / f"{scenario}.input.jsonl").read_text().splitlines():
        r = json.loads(line)
        enc = (lambda t: None if t is None else t.encode())  # noqa: E731
        sink.send(r["topic"], enc(r["key"]), enc(r["value"]), [(n, v.encode()) for n, v in r["headers"]],
                  r["partition"])
    return out.records


def _mask_nested_times(value: Any) -> None:
    if isinstance(value, dict):
        if "op" in value:
            for k in ("ts_ms", "ts_us", "ts_ns"):
                if k in value:
                    value[k] = "<masked>"
        for v in value.values():
            _mask_nested_times(v)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recorded_chain_output_is_debeziums(scenario: str) -> None:
    ours, theirs = replay(scenario), load(DATA / f"{scenario}.debezium.jsonl")
    for r in (*ours, *theirs):
        _mask_nested_times(r.get("value"))
    problems = compare(ours, theirs, SNAPSHOT_FIELDS if scenario.startswith("snapshot") else ())
    def part(x: Any) -> int | None:
        return None if x is None else int(x)
    problems += [f"record {i}: partition {a['partition']!r} != {b['partition']!r}"
                 for i, (a, b) in enumerate(zip(ours, theirs)) if part(a["partition"]) != part(b["partition"])]
    assert theirs and not problems, "\n".join(problems[:20])


def test_recordings_exist() -> None:
    assert len(SCENARIOS) >= 17


def test_python_callable_transform_and_predicate_negate() -> None:
    props = {"transforms": "py", "transforms.py.type": f"{__name__}:drop_updates",
             "transforms.py.predicate": "msg", "transforms.py.negate": "true",
             "predicates": "msg", "predicates.msg.type":
             "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
             "predicates.msg.pattern": r".*\.message"}
    plain = replay("unwrap_default", {"transforms": "f", "transforms.f.type": f"{__name__}:keep"})
    ours = replay("unwrap_default", props)
    updates = [r for r in plain if isinstance(r["value"], dict) and r["value"]["payload"].get("op") == "u"]
    assert updates and len(ours) == len(plain) - len(updates)
    assert all(r["topic"].startswith("renamed.") for r in ours if r["topic"] != "dbserver1.message")


def keep(record: Record) -> Record:
    return record


def drop_updates(record: Record) -> Record | None:
    if isinstance(record.value, dict) and record.value.get("op") == "u":
        return None
    return record.new(topic="renamed." + record.topic)


def explode(record: Record) -> Record:
    raise RuntimeError("no")


def test_errors_tolerance_none_stops_with_one_line_naming_the_alias() -> None:
    with pytest.raises(TransformError) as exc:
        replay("unwrap_default", {"transforms": "x", "transforms.x.type": f"{__name__}:explode"})
    assert str(exc.value).startswith(f"transforms.x ({__name__}:explode) failed on a record for topic "
                                     "'dbserver1.public.t': no (errors.tolerance=none)")


def test_errors_tolerance_all_skips_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    props = {"transforms": "x", "transforms.x.type": f"{__name__}:explode", "errors.tolerance": "all",
             "errors.log.enable": "true", "errors.log.include.messages": "true"}
    assert replay("unwrap_default", props) == []
    assert "skipped (errors.tolerance=all): key=" in caplog.text
    caplog.clear()
    assert replay("unwrap_default", {**props, "errors.log.include.messages": "false"}) == []
    assert "skipped (errors.tolerance=all)" in caplog.text and "key=" not in caplog.text
    caplog.clear()
    assert replay("unwrap_default", {**props, "errors.log.enable": "false"}) == []
    assert caplog.text == ""


def test_untouched_key_keeps_its_bytes_and_doubles_keep_javas_text() -> None:
    out = Lines()
    chain = build_chain({"transforms": "f", "transforms.f.type": f"{__name__}:keep"})
    assert chain is not None
    sink = TransformingSink(out, chain)
    value = (b'{"schema":{"type":"struct","fields":[{"type":"double","optional":true,"field":"d"}],'
             b'"optional":false},"payload":{"d":1.0E20}}')
    sink.send("t", b'{"schema":null,"payload":1}', value)
    sink.send("t", b'{"schema":null,"payload":1}', value)  # the second time through the cached schema
    assert [orjson.dumps(r["value"]["payload"]) for r in out.records] == [b'{"d":"1.0E20"}'] * 2


def test_config_error_names_alias_and_option() -> None:
    with pytest.raises(ConfigError, match=r"^transforms.u.route.by.fields: unknown option for "
                                          r"ExtractNewRecordState \(accepted: delete.tombstone.handling.mode"):
        build_chain({"transforms": "u", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState",
                     "transforms.u.route.by.fields": "x"})


def test_a_field_added_twice_fails_the_record_as_schemabuilder_does() -> None:
    # SchemaBuilder.field refuses a second field of a name; a Debezium run whose InsertField timestamp.field
    # named an existing column stopped.
    with pytest.raises(TransformError, match="Cannot create field because of field name duplication id"):
        replay("unwrap_default", {"transforms": "u,i", "transforms.u.type": "io.debezium.transforms."
                                  "ExtractNewRecordState", "transforms.i.type":
                                  "org.apache.kafka.connect.transforms.InsertField$Value",
                                  "transforms.i.static.field": "id", "transforms.i.static.value": "x"})


OUTBOX = {"transforms": "o", "transforms.o.type": "io.debezium.transforms.outbox.EventRouter"}


def test_outbox_update_is_fatal_when_configured() -> None:
    # EventRouterDelegate.handleUnexpectedOperation: IllegalStateException with table.op.invalid.behavior=fatal.
    with pytest.raises(TransformError, match="Unexpected update message received .*, fail"):
        replay("outbox_default", {**OUTBOX, "transforms.o.table.op.invalid.behavior": "fatal"})


def test_outbox_top_level_array_payload_fails_the_record_when_expanded() -> None:
    # Measured with Debezium 3.6.3: toConnectData reads the top level as a Struct, so an array payload fails
    # ("Invalid Java object for schema with type ARRAY") and the engine stops.
    from pgcdc.transforms.outbox_json import Expander
    with pytest.raises(ValueError, match="type ARRAY"):
        Expander(False, "none").expand("payload", "[1, 2, 3]")
    with pytest.raises(ValueError, match="type DOUBLE|type FLOAT64"):
        Expander(False, "none").expand("payload", '{"big": 100000000000000000000}')


@pytest.mark.parametrize(("option", "value", "message"), [
    ("table.op.invalid.behavior", "skip", r"expected one of warn, error, fatal"),
    ("table.fields.additional.placement", "type:body", r"expected one of header, envelope, partition"),
    ("table.fields.additional.placement", "type", r"expected column:placement\[:alias\]"),
    ("route.topic.regex", "(", r"not a valid regular expression"),
    ("table.json.payload.null.behavior", "keep", r"expected one of ignore, optional_bytes"),
    ("table.expand.json.payload", "yes", r"expected true or false"),
])
def test_outbox_bad_option_is_one_line_naming_it(option: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"^transforms\.o\.{re.escape(option)}: {message}"):
        build_chain({**OUTBOX, f"transforms.o.{option}": value})


@pytest.mark.parametrize("props", [
    # Measured with Debezium 3.6.3: a missing additional column fails the record even with error.on.missing=false.
    {"transforms.o.table.fields.additional.placement": "nosuch:header",
     "transforms.o.table.fields.additional.error.on.missing": "false"},
    # Measured: the value schema cached for schema version 1 has the first event's expanded payload; a later
    # version-1 event whose payload stays a string fails Struct.put.
    {"transforms.o.table.expand.json.payload": "true", "transforms.o.table.field.event.schema.version": "ver",
     "transforms.o.table.fields.additional.placement": "type:envelope"},
])
def test_outbox_records_debezium_fails(props: dict[str, str]) -> None:
    with pytest.raises(TransformError, match="nosuch is not a valid field name|Invalid Java object for schema"):
        replay("outbox_default", {**OUTBOX, **props})


PART = {"transforms": "p", "transforms.p.type": "io.debezium.transforms.partitions.PartitionRouting",
        "transforms.p.partition.topic.num": "3"}


def test_partition_routing_through_a_null_struct_fails_the_record() -> None:
    # PartitionRouting.getLastStruct: `after.id` on a delete reads a field of a null struct (a
    # NullPointerException, rethrown as "Unprocessable message"); `change.id` reads `before` there.
    with pytest.raises(TransformError, match="Unprocessable message: after is null"):
        replay("partition_routing_change_source", {**PART, "transforms.p.partition.payload.fields": "after.id"})
    assert replay("partition_routing_change_source", {**PART, "transforms.p.partition.payload.fields": "change.id"})


@pytest.mark.parametrize(("option", "value", "message"), [
    ("partition.topic.num", "0", "expected a positive integer"),
    ("partition.payload.fields", "after.id,,source.table", "an empty element"),
])
def test_partition_routing_bad_option_is_one_line(option: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"^transforms\.p\.{re.escape(option)}: {message}"):
        build_chain({**PART, "transforms.p.partition.payload.fields": "change.id", f"transforms.p.{option}": value})


def test_header_to_value_nested_under_a_null_struct_fails_the_record() -> None:
    # Measured with Debezium 3.6.3: an `after.x` destination rebuilds `after` as a required struct, and
    # JsonConverter refuses the delete whose `after` is null; the engine stops.
    props = {"predicates": "tomb", "predicates.tomb.type":
             "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
             "transforms": "notomb,h2v", "transforms.notomb.type": "org.apache.kafka.connect.transforms.Filter",
             "transforms.notomb.predicate": "tomb", "transforms.h2v.type": "io.debezium.transforms.HeaderToValue",
             "transforms.h2v.headers": "__debezium.context.taskId", "transforms.h2v.fields": "after.task",
             "transforms.h2v.operation": "copy"}
    with pytest.raises(TransformError, match="null value for field that is required"):
        replay("header_to_value_copy_root", props)


def test_timestamp_router_fails_a_change_event_which_has_no_record_timestamp() -> None:
    # TimestampRouter.apply: a null record timestamp is a DataException; Debezium's change events carry none.
    with pytest.raises(TransformError, match="Timestamp missing on record"):
        replay("unwrap_default", {"transforms": "t", "transforms.t.type":
                                  "org.apache.kafka.connect.transforms.TimestampRouter"})


@pytest.mark.parametrize(("type_", "opts", "option", "message"), [
    ("Cast$Value", {"spec": "id:uuid"}, "spec", "'uuid' is not a type Cast supports"),
    ("TimestampConverter$Value", {"target.type": "Instant"}, "target.type",
     "expected one of string, unix, Date, Time, Timestamp"),
    ("HeaderFrom$Value", {"fields": "id", "headers": "h", "operation": "swap"}, "operation", "expected move or copy"),
    ("ExtractField$Key", {"field": "a.b", "field.syntax.version": "V3"}, "field.syntax.version",
     "expected V1 or V2"),
])
def test_kafka_connect_value_transforms_bad_option_is_one_line(type_: str, opts: dict[str, str], option: str,
                                                               message: str) -> None:
    props = {"transforms": "x", "transforms.x.type": f"org.apache.kafka.connect.transforms.{type_}",
             **{f"transforms.x.{k}": v for k, v in opts.items()}}
    with pytest.raises(ConfigError, match=rf"^transforms\.x\.{re.escape(option)}: {re.escape(message)}"):
        build_chain(props)


def test_mask_field_unparsable_replacement_fails_each_record_with_a_value() -> None:
    # Measured with Debezium 3.6.3 (tests/conformance/test_transforms_specials_vs_debezium.py): MaskField reads
    # the replacement per masked value (Values.convertToFloat: new BigDecimal("NaN") fails), so a record whose
    # field is null passes and the others fail.
    props = json.loads((DATA / "snapshot_mask_float_and_int_replacements.props.json").read_text())
    props["transforms.m_r1.replacement"] = "NaN"
    with pytest.raises(TransformError, match=r"^transforms\.m_r1 \(org\.apache\.kafka\.connect\.transforms\.MaskField"
                                             r"\$Value\) failed on a record for topic 'dbserver1\.public\.f': "
                                             r"replacement 'NaN' for field 'r1': Unable to convert NaN \(class "
                                             r"java\.lang\.String\) to a number \(errors\.tolerance=none\)$"):
        replay("snapshot_mask_float_and_int_replacements", props)
    kept = replay("snapshot_mask_float_and_int_replacements", {**props, "errors.tolerance": "all"})
    # rows 2 and 11 have no r1; the delete of row 3 (rewritten from `before`, the key alone) neither
    assert [int(r["key"]["payload"]["id"]) for r in kept] == [2, 11, 3]


def test_mask_field_fails_a_tombstone() -> None:
    # Measured with Debezium 3.6.3 (tests/conformance/test_transforms_specials_vs_debezium.py): MaskField reads
    # a record without a schema as a Map, and a tombstone's null is none; the engine stops.
    props = {"transforms": "m", "transforms.m.type": "org.apache.kafka.connect.transforms.MaskField$Value",
             "transforms.m.fields": "op"}
    with pytest.raises(TransformError, match=r"failed on a record for topic 'dbserver1\.public\.t': Only Map objects "
                                             r"supported in absence of schema for \[mask fields\], found: null"):
        replay("unwrap_default", props)
    kept = replay("unwrap_default", {**props, "errors.tolerance": "all"})
    assert kept and all(r["value"] is not None for r in kept)


def test_timestamp_converter_date_before_the_long_range_fails_the_record() -> None:
    # Measured with Debezium 3.6.3 on this input (ts8 to a Date, read in seconds): the rows before 1677 saturate at
    # Long.MIN_VALUE milliseconds, whose midnight Calendar wraps round, and Date.fromLogical refuses it.
    props = json.loads((DATA / "snapshot_timestamp_converter_micro_extremes.props.json").read_text())
    props["transforms.c11.target.type"] = "Date"
    with pytest.raises(TransformError, match=r"transforms\.c11 .* Kafka Connect Date type should not have any time "
                                             r"fields set to non-zero values\. \(errors\.tolerance=none\)$"):
        replay("snapshot_timestamp_converter_micro_extremes", props)
