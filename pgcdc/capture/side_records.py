"""The records a capture writes besides row changes: transaction metadata (BEGIN, END and each event's
`transaction` block), logical decoding messages and heartbeats. A part of `ChangeCapture` (changes.py), whose
state they read and write."""

from __future__ import annotations

import time
from typing import Any

from pgcdc.capture.java_order import java_hashmap_order
from pgcdc.capture.position import Position
from pgcdc.protocol import messages as m

# Debezium 3.6 names the data collection of logical-decoding messages in END events by a Java object's
# toString() (class@identity-hash, different every run). We keep the class part and a fixed hash.
MESSAGE_COLLECTION = "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@0"


class SideRecords:
    """Transaction metadata, logical decoding messages and heartbeats, for `ChangeCapture`."""

    # ChangeCapture's state, set in its __init__ (changes.py).
    sink: Any
    xid: int
    xmin: int | None
    begin_lsn: int
    commit_us: int
    total_order: int
    collection_order: dict[str, int]
    tx_metadata: bool
    last_commit_lsn: int | None
    events: int
    tx_events: int
    position: Position | None
    in_transaction: bool
    incremental: Any
    prefix: str
    _templates: dict[Any, bytes]
    skipping: bool
    skip_upto: int
    delivered: bool
    message_filter: Any
    msg_topic: str
    tx_topic: str
    msg_key: Any
    msg_value: Any
    msg_content: Any
    hb_key: Any
    hb_value: Any
    tx_key: Any
    tx_value: Any
    _spilled: Any
    _source_block: Any

    def _tx_block(self, collection: str, lsn: int) -> dict[str, Any] | None:
        """The per-event `transaction` block; Debezium's PostgreSQL transaction id is `<txId>:<event LSN>`."""
        if not self.tx_metadata:
            return None
        tx_id = f"{self.xid}:{lsn}"
        if self.total_order == 0:
            self._emit_tx_begin()
        self.total_order += 1
        order = self.collection_order.get(collection, 0) + 1
        self.collection_order[collection] = order
        return {"id": tx_id, "total_order": self.total_order, "data_collection_order": order}

    def _message(self, msg: m.LogicalMessage, lsn: int) -> None:
        if msg.xid is not None and self._spilled(msg, lsn):
            return
        if msg.transactional and (self.skipping or lsn <= self.skip_upto):
            return
        if msg.transactional and not self.delivered:
            self.delivered, self.begin_lsn = True, lsn
        if self.message_filter is not None and not self.message_filter(msg.prefix):
            return
        now_ns = time.time_ns()
        # A non-transactional message has no commit time of its own; Debezium reports the last one seen,
        # and treats the message's own LSN as the last commit (measured on 3.6).
        if not msg.transactional:
            self.last_commit_lsn = lsn
            self._templates = {}
        source = self._source_block("", "", lsn, self.xid if msg.transactional else None)
        value = {
            "op": "m", "ts_ms": now_ns // 1_000_000, "source": source,
            "transaction": self._tx_block(MESSAGE_COLLECTION, lsn) if msg.transactional else None,
            "message": {"prefix": msg.prefix, "content": self.msg_content(msg.content)},
        }
        # Debezium sends logical-decoding messages without the context headers.
        self.sink.send(self.msg_topic, self.msg_key({"prefix": msg.prefix}), self.msg_value(value))
        self.events += 1
        if msg.transactional:
            self.tx_events += 1

    # -- heartbeats ----------------------------------------------------------------------------------------
    def heartbeat(self, topic: str, decoded_lsn: int) -> None:
        """heartbeat.interval.ms: a heartbeat record, and (between transactions) the position moves to what
        the server has decoded, so an idle or filtered-out database does not pile up WAL behind the slot."""
        now_ms = time.time_ns() // 1_000_000
        self.sink.send(topic, self.hb_key({"serverName": self.prefix}), self.hb_value({"ts_ms": now_ms}),
                       partition=0)
        if not self.in_transaction and decoded_lsn > (self.position.end_lsn if self.position else 0):
            self.position = Position(end_lsn=decoded_lsn, commit_lsn=decoded_lsn, last_lsn=decoded_lsn,
                                     xid=self.xid, commit_us=self.commit_us,
                                     extra=self.incremental.offset_fields() if self.incremental is not None else (),
                                     xmin=self.xmin)

    # -- transaction metadata ---------------------------------------------------------------------------
    def _emit_tx_begin(self) -> None:
        # Debezium writes BEGIN when the transaction's Begin arrives: its id has the Begin's LSN, the LSN of the
        # first change its publication sends (emitted or not; measured).
        tx_id = f"{self.xid}:{self.begin_lsn}"
        value = {"status": "BEGIN", "id": tx_id, "event_count": None, "data_collections": None,
                 "ts_ms": self.commit_us // 1000}
        self.sink.send(self.tx_topic, self.tx_key({"id": tx_id}), self.tx_value(value))

    def _emit_tx_end(self, end_lsn: int) -> None:
        tx_id = f"{self.xid}:{end_lsn}"
        value = {
            "status": "END", "id": tx_id, "event_count": self.total_order,
            "data_collections": [{"data_collection": k, "event_count": self.collection_order[k]}
                                 for k in java_hashmap_order(list(self.collection_order))],
            "ts_ms": self.commit_us // 1000,
        }
        self.sink.send(self.tx_topic, self.tx_key({"id": tx_id}), self.tx_value(value))
