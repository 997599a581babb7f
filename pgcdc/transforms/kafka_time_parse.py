"""java.text.SimpleDateFormat.parse as Kafka Connect's TimestampConverter calls it: lenient (the default), in
UTC, on a java.util.Date (milliseconds since the epoch), through GregorianCalendar (Julian before 1582-10-15).

The pattern is compiled once into a list of field parsers. As in SimpleDateFormat.subParse: a numeric field
takes as many digits as follow, unless the next field is numeric too and abuts it, when it takes exactly its
letter count; text fields (month names, AM/PM) match case-insensitively, longest first; literal text must match;
text left over after the pattern is ignored. Lenient resolution: a month, day, hour, ... outside its range
carries into the next larger field (2024-02-30 is 2024-03-01). A two-letter year read as two digits is in the
century starting 80 years before now. Day names, day of year, week fields and eras are refused in a pattern
used to parse (ValueError), since their resolution depends on which field was set last.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from pgcdc.transforms.java_calendar import calendar_days as _days
from pgcdc.transforms.kafka_time import _MONTHS, _TOKEN

_DAY_MS = 86_400_000
_NUMERIC = set("yMdHkKhmsS")
_DIGITS = re.compile(r"\d+")


class ParseError(ValueError):
    pass


Fields = dict[str, int]
Step = Callable[[str, int, Fields], int]  # (text, position, fields) -> new position; ParseError when no match


def _skip_blanks(text: str, pos: int) -> int:
    """subParse skips spaces and tabs before a field (and fails at the end of the text)."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos >= len(text):
        raise ParseError("end of text")
    return pos


def _numeric(letter: str, width: int | None, order: int) -> Step:
    """DecimalFormat's integer parse (an optional minus, digits), `width` characters at most when abutting."""
    number = re.compile(r"-?\d+")

    def step(text: str, pos: int, fields: Fields) -> int:
        pos = _skip_blanks(text, pos)
        m = number.match(text[:pos + width] if width else text, pos)
        if m is None:
            raise ParseError(letter)
        value = int(m.group())
        if letter == "y" and fields["_ycount"] <= 2 and len(m.group()) == 2 and m.group().isdigit():
            fields["y2"] = value
        else:
            fields[letter] = value
        fields[f"@{letter}"] = order  # when it was set: the hour fields resolve by the latest
        return m.end()
    return step


def _words(letter: str, words: list[tuple[str, int]], order: int) -> Step:
    ordered = sorted(words, key=lambda w: -len(w[0]))

    def step(text: str, pos: int, fields: Fields) -> int:
        pos = _skip_blanks(text, pos)
        for word, value in ordered:  # matchString: the longest match, ignoring case
            if text[pos:pos + len(word)].lower() == word.lower():
                fields[letter] = value
                fields[f"@{letter}"] = order
                return pos + len(word)
        raise ParseError(letter)
    return step


def _offset(text: str, pos: int, count: int, colon: bool) -> tuple[int, int]:
    """subParseNumericZone: hh (one digit only with a colon and no count), then mm unless count is 1, with a
    colon between when `colon`; returns (minutes, new position)."""
    m = re.compile(r"(\d\d)" if count > 0 or not colon else r"(\d\d?)").match(text, pos)
    if m is None or int(m.group(1)) > 23:
        raise ParseError("zone")
    hours, pos = int(m.group(1)), m.end()
    minutes = 0
    if count != 1:
        mm = re.compile(r":(\d\d)" if colon else r"(\d\d)").match(text, pos)
        if mm is None or int(mm.group(1)) > 59:
            raise ParseError("zone")
        minutes, pos = int(mm.group(1)), mm.end()
    return hours * 60 + minutes, pos


def _zone(letter: str, count: int) -> Step:
    def step(text: str, pos: int, fields: Fields) -> int:
        pos = _skip_blanks(text, pos)
        c = text[pos]
        if letter == "X":  # ISO 8601: Z, or +hh / +hhmm / +hh:mm by the letter count
            if c == "Z":
                fields["zone"] = 0
                return pos + 1
            if c not in "+-":
                raise ParseError("zone")
            minutes, pos = _offset(text, pos + 1, count, count == 3)
        elif c in "+-":  # RFC 822: +hhmm
            minutes, pos = _offset(text, pos + 1, 0, False)
        elif text[pos:pos + 3].upper() == "GMT":
            pos += 3
            if pos >= len(text) or text[pos] not in "+-":
                fields["zone"] = 0
                return pos
            c = text[pos]
            minutes, pos = _offset(text, pos + 1, 0, True)
        elif text[pos:pos + 3].upper() == "UTC":  # a zone name; pgcdc knows only UTC's
            fields["zone"] = 0
            return pos + 3
        else:
            raise ParseError("zone")
        fields["zone"] = minutes if c == "+" else -minutes
        return pos
    return step


