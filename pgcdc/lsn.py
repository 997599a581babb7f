"""Log sequence numbers: 64-bit WAL positions, written by PostgreSQL as two hex halves "16/B374D848".

LSNs stay plain ``int`` everywhere (they are compared and stored on the hot path); these two functions are
the only place that knows the text form. PostgreSQL prints it with ``%X/%X`` (uppercase, no zero padding)
and accepts either case on input (pg_lsn_in, src/backend/utils/adt/pg_lsn.c).
"""

from __future__ import annotations

MAX_LSN = 0xFFFF_FFFF_FFFF_FFFF

_HEX = frozenset("0123456789abcdefABCDEF")


def parse_lsn(s: str) -> int:
    """'16/B374D848' -> 0x16B374D848. Raises ValueError on anything PostgreSQL would refuse."""
    hi, sep, lo = s.partition("/")
    # pg_lsn_in takes 1-8 hex digits on each side; int(x, 16) alone would also accept "0x", "_" and signs.
    if not sep or not (0 < len(hi) <= 8 and 0 < len(lo) <= 8) or not _HEX.issuperset(hi + lo):
        raise ValueError(f"invalid LSN {s!r}: expected two hex numbers like '16/B374D848'")
    return (int(hi, 16) << 32) | int(lo, 16)


def format_lsn(lsn: int) -> str:
    """0x16B374D848 -> "16/B374D848" (PostgreSQL's %X/%X form)."""
    if not 0 <= lsn <= MAX_LSN:
        raise ValueError(f"LSN out of range: {lsn}")
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


# Microseconds from the Unix epoch to PostgreSQL's (2000-01-01): the base of every timestamp in the
# replication protocol (commit times, standby status updates).
PG_EPOCH_US = 946_684_800_000_000
