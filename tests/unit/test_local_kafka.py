"""Where the Apache Kafka test broker is looked for, and what a machine without it is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.errors import LocalServiceError
from pgcdc.local.kafka import KAFKA_VERSION, find_kafka, kafka_cache


def test_the_cache_is_where_dev_puts_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PGCDC_KAFKA_HOME", raising=False)
    monkeypatch.setenv("PGCDC_PG_CACHE", str(tmp_path))
    assert kafka_cache() == tmp_path / f"kafka-{KAFKA_VERSION}"
    (kafka_cache() / "libs").mkdir(parents=True)
    (kafka_cache() / "libs" / f"kafka_2.13-{KAFKA_VERSION}.jar").touch()
    assert find_kafka() == kafka_cache()


def test_a_missing_broker_names_what_to_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PGCDC_KAFKA_HOME", str(tmp_path))
    with pytest.raises(LocalServiceError) as info:
        find_kafka()
    message = str(info.value)
    assert "\n" not in message
    assert f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}" in message and str(tmp_path) in message
