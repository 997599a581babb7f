"""`pgcdc verify`'s canonical forms: a PostgreSQL value (as the verify query selects it) and a target value
(as pyarrow reads it) are equal exactly when they mean the same. No Spark or servers needed."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pgcdc.spark.verify import _canon_for

# A point (1 2) as hex EWKB, little-endian, with SRID 4326 (flag 0x20000000) and without.
POINT_4326 = "0101000020E6100000000000000000F03F0000000000000040"
POINT = "0101000000000000000000F03F0000000000000040"

CASES = [
    # (typname, string target, PostgreSQL value, target value, equal)
    ("interval", False, "P1M", 2_629_800_000_000, True),  # numeric mode: a month is 30.4375 days
    ("interval", False, "P1DT-1S", 86_399_000_000, True),
    ("interval", False, "P1D", 86_400_000_001, False),
    ("interval", True, "P1Y2M3DT4H5M6.78S", "P1Y2M3DT4H5M6.78S", True),
    ("interval", True, "P-2M-3DT-4H-5M-6.000001S", "P0Y-2M-3DT-4H-5M-6.000001S", True),
    ("interval", True, "PT0S", "P0Y0M0DT0H0M0S", True),
    ("interval", True, "P1M", "P0Y0M30DT10H30M0S", False),  # string mode keeps months apart
    ("geometry", False, POINT_4326.lower(), {"wkb": bytes.fromhex(POINT_4326), "srid": 4326}, True),
    ("geometry", False, POINT.lower(), {"wkb": bytes.fromhex(POINT), "srid": None}, True),
    ("geometry", False, POINT_4326.lower(), {"wkb": bytes.fromhex(POINT_4326), "srid": None}, False),
    ("geography", False, POINT_4326.lower(), {"wkb": bytes.fromhex(POINT), "srid": 4326}, False),
    ("hstore", True, '{"a": "1", "b": null}', '{"b":null,"a":"1"}', True),  # hstore.handling.mode=json
    ("hstore", False, '{"a": "1", "b": null}', [("b", None), ("a", "1")], True),  # mode map
    ("hstore", False, '{"a": "1"}', [("a", "2")], False),
    ("hstore", False, "{}", [], True),
    ("time", True, dt.time(0, 1, 1, 123456), "00:01:01.123456", True),  # DecodeOptions(time_as="string")
    ("time", False, dt.time(0, 1, 1, 123456), 61_123_456, True),
    ("time", True, dt.time(12, 0, 1, 123000), "12:00:01.123001", False),
]


@pytest.mark.parametrize(("typname", "string_target", "pg", "target", "equal"), CASES)
def test_canonical_forms(typname: str, string_target: bool, pg: Any, target: Any, equal: bool) -> None:
    canon = _canon_for(typname, "b", string_target)
    assert (canon(pg) == canon(target)) is equal
