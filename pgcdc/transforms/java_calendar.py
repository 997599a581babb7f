"""java.util.GregorianCalendar in UTC, both ways, as SimpleDateFormat uses it: the Julian calendar before
1582-10-15 (its default cutover), the Gregorian one after, eras AD and BC (year-of-era 1 BC is year 0), over
every long of milliseconds (a Debezium infinity read as unix time is some 292 million years away; Python's
datetime stops at year 9999 and is proleptic Gregorian), and its week fields (WEEK_OF_YEAR, WEEK_OF_MONTH,
DAY_OF_WEEK_IN_MONTH, the week year), computed only for a pattern that prints them.
"""

from __future__ import annotations

from typing import NamedTuple

DAY_MS = 86_400_000
CUTOVER_DAYS = -141427  # 1582-10-15 (Gregorian) as days since 1970-01-01
_JDN_1970 = 2440588  # the Julian day number of 1970-01-01


def gregorian_days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (m 1..12; d may be out of range: lenient)."""
    y -= m <= 2
    era = y // 400  # floor division: no correction for negative years as in C
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + (d - 1)


def julian_days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a Julian calendar date."""
    a = (14 - m) // 12
    yy, mm = y + 4800 - a, m + 12 * a - 3
    jdn = 1 + (153 * mm + 2) // 5 + 365 * yy + yy // 4 - 32083  # the Julian day number of day 1
    return jdn - _JDN_1970 + (d - 1)


def calendar_days(year: int, month: int, day: int) -> int:
    """GregorianCalendar's day for (year, month 0-based, day), months and days carried leniently."""
    year += month // 12
    month = month % 12 + 1
    days = gregorian_days(year, month, 1) + day - 1
    if days >= CUTOVER_DAYS:
        return days
    return julian_days(year, month, 1) + day - 1


def _gregorian_date(days: int) -> tuple[int, int, int]:
    """(year, month 1..12, day) of days since 1970-01-01, proleptic Gregorian (H. Hinnant's civil_from_days)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def _julian_date(days: int) -> tuple[int, int, int]:
    """(year, month 1..12, day) of days since 1970-01-01 in the Julian calendar (from the Julian day number)."""
    c = days + _JDN_1970 + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    return d - 4800 + m // 10, m + 3 - 12 * (m // 10), e - (153 * m + 2) // 5 + 1


class Fields(NamedTuple):
    """The calendar fields SimpleDateFormat prints: `year` is the year of `era` (0 BC, 1 AD), as Java's YEAR."""
    era: int
    year: int
    month: int        # 1..12
    day: int
    hour: int
    minute: int
    second: int
    milli: int
    weekday: int      # Monday 0 .. Sunday 6
    day_of_year: int  # 1.., counted from January 1 of the same calendar (1582 has 355 days)
    days: int         # since 1970-01-01


def fields(millis: int) -> Fields:
    days, ms = divmod(millis, DAY_MS)
    y, m, d = _gregorian_date(days) if days >= CUTOVER_DAYS else _julian_date(days)
    return Fields(int(y > 0), y if y > 0 else 1 - y, m, d, ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60,
                  ms % 1000, (days + 3) % 7, days - calendar_days(y, 0, 1) + 1, days)


# Week fields as GregorianCalendar computes them for the JVM default locale's week rules. Measured with Debezium
# 3.6.3's JVM (default locale `en`, as with LANG=C.UTF-8 or en_US): weeks start on Sunday and week 1 is the one
# holding January 1 (minimal days in the first week: 1), not ISO 8601's Monday and 4 days.
FIRST_DAY_OF_WEEK = 6  # Sunday, counted as Fields.weekday counts (Monday 0)
MINIMAL_DAYS = 1


def _week_start(days: int) -> int:
    """The first day of the week holding `days`."""
    return days - (days + 3 - FIRST_DAY_OF_WEEK) % 7


def _week_number(day1: int, days: int) -> int:
    """GregorianCalendar.getWeekNumber: the week of `days` counted from the period starting on `day1`."""
    first = _week_start(day1 + 6)
    if first - day1 >= MINIMAL_DAYS:
        first -= 7
    return (days - first) // 7 + 1


def proleptic_year(t: Fields) -> int:
    return t.year if t.era else 1 - t.year


def week_of_year(t: Fields) -> int:
    """WEEK_OF_YEAR (GregorianCalendar.computeFields): the last days of a year may be week 1 of the next."""
    year = proleptic_year(t)
    jan1 = calendar_days(year, 0, 1)
    week = _week_number(jan1, t.days)
    if week == 0:
        return _week_number(calendar_days(year - 1, 0, 1), jan1 - 1)
    next_jan1 = calendar_days(year + 1, 0, 1)
    first = _week_start(next_jan1 + 6)
    if first - next_jan1 >= MINIMAL_DAYS and t.days >= first - 7:
        return 1
    return week


def week_of_month(t: Fields) -> int:
    """WEEK_OF_MONTH: counted from the first of the month (in October 1582 the Julian October 1)."""
    return _week_number(calendar_days(proleptic_year(t), t.month - 1, 1), t.days)


def day_of_week_in_month(t: Fields) -> int:
    """DAY_OF_WEEK_IN_MONTH: counted from the first of the month (Julian October 1 in 1582), as `W` is."""
    return (t.days - calendar_days(proleptic_year(t), t.month - 1, 1)) // 7 + 1


def week_year(t: Fields) -> int:
    """GregorianCalendar.getWeekYear: the year week 1 of which holds the date, proleptic (1 BC is 0). Up to 1583
    its slow path finds the next year's January 1 by setting YEAR to the proleptic year + 1 while the era stays
    BC, which for a BC date is a January 1 in the AD years (year n BC: AD n - 1; 1 BC: 1 BC itself)."""
    year = proleptic_year(t)
    if year > 1583:
        week = week_of_year(t)
        if t.month == 1:
            return year - 1 if week >= 52 else year
        return year + 1 if week == 1 else year
    length = calendar_days(year + 1, 0, 1) - calendar_days(year, 0, 1)
    if MINIMAL_DAYS < t.day_of_year < length - 6:
        return year
    jan1 = calendar_days(year, 0, 1)
    first = (FIRST_DAY_OF_WEEK - (jan1 + 3)) % 7 + 1  # day of year of the first first-day-of-week
    if t.day_of_year < first:
        return year - 1 if first <= MINIMAL_DAYS else year
    nxt = calendar_days(year + 1 if t.era else 1 - (year + 1), 0, 1)
    before = (FIRST_DAY_OF_WEEK - (nxt + 3)) % 7 or 7  # days of the next year before its first week start
    if before >= MINIMAL_DAYS and length - t.day_of_year + 1 <= 7 - before:
        return year + 1
    return year