def _literal(lit: str) -> Step:
    def step(text: str, pos: int, fields: Fields) -> int:
        if not text.startswith(lit, pos):
            raise ParseError(lit)
        return pos + len(lit)
    return step


def simple_date_parser(pattern: str, now_year: int | dt.datetime | None = None) -> Callable[[str], int]:
    """A parser of text to epoch milliseconds for a SimpleDateFormat pattern (ValueError for a pattern it cannot
    parse with); the parser raises ParseError when the text does not match."""
    tokens: list[tuple[str, int] | str] = []
    for m in _TOKEN.finditer(pattern):
        if m.group(1) is not None:
            tokens.append(m.group(1) or "'")
        elif m.group(2) is not None:
            tokens.append((m.group(2), len(m.group(0))))
        else:
            tokens.append(m.group(0))
    steps: list[Step] = []
    year_count = 4
    for i, tok in enumerate(tokens):
        if isinstance(tok, str):
            steps.append(_literal(tok))
            continue
        letter, count = tok
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        # shouldObeyCount: the next field is numeric (M only as a number), so this one takes exactly its count
        abutting = isinstance(nxt, tuple) and nxt[0] in _NUMERIC and not (nxt[0] == "M" and nxt[1] >= 3)
        if letter == "M" and count >= 3:
            steps.append(_words("M", [(n, k + 1) for k, n in enumerate(_MONTHS)]
                                + [(n[:3], k + 1) for k, n in enumerate(_MONTHS)], i))
        elif letter in _NUMERIC:
            if letter == "y":
                year_count = count
            steps.append(_numeric(letter, count if abutting else None, i))
        elif letter == "a":
            steps.append(_words("a", [("AM", 0), ("PM", 1)], i))
        elif letter in "XZz":
            steps.append(_zone(letter, count))
        else:
            raise ValueError(f"pattern letter '{letter}' is not supported for parsing by pgcdc (supported: "
                             "y, M, d, H, k, K, h, m, s, S, a, X, Z, z)")
    def parse(text: str) -> int:
        fields: Fields = {"_ycount": year_count}
        pos = 0
        for step in steps:
            pos = step(text, pos, fields)
        if "y2" not in fields:
            return _resolve(fields)
        # A two-digit year: in the century that starts 80 years before now (SimpleDateFormat's
        # defaultCenturyStart, an instant), first by the year, then moved on 100 years if still before it.
        now = now_year if now_year is not None else dt.datetime.now(dt.UTC)
        if not isinstance(now, dt.datetime):
            now = dt.datetime(now, 1, 1)
        try:
            start = now.replace(year=now.year - 80)
        except ValueError:  # Calendar.add(YEAR, -80) on February 29 of a year whose -80th is no leap year
            start = now.replace(year=now.year - 80, day=28)
        base = start.year // 100 * 100
        fields["y"] = base + fields["y2"] + (100 if fields["y2"] < start.year % 100 else 0)
        millis = _resolve(fields)
        start_ms = int((start.replace(tzinfo=None) - dt.datetime(1970, 1, 1)).total_seconds() * 1000)
        if millis < start_ms:
            fields["y"] += 100
            millis = _resolve(fields)
        return millis
    return parse


def _resolve(f: Fields) -> int:
    """GregorianCalendar.computeTime of the parsed fields (lenient), minus the parsed zone offset."""
    # Calendar.selectFields: HOUR_OF_DAY (H, k) against HOUR (h, K) with AM_PM, by when each was set; HOUR
    # counts only with AM_PM beside it, unless neither H nor k was parsed.
    hod = max(f.get("@H", -1), f.get("@k", -1))
    h_stamp = max(f.get("@h", -1), f.get("@K", -1))
    a_stamp = f.get("@a", -1)
    best = max(-1 if h_stamp < 0 or a_stamp < 0 else max(h_stamp, a_stamp), hod)
    if best < 0:
        best = max(h_stamp, a_stamp)
    if best < 0:
        hour = 0
    elif best == hod:
        hour = f["H"] if f.get("@H", -1) == hod else (0 if f["k"] == 24 else f["k"])
    else:
        hour = (0 if f.get("h") == 12 else f.get("h", 0)) if f.get("@h", -1) == h_stamp >= 0 else f.get("K", 0)
        hour += 12 * f.get("a", 0)
    days = _days(f.get("y", 1970), f.get("M", 1) - 1, f.get("d", 1))
    millis = days * _DAY_MS + hour * 3_600_000 + f.get("m", 0) * 60_000 + f.get("s", 0) * 1000 + f.get("S", 0)
    return millis - f.get("zone", 0) * 60_000
