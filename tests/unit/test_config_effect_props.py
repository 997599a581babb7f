"""Values of the Debezium 3.6 properties that change what is captured or emitted (publish.via.partition.root,
skip.messages.without.change, extended.headers.enabled, include.schema.comments, guardrail.collections.*,
streaming.delay.ms), checked as Debezium's field definitions check them: one line naming property and value."""

from __future__ import annotations

import pytest

from pgcdc.config import build_config
from pgcdc.errors import ConfigError, SourceError
from pgcdc.source.connection import check_guardrail

BASE = {"topic.prefix": "t", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "sink.type": "file", "offset.storage": "memory"}
LONG_MAX = str((1 << 63) - 1)
INT_MAX = str((1 << 31) - 1)


def test_defaults_are_debeziums() -> None:
    c = build_config(BASE)
    assert (c.publish_via_partition_root, c.skip_messages_without_change, c.extended_headers_enabled,
            c.include_schema_comments, c.guardrail_collections_max, c.guardrail_collections_limit_action,
            c.streaming_delay_ms) == (False, False, True, False, 0, "warn", 0)


@pytest.mark.parametrize(("override", "attr", "value"), [
    ({"publish.via.partition.root": "TRUE"}, "publish_via_partition_root", True),
    ({"skip.messages.without.change": "true"}, "skip_messages_without_change", True),
    ({"extended.headers.enabled": "False"}, "extended_headers_enabled", False),
    ({"include.schema.comments": "true"}, "include_schema_comments", True),
    ({"guardrail.collections.max": "0"}, "guardrail_collections_max", 0),
    ({"guardrail.collections.max": INT_MAX}, "guardrail_collections_max", (1 << 31) - 1),
    ({"guardrail.collections.limit.action": "FAIL"}, "guardrail_collections_limit_action", "fail"),
    ({"guardrail.collections.limit.action": "warn"}, "guardrail_collections_limit_action", "warn"),
    ({"streaming.delay.ms": "0"}, "streaming_delay_ms", 0),
    ({"streaming.delay.ms": LONG_MAX}, "streaming_delay_ms", (1 << 63) - 1),
])
def test_values_are_taken(override: dict[str, str], attr: str, value: object) -> None:
    assert getattr(build_config({**BASE, **override}), attr) == value


@pytest.mark.parametrize(("name", "value", "why"), [
    ("publish.via.partition.root", "yes", "must be true or false"),
    ("publish.via.partition.root", "", "must be true or false"),
    ("skip.messages.without.change", "1", "must be true or false"),
    ("extended.headers.enabled", "off", "must be true or false"),
    ("include.schema.comments", "", "must be true or false"),
    ("guardrail.collections.max", "-1", "must be a non-negative integer"),
    ("guardrail.collections.max", "", "must be a non-negative integer"),
    ("guardrail.collections.max", str(1 << 31), "must be a non-negative integer"),
    ("guardrail.collections.max", "1.5", "must be a non-negative integer"),
    ("guardrail.collections.limit.action", "stop", "must be one of warn, fail"),
    ("guardrail.collections.limit.action", "", "must be one of warn, fail"),
    ("streaming.delay.ms", "-1", "must be a non-negative integer"),
    ("streaming.delay.ms", "", "must be a non-negative integer"),
    ("streaming.delay.ms", str(1 << 63), "must be a non-negative integer"),
    ("streaming.delay.ms", "5s", "must be a non-negative integer"),
])
def test_bad_values_are_one_line_naming_property_and_value(name: str, value: str, why: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, name: value})
    assert exc.value.problems == (f"{name}: {why} (got {value!r})",)


@pytest.mark.parametrize(("limit", "action", "count", "fails"), [
    ("2", "fail", 2, False), ("2", "fail", 3, True), ("1", "warn", 5, False)])
def test_guardrail(limit: str, action: str, count: int, fails: bool, caplog: pytest.LogCaptureFixture) -> None:
    config = build_config({**BASE, "guardrail.collections.max": limit, "guardrail.collections.limit.action": action})
    message = (f"guardrail.collections.max: Guardrail limit exceeded: {count} tables/collections configured for "
               f"capture, but maximum allowed is {limit}.")
    if fails:
        with pytest.raises(SourceError) as exc:
            check_guardrail(config, count)
        assert str(exc.value) == message + " (guardrail.collections.limit.action=fail)"
    else:
        check_guardrail(config, count)
        assert [r.getMessage() for r in caplog.records] == ([message] if count > int(limit) else [])
