"""JSON text the way Kafka Connect's JsonConverter (Jackson 2) writes it, from orjson's output.

The two agree on everything but two details (measured on Debezium 3.6 records, byte for byte):
- Jackson writes a character outside the Basic Multilingual Plane as a `\\uD83C\\uDF89` surrogate-pair escape,
  orjson as its 4 UTF-8 bytes;
- Jackson's `\\u00XX` escapes of control characters use upper-case hex (`\\u001F`), orjson lower-case.
Both write U+007F, U+2028/2029, `/` and other non-ASCII characters raw, and use the short escapes
`\\b \\t \\n \\f \\r`. `needs_jackson` decides with C-level scans (bytes.isascii, bytes.translate, a regex with
a literal prefix), so an ordinary record pays well under a microsecond and is not rewritten.
"""

from __future__ import annotations

import re

_ASTRAL = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_NOT_ASTRAL_LEAD = bytes(b for b in range(256) if not 0xF0 <= b <= 0xF4)  # bytes.translate deletes these
_LOWER_HEX_ESCAPE = re.compile(rb"\\u00[01][a-f]")  # may also hit an escaped backslash: only a trigger
# An escape sequence, so that an escaped backslash followed by the text 'u001f' is not taken for an escape.
_ESCAPE = re.compile(rb"\\(?:u00([01][a-f])|.)")


def needs_jackson(data: bytes) -> bool:
    if not data.isascii() and data.translate(None, _NOT_ASTRAL_LEAD):
        return True
    # An escape starts with a backslash: memchr finds the first one (most records have none) faster than the
    # regex's own prefix search, and the regex starts there.
    first = data.find(b"\\")
    return first >= 0 and _LOWER_HEX_ESCAPE.search(data, first) is not None


def _surrogates(m: re.Match[bytes]) -> bytes:
    cp = ord(m.group(0).decode()) - 0x10000
    return b"\\u%04X\\u%04X" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF))


def _upper(m: re.Match[bytes]) -> bytes:
    hexpart = m.group(1)
    return m.group(0) if hexpart is None else b"\\u00" + hexpart.upper()


def jackson(data: bytes) -> bytes:
    """orjson's JSON text rewritten to Jackson's bytes (the same JSON value)."""
    if not data.isascii():
        data = _ASTRAL.sub(_surrogates, data)
    if _LOWER_HEX_ESCAPE.search(data):
        data = _ESCAPE.sub(_upper, data)
    return data
