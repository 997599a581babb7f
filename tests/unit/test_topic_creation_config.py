"""`topic.creation.*` read and refused as Kafka Connect 4.3's SourceConnectorConfig reads them (measured with
Connect's own classes: required defaults, number checks, group matching and inheritance)."""

from __future__ import annotations

import logging

import pytest

from pgcdc.config import build_config
from pgcdc.errors import ConfigError
from pgcdc.topic_creation import parse

BASE = {"topic.prefix": "p", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "bootstrap.servers": "b:9"}
DEFAULTS = {"topic.creation.default.partitions": "2", "topic.creation.default.replication.factor": "1"}


def test_no_property_no_creation() -> None:
    assert parse({"topic.prefix": "p"}) == (None, [], [])


@pytest.mark.parametrize(("props", "message"), [
    ({"topic.creation.default.partitions": "3"}, "topic.creation.default.replication.factor: required when any "
                                                 "topic.creation.* property is set"),
    ({"topic.creation.enable": "false"}, "topic.creation.default.replication.factor: required"),
    ({"topic.creation.groups": "g1"}, "topic.creation.default.partitions: required"),
    ({**DEFAULTS, "topic.creation.default.partitions": "0"},
     "topic.creation.default.partitions: must be positive, or -1 to use the broker's default (got '0')"),
    ({**DEFAULTS, "topic.creation.default.replication.factor": "-2"},
     "topic.creation.default.replication.factor: must be positive and not larger than the number of brokers"),
    ({**DEFAULTS, "topic.creation.default.partitions": "x"},
     "topic.creation.default.partitions: not a number of type INT (got 'x')"),
    ({**DEFAULTS, "topic.creation.default.replication.factor": "40000"},
     "topic.creation.default.replication.factor: not a number of type SHORT (got '40000')"),
    ({**DEFAULTS, "topic.creation.groups": "g1", "topic.creation.g1.include": "a,("},
     "topic.creation.g1.include: bad regular expression '('"),
    ({**DEFAULTS, "topic.creation.groups": "g1", "topic.creation.g1.include": "a", "topic.creation.g1.partitions": "0"},
     "topic.creation.g1.partitions: must be positive"),
])
def test_refused_as_connect_refuses(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, **props})
    assert any(p.startswith(message) for p in exc.value.problems), exc.value.problems


def test_groups_match_in_order_and_inherit_only_the_numbers(caplog: pytest.LogCaptureFixture) -> None:
    props = {**DEFAULTS, "topic.creation.default.partitions": " 2 ", "topic.creation.default.compression.type": "lz4",
             "topic.creation.default.include": "nothing", "topic.creation.default.exclude": ".*",
             "topic.creation.groups": "g1, g2,default", "topic.creation.g1.include": "a.*",
             "topic.creation.g1.exclude": "a1", "topic.creation.g2.include": "a1,b",
             "topic.creation.g2.partitions": "5", "topic.creation.g2.replication.factor": "-1",
             "topic.creation.g2.cleanup.policy": "compact", "topic.creation.g3.partitions": "7",
             "topic.creation.enable": "true"}
    creation, problems, ignored = parse(props)
    assert problems == [] and creation is not None
    assert ignored == ["topic.creation.enable", "topic.creation.g3.partitions"]
    g1, g2, default = creation.groups
    assert (g1.name, g1.partitions, g1.replication_factor, g1.configs) == ("g1", 2, 1, {})
    assert (g2.partitions, g2.replication_factor, g2.configs) == (5, -1, {"cleanup.policy": "compact"})
    assert default.configs == {"compression.type": "lz4"}
    assert creation.group_for("a2") is g1
    assert creation.group_for("a1") is g2  # excluded from g1, included in g2
    assert creation.group_for("b") is g2
    assert creation.group_for("ab") is g1 and creation.group_for("bb") is default
    assert creation.group_for("nothing.at.all") is default  # the default group's include/exclude are not read
    with caplog.at_level(logging.WARNING, logger="pgcdc.config"):
        build_config({**BASE, **props})
    assert "accepted but not acted on by pgcdc: topic.creation.enable, topic.creation.g3.partitions" in caplog.text


def test_a_group_without_include_matches_nothing() -> None:
    creation, _, _ = parse({**DEFAULTS, "topic.creation.groups": "g1", "topic.creation.g1.partitions": "9"})
    assert creation is not None and creation.group_for("anything").name == "default"
