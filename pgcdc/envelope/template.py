"""A change event's value as a bytes template per table, filled with `%` per transaction and per event.

Of a table's change events, only these fields vary: per transaction the commit time (`source.ts_ms/us/ns`),
the xid (`source.txId`) and the last commit's LSN (in `source.sequence`); per event the rows, the op, the
event's LSN (`source.lsn`, `source.sequence`), the transaction block and the event's own timestamps. The
template is made by serializing the envelope dict once, through the same wrapper as the dict path, with
markers in those places and turning the markers into `%d`/`%s`: what it writes is what the dict path writes,
by construction. Markers are raw control bytes, which orjson never writes unescaped, so nothing serialized
around them can collide with them; a template whose markers do not each appear exactly once, in envelope
order, is refused and the caller keeps the dict path.

Two rounds: `TableTemplate.transaction(...)` fills the transaction's fields (one `%` per table and
transaction), and the result takes the event's fields (one `%` per event).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

# Per event.
BEFORE = orjson.Fragment(b"\x01B")
AFTER = orjson.Fragment(b"\x01A")
LSN = orjson.Fragment(b"\x01L")
TRANSACTION = orjson.Fragment(b"\x01X")
OP = orjson.Fragment(b"\x01O")
TS_MS = orjson.Fragment(b"\x01M")
TS_US = orjson.Fragment(b"\x01U")
TS_NS = orjson.Fragment(b"\x01N")
# Per transaction (`sequence` holds both: the last commit's LSN and the event's).
COMMIT_MS = orjson.Fragment(b"\x01m")
SEQUENCE = orjson.Fragment(b"\x01S")
COMMIT_US = orjson.Fragment(b"\x01u")
COMMIT_NS = orjson.Fragment(b"\x01n")
TXID = orjson.Fragment(b"\x01I")

# `sequence` is the string '["<last commit LSN>","<event LSN>"]' (or '[null,"<event LSN>"]' before any
# commit), written by orjson with its quotes escaped; both LSNs are digits, which need no escaping.
_SEQUENCE_KNOWN = orjson.dumps('["\x02","\x03"]').replace(b"\\u0002", b"%d").replace(b"\\u0003", b"%%d")
_SEQUENCE_NULL = orjson.dumps('[null,"\x03"]').replace(b"\\u0003", b"%%d")

# In envelope order (before, after, source{ts_ms, sequence, ts_us, ts_ns, txId, lsn}, transaction, op,
# ts_ms, ts_us, ts_ns), as JsonConverter writes the fields: marker -> what it becomes. After the first `%`,
# `%%d` is `%d`: per-event markers are escaped once.
_MARKS = ((b"\x01B", b"%%s"), (b"\x01A", b"%%s"), (b"\x01m", b"%d"), (b"\x01S", None), (b"\x01u", b"%d"),
          (b"\x01n", b"%d"), (b"\x01I", b"%d"), (b"\x01L", b"%%d"), (b"\x01X", b"%%s"), (b"\x01O", b"%%s"),
          (b"\x01M", b"%%d"), (b"\x01U", b"%%d"), (b"\x01N", b"%%d"))


class TableTemplate:
    """One table's change-event value template. `source` is the table's source block with the markers above
    in its varying fields; `with_transaction`: the transaction block varies per event (else it is null)."""

    __slots__ = ("_known", "_null")

    def __init__(self, serialize: Callable[[dict[str, Any]], bytes], source: dict[str, Any],
                 with_transaction: bool) -> None:
        payload = {"before": BEFORE, "after": AFTER, "source": source,
                   "transaction": TRANSACTION if with_transaction else None,
                   "op": OP, "ts_ms": TS_MS, "ts_us": TS_US, "ts_ns": TS_NS}
        data = serialize(payload)
        marks = [(m, to) for m, to in _MARKS if with_transaction or m != b"\x01X"]
        positions = [data.find(m) for m, _ in marks]
        self._known: bytes | None = None
        self._null: bytes | None = None
        if data.count(b"\x01") != len(marks) or -1 in positions or positions != sorted(positions):
            return
        data = data.replace(b"%", b"%%%%")  # a literal '%' survives both rounds
        for m, to in marks:
            if to is not None:
                data = data.replace(m, to)
        self._known = data.replace(b"\x01S", _SEQUENCE_KNOWN)
        self._null = data.replace(b"\x01S", _SEQUENCE_NULL)

    @property
    def usable(self) -> bool:
        return self._known is not None

    def transaction(self, commit_us: int, xid: int, last_commit_lsn: int | None) -> bytes | None:
        """The template of this transaction's events, to fill with `%` and (before, after, lsn, lsn,
        [transaction,] op, ts_ms, ts_us, ts_ns): rows, transaction block and op as JSON bytes."""
        if self._known is None or self._null is None:
            return None
        if last_commit_lsn is None:
            return self._null % (commit_us // 1000, commit_us, commit_us * 1000, xid)
        return self._known % (commit_us // 1000, last_commit_lsn, commit_us, commit_us * 1000, xid)
