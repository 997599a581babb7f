"""pgcdc's ProtobufConverter against what Confluent 7.0.16's ProtobufConverter wrote for one Connect record
(tests/data/confluent/protobuf_converter.json, measured): the registered text and the bytes after the schema id,
for int8/int16 parameters, decimals, dates across the Julian/Gregorian cutover, times, negative timestamps,
unnamed and field-named structs, arrays of structs, maps with non-string keys and struct values, -0.0 and NaN.
The Debezium type zoo is compared with the real converter in tests/conformance/test_protobuf_vs_debezium.py."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from pgcdc.converters.protobuf import protobuf_form
from pgcdc.converters.protobuf_schema import ProtobufOptions, scrub_name
from pgcdc.converters.protobuf_values import civil_from_days
from pgcdc.converters.sink import ConvertingSink, make_converters
from tests.unit.test_converters import BASE, PROTOBUF, ListSink

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "confluent" / "protobuf_converter.json").read_text())


def test_schema_text_and_bytes_match_confluents_converter() -> None:
    form = protobuf_form(RECORDED["connect"]["schema"])
    assert form.text == RECORDED["confluent_text"]
    msg = form.message_class()
    form.fill(msg, RECORDED["connect"]["payload"])
    # magic byte, schema id, message index [0] (one zigzag varint 0), then the message
    assert msg.SerializeToString().hex() == RECORDED["confluent_bytes"][12:]
    assert RECORDED["confluent_bytes"][10:12] == "00"


def test_the_converting_sink_writes_confluents_wire_format() -> None:
    from pgcdc.config import build_config

    config = build_config({**BASE, "value.converter": PROTOBUF, "value.converter.schema.registry.url": "mock://pb"})
    inner = ListSink()
    _, value, _ = make_converters(config, lambda: False)
    sink = ConvertingSink(inner, None, value)
    data = orjson.dumps(RECORDED["connect"])
    sink.send("dbserver1.public.t", None, data)
    sink.send("dbserver1.public.t", None, data)
    assert value is not None
    schema_id = value.client.get_latest_version("dbserver1.public.t-value").schema_id  # type: ignore[attr-defined]
    expected = bytes([0]) + schema_id.to_bytes(4, "big") + bytes.fromhex(RECORDED["confluent_bytes"][10:])
    assert [r[2] for r in inner.records] == [expected, expected]
    assert value.client.get_schema(schema_id).schema_str == RECORDED["confluent_text"]  # type: ignore[attr-defined]


# Measured: java.util.Calendar (UTC) YEAR, MONTH + 1, DAY_OF_MONTH for these day counts on the JDK 17 the
# oracle runs on: Julian before the 1582-10-15 cutover, and the year of its era before year 1.
JAVA_DATES = [(0, (1970, 1, 1)), (-141427, (1582, 10, 15)), (-141428, (1582, 10, 4)), (-719164, (1, 1, 1)),
              (-719162, (1, 1, 3)), (-719530, (1, 1, 1)), (-719528, (1, 1, 3)), (-800000, (222, 9, 8)),
              (2932896, (9999, 12, 31))]


@pytest.mark.parametrize("days, ymd", JAVA_DATES)
def test_dates_as_java_gregorian_calendar_splits_them(days: int, ymd: tuple[int, int, int]) -> None:
    assert civil_from_days(days) == ymd


# Measured: the field and package names Confluent's converter registered with scrub.invalid.names=true for the
# columns of tests/conformance/test_avro_vs_debezium.py's SCRUB_SETUP (test_protobuf_converter_options_match_confluent).
SCRUBBED = [("k-1", "k_1"), ("c🎉", "c_F0_9F_8E_89"), ("1st", "x1st"), ("a-b", "a_b"), ("é", "_C3_A9"),
            ("_ok", "x_ok"), ("x.y", "x_y"), ("ab%", "ab_25"), ("Ü2", "_C3_9C2"), ("9", "x9"), ("t~", "t_7E"),
            ("1s", "x1s"), ("my-table", "my_table"), ("ts_ms", "ts_ms"), ("Value", "Value")]


@pytest.mark.parametrize("name, scrubbed", SCRUBBED)
def test_scrubbed_names_as_confluents_protobuf_converter_writes_them(name: str, scrubbed: str) -> None:
    assert scrub_name(name) == scrubbed


def test_the_converter_options_reach_the_schema_and_the_filler() -> None:
    """The options a connector JSON gives (`converter.*` or per side) are the ones each side's converter
    compiles with: the recorded schema with wrappers and `optional` (the zoo is compared in the conformance tier)."""
    from pgcdc.config import build_config

    config = build_config({**BASE, "value.converter": PROTOBUF, "value.converter.schema.registry.url": "mock://pb",
                           "converter.wrapper.for.nullables": "true", "value.converter.optional.for.nullables": "true"})
    _, value, _ = make_converters(config, lambda: False)
    assert value is not None
    assert value.options == ProtobufOptions(wrapper_for_nullables=True, optional_for_nullables=True)  # type: ignore
    form = protobuf_form(RECORDED["connect"]["schema"], value.options)  # type: ignore[attr-defined]
    assert 'import "google/protobuf/wrappers.proto";' in form.text
    assert "optional google.protobuf.StringValue s = 2 [deprecated = false];" in form.text
    msg = form.message_class()
    form.fill(msg, RECORDED["connect"]["payload"])
    assert msg.after.HasField("s") and msg.after.s.value == RECORDED["connect"]["payload"]["after"]["s"]


def test_two_fields_scrubbed_to_one_name_are_refused_with_that_name() -> None:
    """`a-b` and `a b` both scrub to `a_b`: the descriptor does not build (as DynamicSchema.build fails in
    Confluent's converter); the converting sink turns this into its one line."""
    schema = {"type": "struct", "name": "dbserver1.public.dup.Value", "optional": False, "fields": [
        {"field": "a-b", "type": "int32", "optional": True}, {"field": "a b", "type": "int32", "optional": True}]}
    with pytest.raises(TypeError, match=r"duplicate field name \(a_b\)"):
        protobuf_form(schema, ProtobufOptions(scrub_invalid_names=True))
