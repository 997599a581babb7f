"""`pgcdc verify`'s canonical forms: a PostgreSQL value (as the verify query selects it) and a target value
(as pyarrow reads it) are equal exactly when they mean the same. No Spark or servers needed."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import orjson
import pytest

from pgcdc.pgtypes import special
from pgcdc.spark.verify import Column, Unrepresentable, _canon, _canon_for, _compare

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


def _bits(text: str) -> bytes:
    """The target's bytes for a bit string: pgcdc's io.debezium.data.Bits encoding, as Spark decodes it."""
    return base64.b64decode(special.bits_bytes(text))


def _point(text: str) -> dict[str, Any]:
    """The target's struct for a point: pgcdc's io.debezium.data.geometry.Point, as pyarrow reads it."""
    value = json.loads(orjson.dumps(special.point(text)))
    return {**value, "wkb": base64.b64decode(value["wkb"])}


UTC_PLUS_0530 = dt.timezone(dt.timedelta(hours=5, minutes=30))
# (typname, PostgreSQL value as verify selects it, target value, equal); the targets are pgcdc's own encodings
FORMS = [
    ("bit", "1", special.bit_bool("1"), True),  # bit(1): a boolean
    ("bit", "0", special.bit_bool("1"), False),
    ("bit", "10100001", _bits("10100001"), True),  # bit(8): Bits bytes, little-endian
    ("bit", "00000000", _bits("00000000"), True),
    ("varbit", "", _bits(""), True),
    ("varbit", "0000000000000000000000000000000000001", _bits("0000000000000000000000000000000000001"), True),
    ("varbit", "0001", _bits("1000"), False),
    ("point", "(1,2)", _point("(1,2)"), True),
    ("point", "(-1.5,10000000000)", _point("(-1.5,1e+10)"), True),
    ("point", "(1,2)", _point("(2,1)"), False),
    ("inet", "192.168.0.1/32", "192.168.0.1", True),  # ::text writes the /32 the output leaves out
    ("inet", "::1/128", "::1", True),
    ("inet", "10.1.2.3/16", "10.1.2.3/16", True),
    ("inet", "10.1.2.3/16", "10.1.2.3", False),
    ("cidr", "10.0.0.0/8", "10.0.0.0/8", True),
    ("money", Decimal("-1234567.89"), Decimal("-1234567.89"), True),  # selected as numeric
    ("timetz", dt.time(12, 34, 56, 789012, UTC_PLUS_0530), special.timetz_utc("12:34:56.789012+05:30"), True),
    ("timetz", dt.time(0, 0, tzinfo=dt.timezone(-dt.timedelta(hours=8))), special.timetz_utc("00:00:00-08"), True),
    ("timetz", dt.time(0, 0, tzinfo=dt.UTC), special.timetz_utc("00:00:00-08"), False),
    ("time", "24:00:00", 86_400_000_000, True),
    ("time", "23:59:59.999999", 86_399_999_999, True),
    ("json", "[" * 3000 + "]" * 3000, "[" * 3000 + "]" * 3000, True),  # deeper than Python's parser goes
    ("json", "[" * 3000 + "]" * 3000, "[" * 2999 + "]" * 2999, False),
    ("int4range", "[1,10)", "[1,10)", True),
]


@pytest.mark.parametrize(("typname", "pg", "target", "equal"), FORMS)
def test_forms_of_debezium_encodings(typname: str, pg: Any, target: Any, equal: bool) -> None:
    canon = _canon_for(typname, "b")
    assert (canon(pg) == canon(target)) is equal


@pytest.mark.parametrize(("typname", "pg"), [
    ("numeric", Decimal("NaN")), ("numeric", Decimal("Infinity")), ("money", Decimal("-Infinity")),
    ("date", Unrepresentable("infinity")), ("timestamp", Unrepresentable("12345-06-07 00:00:00")),
    ("timestamptz", Unrepresentable("-infinity")), ("_date", [Unrepresentable("infinity"), None]),
])
def test_values_python_cannot_hold_are_unrepresentable(typname: str, pg: Any) -> None:
    """Such a value against the target's null is counted as unrepresentable, not as a difference."""
    column = Column("c", typname, "b", _canon_for(typname, "b"))
    value = column.canon(pg)
    assert _compare([column], [value], [None], set()) == ([], ["c"])
    assert _compare([column], [value], ["2020-01-01"], set()) == (["c"], [])


def test_columns_the_target_names_are_unrepresentable() -> None:
    a, b = (Column(n, "numeric", "b", _canon_for("numeric", "b")) for n in ("a", "b"))
    source = [a.canon(Decimal("1" * 50)), b.canon(Decimal("2"))]
    assert _compare([a, b], source, [None, b.canon(Decimal("2"))], {"a"}) == ([], ["a"])
    assert _compare([a, b], source, [None, b.canon(Decimal("3"))], {"a"}) == (["b"], ["a"])
    assert _compare([a, b], source, [None, b.canon(Decimal("2"))], set()) == (["a"], [])


