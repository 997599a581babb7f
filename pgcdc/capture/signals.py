"""Signals: their data and watermark timestamps as Debezium writes them, the tables an `execute-snapshot` or
`stop-snapshot` signal names, and the channels besides the signal table: a Kafka topic and a file (Debezium's
`kafka` and `file`).

Polled from the replication loop between transactions every `signal.poll.interval.ms`. A Kafka signal's key
is the connector's `topic.prefix` (others are skipped, as Debezium documents) and its value
`{"type": ..., "data": {...}}`; its id is `<topic>-<partition>-<offset>`. Offsets are committed under
`signal.kafka.groupId` once a signal was handled, so a restart does not repeat it; a new group reads the
topic from its start. A file holds one JSON signal `{"id", "type", "data"}` per line; the lines are
removed once read.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

Signal = tuple[str | None, str | None, str | None]  # id, type, data (JSON text), as a signal table row
Collection = tuple[str, str | None, str | None]  # schema.table, its additional condition, the surrogate key


def java_instant(ns: int) -> str:
    """java.time.Instant.toString(): ISO-8601 UTC, fraction in groups of 3 digits, none if zero."""
    secs, frac = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs))
    if frac == 0:
        return base + "Z"
    digits = f"{frac:09d}"
    while digits.endswith("000"):
        digits = digits[:-3]
    return f"{base}.{digits}Z"


def parse_signal_data(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        log.warning("signal data is not JSON, ignored: %r", text[:200])
        return {}
    return data if isinstance(data, dict) else {}


def table_signal(values: tuple[Any, ...], cols: tuple[int, int, int]) -> Signal:
    """A signal table row's id, type and data, read from the columns at `cols`."""
    i, t, d = cols
    return _text(values, i), _text(values, t), _text(values, d)


def _text(values: tuple[Any, ...], i: int) -> str | None:
    v = values[i] if i < len(values) else None
    if isinstance(v, bytes):
        return v.decode()
    return v if isinstance(v, str) else None


