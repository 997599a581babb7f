"""Streamed changes handed to the sink as their parts (rows, op, LSN), when its value converter writes the record
from them (converters/avro_events.py: Confluent's AvroConverter).

The converting sink would otherwise take the envelope's JsonConverter bytes, written from the table's template,
and parse them again before encoding: the source block, the same for a whole transaction but for its two LSN
fields, would be rendered and parsed per event. Here the sink's `EventSend` for the table version (looked up once)
takes the rows, the op and the LSN per event, and the transaction's source block once per transaction. What it
does not take (extra headers, a table without a usable template, another converter) is emitted whole, as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pgcdc.capture.rows import UNKNOWN, Emit, table_sender
from pgcdc.envelope.native import NativeEvents, json_rows, native_events
from pgcdc.envelope.table import TableEvents

if TYPE_CHECKING:
    from pgcdc.capture.changes import ChangeCapture

# (topic, envelope bytes up to the payload) -> an EventSend (converters/sink.py), or None
EventSenders = Callable[[str, bytes], Any]
# The key of an insert or of an update without its old row as the capture hands it to `emit_event`: the key of
# its `after` row, not yet written. Where the key converter writes keys from their fields (`EventSend.keyed`:
# Confluent's AvroConverter, a key of plain values), JsonConverter's bytes of the key, which it would parse again,
# are never made.
ROW_KEY: Any = object()


def sequence_text(last_commit_lsn: int | None, lsn: int) -> str:
    """Debezium's `source.sequence`: the last commit's end LSN (null before any) and the event's, as strings."""
    return f'["{last_commit_lsn}","{lsn}"]' if last_commit_lsn is not None else f'[null,"{lsn}"]'


def event_emitter(capture: ChangeCapture, senders: EventSenders) -> Emit:
    """An `_emit` for `capture` that hands events to the sink's `senders` where they take them."""
    emit = capture._emit  # the whole event
    known: dict[TableEvents, Any] = capture._row_senders
    headers = capture.headers
    source_block = capture._source_block

    def emit_event(t: TableEvents, op: str, before: Any, after: Any, key: bytes | None, lsn: int,
                   extra: list[tuple[str, bytes]] | None = None) -> None:
        if extra is None:
            send = known.get(t, UNKNOWN)
            fresh = send is UNKNOWN
            if fresh:  # cold path: once per table version
                send = table_sender(capture, t, senders)
            if send is not None:
                last = capture.last_commit_lsn
                xid, commit_us = capture.xid, capture.commit_us
                token = (xid, commit_us, last, capture.xmin)
                if send.txn != token:  # the source block but its `sequence` and `lsn`, written once per transaction
                    send.begin(commit_us, xid, (capture.xmin, capture.streaming_snapshot),
                               lambda: source_block(t.schema, t.table, lsn, xid), token)
                if key is not ROW_KEY:
                    send(key, headers, op, before, after, sequence_text(last, lsn), lsn, time.time_ns())
                elif send.key_row is None or not send.keyed(t.key_payload(after), headers, op, before, after,
                                                            sequence_text(last, lsn), lsn, time.time_ns()):
                    send(t.key(after), headers, op, before, after, sequence_text(last, lsn), lsn, time.time_ns())
                if fresh:  # this event's rows are JsonConverter's: native ones from the next
                    native(t, send)
                capture.events += 1
                capture.tx_events += 1
                capture.last_lsn = lsn
                return
        if key is ROW_KEY:
            key = t.key(after)
        if isinstance(t, NativeEvents):  # its rows back in JsonConverter's form, for the whole path
            before, after = json_rows(t, before, after)
            t = t.whole
        emit(t, op, before, after, key, lsn, extra)

    def native(t: TableEvents, send: Any) -> None:
        """From the table's next change on, its rows carry the values Avro writes (floats, bytes: envelope/native.py):
        every event of the table goes to `send` now, but for those with extra headers, whose rows json_rows gives
        back."""
        n = native_events(t) if not isinstance(t, NativeEvents) else None
        oid = next((o for o, x in capture.relations.items() if x is t), None)
        if n is not None and oid is not None:
            capture.relations[oid] = n
            known[n] = send
            send.native([field for field, _ in n.back])

    return emit_event