# A target's integers for dates, times and timestamps (Protobuf lands Debezium's adaptive numbers), with extremes:
# (typname, precision, integer width, PostgreSQL value, target value, equal)
INTEGER_TEMPORALS = [
    ("date", -1, 32, dt.date(1970, 1, 1), 0, True),
    ("date", -1, 32, dt.date(1969, 12, 31), -1, True),
    ("date", -1, 32, dt.date(9999, 12, 31), 2_932_896, True),
    ("date", -1, 32, dt.date(1, 1, 1), -719_162, True),
    ("date", -1, 32, dt.date(2000, 1, 1), 10_957, True),
    ("date", -1, 32, dt.date(2000, 1, 2), 10_957, False),
    ("time", 3, 32, dt.time(23, 59, 59, 999000), 86_399_999, True),  # io.debezium.time.Time: milliseconds
    ("time", 3, 32, dt.time(0, 0, 0, 1000), 1, True),
    ("time", -1, 64, dt.time(0, 0, 0, 1), 1, True),  # MicroTime: microseconds, as before
    ("time", 3, 32, dt.time(0, 0, 0, 1), 1, False),
    ("timestamp", 3, 64, dt.datetime(2024, 2, 29, 12, 34, 56, 789000), 1_709_210_096_789, True),
    ("timestamp", 0, 64, dt.datetime(1969, 12, 31, 23, 59, 59), -1000, True),
    ("timestamp", -1, 64, dt.datetime(1960, 1, 1, 0, 0, 0, 123456), -315_619_199_876_544, True),
    ("timestamp", 6, 64, dt.datetime(9999, 12, 31, 23, 59, 59, 999999), 253_402_300_799_999_999, True),
    ("timestamp", 6, 64, dt.datetime(1970, 1, 1), 1, False),
    ("timestamp", 3, 64, dt.datetime(1970, 1, 1, 0, 0, 0, 1000), 1, True),
]


@pytest.mark.parametrize(("typname", "precision", "bits", "pg", "target", "equal"), INTEGER_TEMPORALS)
def test_integer_temporal_targets(typname: str, precision: int, bits: int, pg: Any, target: Any,
                                  equal: bool) -> None:
    canon = _canon(Column("c", typname, "b", _canon_for(typname, "b"), precision), False, bits)
    assert (canon(pg) == canon(target)) is equal
    array = _canon(Column("c", f"_{typname}", "b", _canon_for(f"_{typname}", "b"), precision), False, bits)
    assert (array([pg, None]) == array([target, None])) is equal


def test_an_integer_for_a_type_without_one_is_a_verify_error_not_a_crash() -> None:
    canon = _canon(Column("c", "timestamptz", "b", _canon_for("timestamptz", "b")), False, 64)
    with pytest.raises(AttributeError):  # verify turns it into one line naming the column (VerifyError)
        canon(5)


# Debezium's numbers for dates and timestamps Python cannot hold, as a Protobuf target lands them: infinity's
# sentinels (streaming and snapshot), a BC date, and a timestamp past year 9999 (typname, precision, bits,
# PostgreSQL's value as verify loads it, the target's number).
BEYOND_PYTHON = [
    ("date", -1, 32, Unrepresentable("infinity"), -2_147_472_692),
    ("date", -1, 32, Unrepresentable("-infinity"), -625_821_272),
    ("date", -1, 32, Unrepresentable("0044-03-15 BC"), -735_160),
    ("timestamp", 6, 64, Unrepresentable("infinity"), 9_223_372_036_825_200_000),
    ("timestamp", 3, 64, Unrepresentable("12345-06-07 00:00:00"), 327_416_947_200_000),
]


@pytest.mark.parametrize(("typname", "precision", "bits", "pg", "target"), BEYOND_PYTHON)
def test_integer_temporals_python_cannot_hold_are_unrepresentable(typname: str, precision: int, bits: int, pg: Any,
                                                                  target: int) -> None:
    """Both sides unrepresentable: the row is listed so, neither a difference nor a stop; in an array, only where
    every other element is equal."""
    column = Column("c", typname, "b", _canon(Column("c", typname, "b", _canon_for(typname, "b"), precision),
                                              False, bits), precision)
    assert _compare([column], [column.canon(pg)], [column.canon(target)], set()) == ([], ["c"])
    array = Column("c", f"_{typname}", "b", _canon(Column("c", f"_{typname}", "b", _canon_for(f"_{typname}", "b"),
                                                          precision), False, bits), precision)
    equal, other = (array.canon(v) for v in ([pg, None], [target, None]))
    assert _compare([array], [equal], [other], set()) == ([], ["c"])
    assert _compare([array], [array.canon([pg, None])], [array.canon([target, 0])], set()) == (["c"], [])
