"""pgcdc.spark's Protobuf reader takes a google.type.Date back to the day count the writer was given, before the
1582 calendar change too: both sides use java.util.GregorianCalendar's fields (Julian dates before 1582-10-15),
as Confluent's converter writes them. No Spark session: the reader's conversion alone."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pgcdc.converters.protobuf_values import _set_date
from pgcdc.spark.proto_text import _date

# 0001-01-01, the days around the cutover (1582-10-04 Julian is followed by 1582-10-15), 1000-03-01 (a Julian
# leap day before it), the epoch, a day before it, 9999-12-31.
DAYS = [-719162, -719161, -141430, -141428, -141427, -141426, -354000, -354100, -1, 0, 1, 2932896]


@pytest.mark.parametrize("days", [*DAYS, *range(-141500, -141350, 7)])
def test_a_date_reads_back_as_written(days: int) -> None:
    message = SimpleNamespace(year=0, month=0, day=0)
    _set_date(message, days)
    assert _date(message) == days
