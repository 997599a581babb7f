"""TimestampConverter's string parsing where a record fails (the oracle comparison, with values that all parse,
is tests/conformance/test_transforms_vs_debezium.py::test_timestamp_converter_parsing_matches_debezium, replayed
by tests/unit/test_transforms_recorded.py): Kafka Connect's message for a value that does not match, a line
naming a pattern letter pgcdc cannot parse with."""

from __future__ import annotations

import pytest

from pgcdc.transforms import Record
from pgcdc.transforms.kafka_timestamp import timestamp_converter

K = "org.apache.kafka.connect.transforms.TimestampConverter$Value"
SCHEMA = {"type": "struct", "optional": False, "fields": [{"type": "string", "optional": True, "field": "s"}]}


def convert(value: str, fmt: str) -> object:
    apply = timestamp_converter(False)("transforms.ts", {"field": "s", "format": fmt, "target.type": "unix"}, None)
    return apply(Record(topic="t", partition=None, key_schema=None, key=None, value_schema=SCHEMA,
                        value={"s": value})).value


def test_a_value_that_does_not_match_fails_with_kafka_connects_message() -> None:
    assert convert("2024-02-29", "yyyy-MM-dd") == {"s": 1709164800000}
    for bad in ("", "abc", "2024/02/29", "   "):
        with pytest.raises(ValueError, match=r"^Could not parse timestamp: value \(.*\) does not match pattern "
                                             r"\(yyyy-MM-dd\)$"):
            convert(bad, "yyyy-MM-dd")


@pytest.mark.parametrize("fmt", ["EEE, d MMM yyyy", "yyyy-DDD", "YYYY-'W'ww-u"])
def test_a_pattern_letter_it_cannot_parse_with_is_named(fmt: str) -> None:
    with pytest.raises(ValueError, match="pattern letter '.' is not supported for parsing by pgcdc"):
        convert("x", fmt)

