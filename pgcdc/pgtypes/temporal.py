"""Dates and times from PostgreSQL's ISO text output (DateStyle ISO) to Debezium's encodings.

Debezium (time.precision.mode=adaptive) sends date as days since the epoch, time and timestamp as milli- or
microseconds depending on the column's precision, and timestamptz as an ISO-8601 string in UTC
(io.debezium.time.ZonedTimestamp).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
EPOCH = datetime(1970, 1, 1)
EPOCH_TZ = datetime(1970, 1, 1, tzinfo=UTC)
ONE_US = timedelta(microseconds=1)
# What Debezium 3.6 writes for PostgreSQL's infinite dates and timestamps, keyed by PostgreSQL's text (measured:
# tests/data/debezium/types/extreme_*; LocalDate/Instant extremes after Debezium's own offsets). A date differs
# between streaming (pgoutput text) and JDBC (a snapshot, and array elements in both).
DATE_INFINITY = {"infinity": -2_147_472_692, "-infinity": -2_147_472_691}
DATE_INFINITY_JDBC = {"infinity": -622_191_234, "-infinity": -625_821_272}
TIMESTAMP_US_INFINITY = {"infinity": 9_223_372_036_825_200_000, "-infinity": -9_223_372_036_832_400_000}
TIMESTAMP_MS_INFINITY = {"infinity": 9_223_372_036_825_200, "-infinity": -9_223_372_036_832_400}
ISO_DATE_INFINITY = {"infinity": "-5877611-06-21Z", "-infinity": "-5877611-06-22Z"}
ISO_DATE_INFINITY_JDBC = {"infinity": "+292278994-08-16Z", "-infinity": "+292269055-12-02Z"}
ISO_TIMESTAMP_INFINITY = {"infinity": "+294247-01-10T04:00:25.2Z", "-infinity": "-290308-12-21T19:59:27.6Z"}
# A timestamptz array element '-infinity' is read as this instant (java.sql.Timestamp's minimum, era dropped).
TIMESTAMPTZ_INFINITY_JDBC = {"-infinity": "292269055-12-02 23:00:00+00"}
US_PER_DAY = 86_400_000_000


def _bc(text: str) -> tuple[str, bool]:
    return (text[:-3], True) if text.endswith(" BC") else (text, False)


def _date_ordinal(text: str) -> int:
    """Proleptic Gregorian ordinal (date.toordinal() numbering) of 'YYYY-MM-DD[ BC]', any year."""
    body, bc = _bc(text)
    y, m, d = body.split("-")
    year = int(y)
    if bc:
        year = 1 - year  # 1 BC is astronomical year 0
    if 1 <= year <= 9999:
        return date(year, int(m), int(d)).toordinal()
    # Outside Python's range: shift by whole 400-year Gregorian cycles (146097 days each).
    cycles, rem = divmod(year - 1, 400)
    return date(rem + 1, int(m), int(d)).toordinal() + cycles * 146_097


def date_days(text: str) -> int:
    """Days since 1970-01-01."""
    return _date_ordinal(text) - EPOCH_ORDINAL


def time_us(text: str) -> int:
    """Microseconds of the day for 'HH:MM:SS[.ffffff]' (24:00:00 is allowed)."""
    hh, mm, rest = text.split(":", 2)
    if "." in rest:
        ss, frac = rest.split(".", 1)
        us = int(frac.ljust(6, "0")[:6])
    else:
        ss, us = rest, 0
    return ((int(hh) * 60 + int(mm)) * 60 + int(ss)) * 1_000_000 + us


def _split_ts(text: str) -> tuple[str, str]:
    d, t = text.split(" ", 1)
    return d, t


def timestamp_us(text: str) -> int:
    """Microseconds since the epoch for a `timestamp without time zone` literal."""
    body, bc = _bc(text)
    if not bc and len(body) >= 19 and body[4] == "-":
        try:
            return (datetime.fromisoformat(body) - EPOCH) // ONE_US
        except ValueError:
            pass
    d, t = _split_ts(body)
    days = date_days(d + (" BC" if bc else ""))
    return days * US_PER_DAY + time_us(t)


_LONG = 2**64
_MAX_SECONDS = (2**63 - 1) // 1_000_000


def micro_timestamp(text: str) -> int:
    """io.debezium.time.MicroTimestamp of a `timestamp` literal: timestamp_us, past ±2^63 µs as Java makes it."""
    body, bc = _bc(text)
    if not bc and len(body) >= 19 and body[4] == "-":  # years 1..9999: never near the long range
        try:
            return (datetime.fromisoformat(body) - EPOCH) // ONE_US
        except ValueError:
            pass
    return java_epoch_micros(timestamp_us(text))


def java_epoch_micros(us: int) -> int:
    """Debezium's epoch micros of an Instant: TimeUnit.SECONDS.toMicros(seconds) saturates at the long range, then
    the second's micros are added in wrapping long arithmetic (measured: '294276-12-31 23:59:59.999999' is
    -9223372036853775810)."""
    secs, micros = divmod(us, 1_000_000)
    if -_MAX_SECONDS <= secs <= _MAX_SECONDS:
        return us
    base = 2**63 - 1 if secs > 0 else -(2**63)
    return (base + micros + 2**63) % _LONG - 2**63


def _offset_seconds(tz: str) -> int:
    sign = -1 if tz[0] == "-" else 1
    parts = [int(p) for p in tz[1:].split(":")]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def timestamptz_us(text: str) -> int:
    """Microseconds since the epoch (UTC) for a `timestamp with time zone` literal."""
    body, bc = _bc(text)
    if not bc and len(body) >= 22 and body[4] == "-":
        try:
            return (datetime.fromisoformat(body) - EPOCH_TZ) // ONE_US
        except ValueError:
            pass
    # The zone is the last '+' or '-' after the time part.
    d, t = _split_ts(body)
    cut = max(t.rfind("+"), t.rfind("-"))
    local = date_days(d + (" BC" if bc else "")) * US_PER_DAY + time_us(t[:cut])
    return local - _offset_seconds(t[cut:]) * 1_000_000


def iso_utc(us: int, digits: int = 6) -> str:
    """Debezium's ZonedTimestamp text: ISO-8601 in UTC with `digits` fraction digits (the column's precision,
    zero-padded: Debezium 3 keeps `.000000` for a whole second in a timestamptz(6)), then 'Z'."""
    days, rest = divmod(us, US_PER_DAY)
    secs, micros = divmod(rest, 1_000_000)
    frac = f".{micros:06d}"[: digits + 1] if digits > 0 else ""
    if 0 <= us < 253_402_300_800_000_000:  # years 1970..9999: datetime's own formatting is faster
        return (EPOCH + timedelta(microseconds=us - micros)).isoformat() + frac + "Z"
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    return f"{_far_date(days)}T{hh:02d}:{mm:02d}:{ss:02d}{frac}Z"


def _far_date(days: int) -> str:
    ordinal = days + EPOCH_ORDINAL
    cycles, rem = divmod(ordinal - 1, 146_097)
    d = date.fromordinal(rem + 1)
    year = d.year + cycles * 400
    ys = f"{year:04d}" if 0 <= year <= 9999 else f"{year:+05d}"
    return f"{ys}-{d.month:02d}-{d.day:02d}"


# -- before the Common Era and before the Gregorian calendar ---------------------------------------------------
# Measured on Debezium 3.6 (tests/conformance/test_types_more.py):
# - streamed scalar dates and timestamps are proleptic Gregorian, BC years astronomical (1 BC is year 0);
# - in a snapshot (JDBC) a scalar date loses its era: '0044-03-15 BC' is read as 0044-03-15;
# - array elements go through java.sql.Date/Timestamp: a date loses its era and a day of the 1582 Gregorian gap
#   (10-05..10-14) moves 10 days on; a timestamp before 1582-10-15 is read in the Julian calendar, era kept;
#   a timestamptz loses its era and a day of the gap moves 10 days on; in a snapshot a scalar date is read like
#   an array's.
GREGORIAN_START = date(1582, 10, 15).toordinal() - EPOCH_ORDINAL  # days since the epoch
_GAP = (GREGORIAN_START - 10, GREGORIAN_START - 1)


def _julian_days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a Julian-calendar date (astronomical year), via the Julian Day Number."""
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    return day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083 - 2_440_588


