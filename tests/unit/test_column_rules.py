"""Column privacy rules, with digests Debezium 3.6 wrote for the same salt and values (conformance run)."""

from __future__ import annotations

import pytest

from pgcdc.config import build_config
from pgcdc.envelope.columns import ColumnRules, declared_length, java_serialized_string
from pgcdc.errors import ConfigError
from pgcdc.pgtypes import Converter

TEXT = Converter({"type": "string"}, None)
BASE = {"name": "x", "topic.prefix": "p", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "sink.type": "file", "offset.storage": "memory"}


@pytest.mark.parametrize(("rule", "value", "length", "digest"), [
    ("column.mask.hash.SHA-256.with.salt.CzQMA0cB5K", "ada@example.com", None,
     "51d9e32414bee6899e9233161012dd9311068e986d66f964cf68d626d0da50c6"),
    ("column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K", "Countess", None,
     "6f0476bb3f77534d60e277812365a24a1c752c0dab847cab43dea099838b52c4"),
    ("column.mask.hash.MD5.with.salt.pepper", "ABCDEF", 6, "7b1a8d"),
    ("column.mask.hash.MD5.with.salt.pepper", "ab    ", 6, "f5a59b"),
])
def test_hashes_match_debezium(rule: str, value: str, length: int | None, digest: str) -> None:
    rules = ColumnRules.from_properties((), (), {rule: "public.f.c"})
    assert rules is not None
    conv, fill = rules.apply("public.f.c", TEXT, length)
    assert conv.fn is not None and conv.fn(value) == digest
    assert conv.schema["parameters"] == {"masked": "true"}
    assert fill is not None and fill(None) is None


def test_mask_truncate_exclude() -> None:
    rules = ColumnRules.from_properties((), ("public\\.f\\.secret",), {
        "column.mask.with.8.chars": "public.f.name", "column.truncate.to.5.chars": "public.f.note"})
    assert rules is not None
    masked, fill = rules.apply("public.f.name", TEXT, None)
    assert masked.fn is not None and masked.fn("Ada") == "********" and fill is not None and fill(None) == "********"
    cut, _ = rules.apply("public.F.NOTE", TEXT, None)  # Debezium matches column names without regard to case
    assert cut.fn is not None and cut.fn("a rather long note") == "a rat"
    assert cut.schema["parameters"] == {"truncateLength": "5"}
    assert rules.excluded("public.f.secret") and not rules.excluded("public.f.name")
    number = Converter({"type": "int32"}, int)
    # Only string columns are masked; another type keeps its values and gets masked=true (measured on 3.6:
    # tests/conformance/test_edges_vs_debezium.py masks an int and a bytea column).
    masked_number, fill = rules.apply("public.f.name", number, None)
    assert masked_number == Converter({"type": "int32", "parameters": {"masked": "true"}}, int) and fill is None
    assert rules.apply("public.f.note", number, None) == (number, None)  # truncation leaves it alone


def test_java_serialization_of_strings() -> None:
    assert java_serialized_string("ab") == b"\xac\xed\x00\x05t\x00\x02ab"
    assert java_serialized_string("\x00é") == b"\xac\xed\x00\x05t\x00\x04\xc0\x80\xc3\xa9"  # modified UTF-8
    assert java_serialized_string("🎉") == b"\xac\xed\x00\x05t\x00\x06\xed\xa0\xbc\xed\xbe\x89"  # CESU-8 pairs
    assert java_serialized_string("x" * 70000)[:13] == b"\xac\xed\x00\x05\x7c" + (70000).to_bytes(8, "big")


def test_declared_length() -> None:
    assert declared_length("varchar", 84) == 80 and declared_length("bpchar", 10) == 6
    assert declared_length("text", -1) is None and declared_length("varchar", -1) is None


@pytest.mark.parametrize(("props", "message"), [
    ({"column.mask.hash.ROT13.with.salt.x": "a.b.c"}, "unknown hash algorithm 'ROT13'"),
    ({"column.include.list": "a.b.c", "column.exclude.list": "a.b.d"},
     "column.include.list and column.exclude.list cannot both be set"),
    ({"message.prefix.include.list": "a", "message.prefix.exclude.list": "b"},
     "message.prefix.include.list and message.prefix.exclude.list cannot both be set"),
    ({"column.mask.with.many.chars": "a.b.c"}, "unknown property 'column.mask.with.many.chars'"),
    ({"column.exclude.list": "(unclosed"}, "column.exclude.list: bad regular expression"),
])
def test_bad_rules_are_one_clear_error(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", "\\(")):
        config = build_config({**BASE, **props})
        ColumnRules.from_properties(config.column_include_list, config.column_exclude_list, config.column_rules)
