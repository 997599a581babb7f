"""Inserts and updates handed to the sink as their `after` row alone, when the sink's transform chain makes its
record from nothing else (transforms/compiled.py `compile_rows`: ExtractNewRecordState, RegexRouters).

The chain's compiled path would cut that row out of the written envelope and put it behind the output schema:
writing the envelope first (its schema bytes, source block and timestamps) is work whose bytes are thrown
away. Here the row's JSON bytes, the very bytes the envelope template would have put at `"after":`, go to the
sink's `RowSend`, looked up once per table version; whatever it does not take (a `before` row, extra headers,
a table without a usable template or without a compiled plan) is emitted whole, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgcdc.envelope import connect
from pgcdc.envelope.table import TableEvents

if TYPE_CHECKING:
    from pgcdc.capture.changes import ChangeCapture

# (topic, envelope bytes up to the payload) -> send_row(key, row, headers) -> sent, or None
RowSenders = Callable[[str, bytes], "Callable[[bytes | None, bytes, Any], bool] | None"]
Emit = Callable[..., None]
UNKNOWN = object()  # no sender looked up yet for a table version


def table_sender(capture: ChangeCapture, t: TableEvents, senders: Callable[[str, bytes], Any]) -> Any:
    """The sink's sender for `t`'s events (`senders(topic, envelope bytes up to the payload)`), kept per table
    version in `capture._row_senders`. Only where the envelope is written from its template: the row is then
    `dumps(after)` and the source block the transaction's."""
    if t not in capture._templates:
        capture._template(t)  # what the whole path would make for this event
    tpl = capture._table_templates.get(t)
    send = capture._row_senders[t] = senders(t.topic, t.value_wrap.prefix) if tpl is not None and tpl.usable \
        else None
    return send


def row_emitter(capture: ChangeCapture, senders: RowSenders) -> Emit:
    """An `_emit` for `capture` that sends rows alone where the sink's `senders` take them."""
    emit = capture._emit  # the whole event
    known: dict[TableEvents, Any] = capture._row_senders
    dumps = connect.dumps
    headers = capture.headers

    def emit_row(t: TableEvents, op: str, before: Any, after: Any, key: bytes | None, lsn: int,
                 extra: list[tuple[str, bytes]] | None = None) -> None:
        if before is None and after is not None and extra is None:
            send = known.get(t, UNKNOWN)
            if send is UNKNOWN:  # cold path: once per table version
                send = table_sender(capture, t, senders)
            if send is not None and send(key, dumps(after), headers):
                capture.events += 1
                capture.tx_events += 1
                capture.last_lsn = lsn
                return
        emit(t, op, before, after, key, lsn, extra)

    return emit_row
