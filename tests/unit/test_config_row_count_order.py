"""snapshot.tables.order.by.row.count with the properties that decide whether Debezium's snapshot is chunked
(snapshot.max.threads, snapshot.max.threads.multiplier, legacy.snapshot.max.threads and its old name): only a
chunked snapshot sorts its tables."""

from __future__ import annotations

import pytest

from pgcdc.config import build_config
from pgcdc.errors import ConfigError

BASE = {"topic.prefix": "t", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "sink.type": "file", "offset.storage": "memory"}


@pytest.mark.parametrize(("props", "order"), [
    ({}, None),
    ({"snapshot.tables.order.by.row.count": "descending"}, None),  # one thread: no sorting
    ({"snapshot.tables.order.by.row.count": "DESCENDING", "snapshot.max.threads": "2"}, "descending"),
    ({"snapshot.tables.order.by.row.count": "ascending", "snapshot.max.threads.multiplier": "2"}, "ascending"),
    ({"snapshot.tables.order.by.row.count": "disabled", "snapshot.max.threads": "2"}, None),
    ({"snapshot.tables.order.by.row.count": "ascending", "snapshot.max.threads": "2",
      "legacy.snapshot.max.threads": "true"}, None),
    ({"snapshot.tables.order.by.row.count": "ascending", "snapshot.max.threads": "2",
      "internal.legacy.snapshot.max.threads": "true"}, None),
    ({"snapshot.tables.order.by.row.count": "ascending", "snapshot.max.threads": "2",
      "internal.legacy.snapshot.max.threads": "true", "legacy.snapshot.max.threads": "false"}, "ascending"),
])
def test_sorted_only_when_chunked(props: dict[str, str], order: str | None) -> None:
    assert build_config({**BASE, **props}).snapshot_row_count_order == order


@pytest.mark.parametrize(("prop", "value"), [
    ("snapshot.tables.order.by.row.count", "largest"),
    ("snapshot.max.threads.multiplier", "0"),
    ("legacy.snapshot.max.threads", "yes"),
    ("internal.legacy.snapshot.max.threads", "yes"),
])
def test_bad_values_refused(prop: str, value: str) -> None:
    with pytest.raises(ConfigError, match=prop.replace(".", r"\.")):
        build_config({**BASE, prop: value})