def without_era(text: str) -> str:
    return text[:-3] if text.endswith(" BC") else text


def date_days_jdbc(text: str) -> int:
    """A date as java.sql.Date reads it: era dropped, a day of the 1582 gap 10 days on."""
    days = date_days(without_era(text))
    return days + 10 if _GAP[0] <= days <= _GAP[1] else days


def timestamptz_text_jdbc(text: str) -> str:
    """A timestamptz text as an array element reads it: era dropped, a day of the 1582 gap 10 days on."""
    special = TIMESTAMPTZ_INFINITY_JDBC.get(text)
    if special is not None or text == "infinity":
        return special or text
    text = without_era(text)
    d, _, rest = text.partition(" ")
    days = date_days(d)
    if _GAP[0] <= days <= _GAP[1]:
        return f"{_far_date(days + 10)} {rest}"
    return text


def timestamp_us_jdbc(text: str) -> int:
    """A timestamp as java.sql.Timestamp reads it: the Julian calendar before 1582-10-15."""
    us = timestamp_us(text)
    if us >= GREGORIAN_START * US_PER_DAY:
        return us
    body, bc = _bc(text)
    d, t = _split_ts(body)
    y, m, day = d.split("-")
    year = 1 - int(y) if bc else int(y)
    return _julian_days(year, int(m), int(day)) * US_PER_DAY + time_us(t)


