"""Kafka Connect's predicates (org.apache.kafka.connect.transforms.predicates)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from pgcdc.errors import ConfigError
from pgcdc.transforms import Predicate, Record

_PKG = "org.apache.kafka.connect.transforms.predicates."


def _topic_name_matches(where: str, opts: Mapping[str, str]) -> Predicate:
    pattern = opts.get("pattern")
    if not pattern:
        raise ConfigError(f"{where}.pattern: required for TopicNameMatches (a Java regular expression)")
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{where}.pattern: not a valid regular expression {pattern!r}: {exc}") from None
    full = rx.fullmatch  # Matcher.matches(): the whole topic name
    return lambda r: full(r.topic) is not None


def _has_header_key(where: str, opts: Mapping[str, str]) -> Predicate:
    name = opts.get("name")
    if not name:
        raise ConfigError(f"{where}.name: required for HasHeaderKey (a header name)")
    return lambda r: any(h[0] == name for h in r.headers)


def _is_tombstone(where: str, opts: Mapping[str, str]) -> Predicate:
    return _tombstone


def _tombstone(r: Record) -> bool:
    return r.value is None


# type -> (factory, accepted options)
PREDICATES: dict[str, tuple[Callable[[str, Mapping[str, str]], Predicate], tuple[str, ...]]] = {
    _PKG + "TopicNameMatches": (_topic_name_matches, ("pattern",)),
    _PKG + "HasHeaderKey": (_has_header_key, ("name",)),
    _PKG + "RecordIsTombstone": (_is_tombstone, ()),
}