def table_of(name: str, captured: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """(schema, table) of a signal's or an offset's `schema.table` name: the captured table so named (a schema
    or table name may hold dots), else the name split at its first dot."""
    for schema, table in captured:
        if f"{schema}.{table}" == name:
            return schema, table
    schema, _, table = name.partition(".")
    return schema, table


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    blocking: bool
    tables: list[Collection]


def snapshot_request(sig_id: str | None, data: dict[str, Any], captured: list[str], running: list[str],
                     table_order: Callable[[str], Any]) -> SnapshotRequest | None:
    """What an `execute-snapshot` signal asks for: the captured tables (schema.table) its `data-collections`
    match in full, each with the first `additional-conditions` filter whose pattern matches it and the
    `surrogate-key`. Incremental: in the order the patterns name them, without the tables already `running`;
    blocking: every table named, in `table_order`. None (logged) when the signal asks for nothing."""
    kind = str(data.get("type") or "incremental").lower()
    if kind not in ("incremental", "blocking"):
        log.warning("execute-snapshot %s: unknown snapshot type %r, ignored", sig_id, kind)
        return None
    patterns = data.get("data-collections") or []
    if not isinstance(patterns, list) or not patterns:
        log.warning("execute-snapshot %s: no data-collections given, ignored", sig_id)
        return None
    conditions = {str(c.get("data-collection")): c.get("filter")
                  for c in data.get("additional-conditions") or [] if isinstance(c, dict)}
    if isinstance(data.get("additional-condition"), str) and data["additional-condition"]:
        conditions.setdefault(".*", data["additional-condition"])  # the older form: one for every table
    surrogate = data.get("surrogate-key") or None
    added: list[Collection] = []
    for p in patterns:
        matched = [name for name in captured if re.fullmatch(str(p), name)]
        if not matched:
            log.warning("execute-snapshot %s: %r matches no captured table", sig_id, p)
        for name in matched:
            if name not in running and name not in (a[0] for a in added):
                cond = next((v for k, v in conditions.items() if re.fullmatch(k, name)), None)
                added.append((name, cond, surrogate))
    if kind == "blocking":
        names = sorted((n for n in captured if any(re.fullmatch(str(p), n) for p in patterns)), key=table_order)
        return SnapshotRequest(True, [(n, next((v for k, v in conditions.items() if re.fullmatch(k, n)), None),
                                       surrogate) for n in names])
    return SnapshotRequest(False, added)


def stopped(data: dict[str, Any], names: list[str]) -> list[str]:
    """The tables a `stop-snapshot` signal's `data-collections` match in full: all of `names` when it gives none."""
    patterns = data.get("data-collections") or []
    if not patterns:
        return list(names)
    return [n for n in names if any(re.fullmatch(str(p), n) for p in patterns)]


def _data_text(data: Any) -> str | None:
    if data is None:
        return None
    return data if isinstance(data, str) else json.dumps(data)


# Waits for the group's committed offset of the signal topic: at start-up, then from each poll while not found.
STARTUP_WAIT_S = 10.0
RETRY_EVERY_S = 5.0
POLL_WAIT_S = 1.0
# Where a group without a committed offset starts (auto.offset.reset, Debezium's default `earliest`).
RESET_OFFSETS = {"earliest": -2, "smallest": -2, "beginning": -2, "latest": -1, "largest": -1, "end": -1}
# Answers that say the group's coordinator is not ready yet (moving, loading, not found): looked up again.
RETRIABLE = frozenset({"NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE",
                       "_TIMED_OUT", "_WAIT_COORD", "_TRANSPORT", "_ALL_BROKERS_DOWN", "REQUEST_TIMED_OUT"})


class KafkaSignals:
    def __init__(self, bootstrap: str, topic: str, group: str, key: str, extra: dict[str, str] | None = None) -> None:
        from confluent_kafka import Consumer

        self.topic = topic
        self.key = key
        settings = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                    "auto.offset.reset": "earliest", **(extra or {})}
        self.reset = RESET_OFFSETS.get(str(settings["auto.offset.reset"]).lower(), -2)
        self.consumer = Consumer(settings)
        self.assigned = False
        self.next_try = 0.0
        self.assign(STARTUP_WAIT_S)

    def assign(self, wait: float) -> None:
        """Assigns partition 0 at the group's committed offset (else where auto.offset.reset says), as Debezium's
        KafkaSignalChannel starts. Assigned, not subscribed: no group join to wait for; the group only keeps the
        committed position. The offset is looked up here and given to assign(): after an assign() without one,
        a committed-offset lookup answered NOT_COORDINATOR for the whole request leaves librdkafka's partition
        waiting forever (confluentinc/librdkafka#5586), and no signal would ever be read."""
        from confluent_kafka import KafkaException, TopicPartition

        deadline = time.monotonic() + wait
        delay = 0.2
        while True:
            try:
                (found,) = self.consumer.committed([TopicPartition(self.topic, 0)],
                                                   timeout=max(min(deadline - time.monotonic(), 5.0), 0.1))
                if found.error is not None:
                    raise KafkaException(found.error)
                break
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                name = err.name() if hasattr(err, "name") else str(exc)
                if time.monotonic() + delay >= deadline:
                    (log.debug if name in RETRIABLE else log.warning)(
                        "signal topic %s: committed offset of group not found yet (%s), looked up again in %.0f s",
                        self.topic, exc, RETRY_EVERY_S)
                    self.next_try = time.monotonic() + RETRY_EVERY_S
                    return
                log.debug("signal topic %s: committed offset lookup: %s", self.topic, exc)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        start = found.offset if found.offset >= 0 else self.reset
        self.consumer.assign([TopicPartition(self.topic, 0, start)])
        self.assigned = True

    def poll(self) -> list[Signal]:
        out: list[Signal] = []
        if not self.assigned:
            if time.monotonic() < self.next_try:
                return out
            self.assign(POLL_WAIT_S)
        while True:
            msg = self.consumer.poll(0)
            if msg is None:
                break
            if msg.error():
                log.debug("signal topic %s: %s", self.topic, msg.error())
                continue
            key = msg.key().decode(errors="replace") if msg.key() is not None else None
            if key != self.key:
                log.info("signal on %s skipped: key %r is not the topic.prefix %r", self.topic, key, self.key)
                continue
            try:
                value = json.loads(msg.value() or b"null")
            except ValueError:
                log.warning("signal on %s at offset %d is not JSON, skipped", self.topic, msg.offset())
                continue
            if isinstance(value, dict):
                out.append((f"{self.topic}-{msg.partition()}-{msg.offset()}", value.get("type"),
                            _data_text(value.get("data"))))
        return out

    def commit(self) -> None:
        try:
            self.consumer.commit(asynchronous=False)
        except Exception as exc:  # nothing consumed yet, or the broker is away: the signal may come again
            log.debug("signal topic %s: commit: %s", self.topic, exc)

    def close(self) -> None:
        self.consumer.close()


class FileSignals:
    def __init__(self, path: str) -> None:
        self.path = path

    def poll(self) -> list[Signal]:
        try:
            with open(self.path, "r+", encoding="utf-8") as f:
                lines = f.read().splitlines()
                f.seek(0)
                f.truncate()
        except FileNotFoundError:
            return []
        out: list[Signal] = []
        for line in filter(None, (ln.strip() for ln in lines)):
            try:
                value = json.loads(line)
            except ValueError:
                log.warning("signal file %s: line is not JSON, skipped: %r", self.path, line[:200])
                continue
            if isinstance(value, dict):
                out.append((str(value.get("id")) if value.get("id") is not None else None, value.get("type"),
                            _data_text(value.get("data"))))
        return out

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass
