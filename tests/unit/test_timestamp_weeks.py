"""TimestampConverter failing a record as Debezium 3.6 did: recorded input (pgcdc's untransformed records of the
table) replayed through the chain, which must stop with the line Debezium's Kafka Connect failed with (recorded by
tests/conformance/test_timestamp_converter_weeks_vs_debezium.py with PGCDC_RECORD_TRANSFORMS=1). The week letters
and the timestamptz values that do parse are replayed by tests/unit/test_transforms_recorded.py."""

from __future__ import annotations

import json

import pytest

from pgcdc.transforms.chain import TransformError
from tests.unit.test_transforms_recorded import DATA, replay

FAILURES = sorted(p.name.removesuffix(".fails.json") for p in DATA.glob("*.fails.json"))


@pytest.mark.parametrize("scenario", FAILURES)
def test_recorded_failure_is_debeziums(scenario: str) -> None:
    recorded = json.loads((DATA / f"{scenario}.fails.json").read_text())
    with pytest.raises(TransformError) as exc:
        replay(scenario, recorded["props"])
    assert str(exc.value) == (
        "transforms.c1 (org.apache.kafka.connect.transforms.TimestampConverter$Value) failed on a record for topic "
        f"'dbserver1.public.wk': {recorded['debezium']} (errors.tolerance=none)")


def test_failure_recordings_exist() -> None:
    assert len(FAILURES) >= 2

