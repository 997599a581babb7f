"""`topic.creation.*` read and checked as Kafka Connect 4.3's SourceConnectorConfig and TopicCreationConfig do.

Measured on Connect 4.3 (SourceConnectorConfig built from connector properties):
- any property starting with `topic.creation.` (even a connector-level `topic.creation.enable`, a worker setting
  Connect does not read there) makes `topic.creation.default.replication.factor` and `.partitions` required;
- numbers are trimmed; partitions are positive or -1, a replication factor a positive short or -1 (-1: the
  broker's default);
- the default group matches every topic (its include/exclude are not read); another group matches nothing
  without `include`; patterns match the whole topic name;
- a group's `partitions` and `replication.factor` default to the default group's; its other
  `topic.creation.<group>.<name>` properties are the new topic's configs, not inherited from the default group;
- properties of a group not listed in `topic.creation.groups` are not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

PREFIX = "topic.creation."
GROUPS = PREFIX + "groups"
DEFAULT = "default"
_OWN = ("include", "exclude", "partitions", "replication.factor")
_PARTITIONS = "must be positive, or -1 to use the broker's default"
_REPLICATION = ("must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use "
                "the broker's default")


@dataclass(frozen=True)
class Group:
    """One group's new-topic settings (-1: the broker's default) and the topics it matches."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    def matches(self, topic: str) -> bool:
        if self.name == DEFAULT:
            return True
        return any(p.fullmatch(topic) for p in self.include) and not any(p.fullmatch(topic) for p in self.exclude)


@dataclass(frozen=True)
class TopicCreation:
    """The configured groups in `topic.creation.groups` order, then the default group."""

    groups: tuple[Group, ...]

    def group_for(self, topic: str) -> Group:
        return next(g for g in self.groups if g.matches(topic))  # the default group, last, matches all


def _int(props: Mapping[str, str], name: str, low: int, high: int, why: str, kind: str,
         problems: list[str]) -> int | None:
    text = props[name].strip()
    try:
        value = int(text)
    except ValueError:
        problems.append(f"{name}: not a number of type {kind} (got {props[name]!r})")
        return None
    if not low <= value <= high:
        problems.append(f"{name}: not a number of type {kind} (got {props[name]!r})")
        return None
    if value == 0 or value < -1:
        problems.append(f"{name}: {why} (got {props[name]!r})")
        return None
    return value


def _patterns(props: Mapping[str, str], name: str, problems: list[str]) -> tuple[re.Pattern[str], ...]:
    out = []
    for item in (p.strip() for p in props.get(name, "").split(",")):
        if not item:
            continue
        try:
            out.append(re.compile(item))
        except re.error as exc:
            problems.append(f"{name}: bad regular expression {item!r}: {exc}")
    return tuple(out)


def _group(props: Mapping[str, str], name: str, default: Group | None, problems: list[str]) -> Group | None:
    base = f"{PREFIX}{name}."
    numbers: list[int | None] = []
    for key, kind, high, why in (("partitions", "INT", 2**31 - 1, _PARTITIONS),
                                 ("replication.factor", "SHORT", 2**15 - 1, _REPLICATION)):
        prop = base + key
        if prop in props:
            numbers.append(_int(props, prop, -(2**31 if kind == "INT" else 2**15), high, why, kind, problems))
        elif default is not None:
            numbers.append(default.partitions if key == "partitions" else default.replication_factor)
        else:
            problems.append(f"{prop}: required when any topic.creation.* property is set (Kafka Connect's topic "
                            "creation for source connectors, KIP-158)")
            numbers.append(None)
    configs = {k[len(base):]: v for k, v in props.items() if k.startswith(base) and k[len(base):] not in _OWN}
    include = _patterns(props, base + "include", problems) if default is not None else ()
    exclude = _patterns(props, base + "exclude", problems) if default is not None else ()
    partitions, replication = numbers
    if partitions is None or replication is None:
        return None
    return Group(name, partitions, replication, configs, include, exclude)


def parse(props: Mapping[str, str]) -> tuple[TopicCreation | None, list[str], list[str]]:
    """(the topic creation `props` configure or None, problems, the topic.creation.* properties not read)."""
    mine = {k: v for k, v in props.items() if k.startswith(PREFIX)}
    if not mine:
        return None, [], []
    problems: list[str] = []
    names = list(dict.fromkeys(n.strip() for n in mine.get(GROUPS, "").split(",") if n.strip() and
                               n.strip() != DEFAULT))
    default = _group(mine, DEFAULT, None, problems)
    groups = [g for n in names if (g := _group(mine, n, default, problems)) is not None] if default else []
    read = {GROUPS} | {k for k in mine if any(k.startswith(f"{PREFIX}{n}.") for n in (DEFAULT, *names))}
    ignored = sorted(k for k in mine if k not in read)
    if problems or default is None:
        return None, problems, ignored
    return TopicCreation((*groups, default)), [], ignored