def iso_text(text: str) -> str:
    """PostgreSQL's 'YYYY-MM-DD[ HH:MM:SS[.f]][ BC]' with an astronomical ISO year: '0044-03-15 BC' ->
    '-0043-03-15'."""
    body, bc = _bc(text)
    if not bc:
        # java.time writes a year beyond 9999 with its sign (measured: '+5874897-12-31').
        return body if body[4:5] == "-" else "+" + body
    y, rest = body.split("-", 1)
    year = 1 - int(y)
    return f"{year:+05d}-{rest}" if year else f"0000-{rest}"


def iso_date_of_days(days: int) -> str:
    return _far_date(days)


def iso_date_jdbc(text: str) -> str:
    """time.precision.mode=isostring in a snapshot: the date as JDBC reads it (a BC era dropped), with a 'Z'."""
    special = ISO_DATE_INFINITY_JDBC.get(text)
    return special if special is not None else iso_date_of_days(date_days_jdbc(text)) + "Z"


def date_days_jdbc_or_infinity(text: str) -> int:
    special = DATE_INFINITY_JDBC.get(text)
    return special if special is not None else date_days_jdbc(text)


# -- times -------------------------------------------------------------------------------------------------------
# A time array's elements go through java.sql.Time: whole milliseconds, 24:00:00 is midnight (measured).
MS_PER_DAY = 86_400_000


def time_ms_jdbc(text: str) -> int:
    return time_us(text) // 1000 % MS_PER_DAY


def iso_time(text: str) -> str:
    """time.precision.mode=isostring: PostgreSQL's text with a 'Z'; 24:00:00 is midnight (measured)."""
    return "00" + text[2:] + "Z" if text[:2] == "24" else text + "Z"


def iso_time_jdbc(text: str) -> str:
    """An isostring time array element: milliseconds only, the fraction's trailing zeros dropped (java.time's
    ISO_LOCAL_TIME), 24:00:00 as midnight."""
    ms = time_ms_jdbc(text)
    secs, frac = divmod(ms, 1000)
    hh, rest = divmod(secs, 3600)
    mm, ss = divmod(rest, 60)
    fraction = f".{frac:03d}".rstrip("0") if frac else ""
    return f"{hh:02d}:{mm:02d}:{ss:02d}{fraction}Z"
