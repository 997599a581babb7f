"""Confluent's ProtobufConverter options that give nullable scalars presence (wrapper.for.nullables,
optional.for.nullables), read back by pgcdc.spark's Protobuf reader: the null fields of a record come back null,
every other field as it reads without the options. The record is tests/data/confluent/protobuf_converter.json's
Connect record, written by pgcdc's converter (compared byte for byte with Confluent's, with these options, in
tests/conformance/test_protobuf_vs_debezium.py); no Spark session is needed to read one message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pgcdc.converters.protobuf import protobuf_form
from pgcdc.converters.protobuf_schema import ProtobufOptions
from pgcdc.spark.proto_text import compile_proto
from tests.unit.test_protobuf_converter import RECORDED


def _read_back(options: ProtobufOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the payload read back, the Connect schema the reader gives) for the recorded record."""
    form = protobuf_form(RECORDED["connect"]["schema"], options)
    msg = form.message_class()
    form.fill(msg, RECORDED["connect"]["payload"])
    compiled = compile_proto(form.text)
    return compiled.read(b"\x00" + msg.SerializeToString(), 0), compiled.connect


@pytest.mark.parametrize("options", [ProtobufOptions(wrapper_for_nullables=True),
                                     ProtobufOptions(optional_for_nullables=True),
                                     ProtobufOptions(wrapper_for_nullables=True, optional_for_nullables=True)],
                         ids=["wrapper", "optional", "both"])
def test_nullable_scalars_read_back_null_with_presence(options: ProtobufOptions) -> None:
    written = RECORDED["connect"]["payload"]["after"]
    nulls = {k for k, v in written.items() if v is None}
    assert nulls, "the recorded row has null scalars"
    plain, plain_schema = _read_back(ProtobufOptions())
    assert all(plain["after"][k] is not None for k in nulls)  # proto3 without presence: the type's default
    read, schema = _read_back(options)
    expected = {**plain["after"], **{k: None for k in nulls}}
    assert json.dumps(read["after"], sort_keys=True) == json.dumps(expected, sort_keys=True)  # NaN compared too
    assert read["before"] is None
    assert schema == plain_schema  # a wrapper is its scalar, int8/int16 kept by their connect.type
