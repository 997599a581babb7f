"""A Python DataSource that reads Kafka topics through confluent-kafka with the rows of Spark's `kafka` source.

In production Spark's built-in `kafka` source reads the topics (its jar from Maven Central, see
session.kafka_package); without that jar this source, registered as `pgcdc_kafka` (a Python source may not be
named `kafka`), yields the same rows (tests/spark/test_builtin_kafka_source.py), so everything downstream takes
either:

    spark.dataSource.register(KafkaDataSource)
    spark.read.format("pgcdc_kafka").option("kafka.bootstrap.servers", ...).option("subscribe", "a,b").load()
    spark.readStream.format("pgcdc_kafka")...  # batch and streaming, Trigger.AvailableNow supported

Options (Spark lower-cases their keys): `kafka.<librdkafka property>`, `subscribe` (comma-separated topics) or
`subscribePattern` (a regular expression), `startingOffsets` ("earliest", "latest" or the kafka source's JSON
`{"topic":{"0":42}}`), `endingOffsets` (batch: "latest" or JSON), `includeHeaders` ("true"/"false").

Ends are found by reading each partition to its end (partition EOF), not from the broker's high watermark:
Tansu (the demo's broker) reports wrong watermarks for multi-record batches (NOTES, Tansu). For the same reason a
streaming micro-batch's end offset is found on the driver by a scan that only counts records.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

# The kafka source's rows, column for column (Spark's KafkaRecordToRowConverter): every column nullable; the
# timestamp is the record's milliseconds as an instant (-1 when it has none), timestampType Kafka's TimestampType
# id (-1 none, 0 CreateTime, 1 LogAppendTime; librdkafka counts 0, 1, 2), headers null when a record has none.
KAFKA_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
                "timestampType int")
HEADERS = ", headers array<struct<key: string, value: binary>>"
BATCH_ROWS = 10_000
# consume() waits its whole timeout unless it fills its batch, so a short one: a partition is read up to its
# end (EOF) and the call after the last record would otherwise only wait.
POLL_S = 0.1
TIMEOUT_S = 60.0

Offsets = dict[str, dict[str, int]]  # the kafka source's JSON shape: {"topic": {"partition": offset}}


@dataclass(frozen=True)
class TopicRange(InputPartition):
    """Records [start, end) of one topic partition; end None = up to the partition's end at read time."""

    topic: str
    partition: int
    start: int
    end: int | None


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "pgcdc_kafka"

    def schema(self) -> str:
        return KAFKA_SCHEMA + (HEADERS if _headers(self.options) else "")

    def reader(self, schema: StructType) -> DataSourceReader:
        return _BatchReader(dict(self.options))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return _StreamReader(dict(self.options))


def _headers(options: Any) -> bool:
    return str(options.get("includeheaders", "false")).lower() == "true"


def _client_config(options: dict[str, str]) -> dict[str, Any]:
    conf: dict[str, Any] = {k[len("kafka."):]: v for k, v in options.items() if k.startswith("kafka.")}
    if "bootstrap.servers" not in conf:
        raise ValueError("option kafka.bootstrap.servers is required")
    conf.update({"group.id": f"pgcdc-spark-{uuid.uuid4().hex[:8]}", "enable.auto.commit": "false",
                 "enable.partition.eof": "true", "auto.offset.reset": "earliest"})
    # The broker holds a fetch that finds no new record up to fetch.wait.max.ms (librdkafka: 500) before the
    # consumer learns it is at the partition's end: measured 0.6 s -> 0.1 s per partition read.
    conf.setdefault("fetch.wait.max.ms", "50")
    return conf


def _consumer(options: dict[str, str]) -> Any:
    from confluent_kafka import Consumer

    return Consumer(_client_config(options))


def _topics(consumer: Any, options: dict[str, str]) -> dict[str, list[int]]:
    md = consumer.list_topics(timeout=TIMEOUT_S)
    if "subscribe" in options:
        wanted = [t.strip() for t in options["subscribe"].split(",") if t.strip()]
        return {t: sorted(md.topics[t].partitions) for t in wanted if t in md.topics and not md.topics[t].error}
    if "subscribepattern" in options:
        pattern = re.compile(options["subscribepattern"])
        return {t: sorted(m.partitions) for t, m in md.topics.items()
                if pattern.fullmatch(t) and not m.error and not t.startswith("__")}
    raise ValueError("one of the options subscribe or subscribePattern is required")


def _resolve(spec: str, consumer: Any, topics: dict[str, list[int]], latest: bool) -> Offsets:
    """startingOffsets/endingOffsets -> concrete offsets ("latest" is found by a scan, see module doc)."""
    explicit: Offsets = json.loads(spec) if spec.strip().startswith("{") else {}
    out: Offsets = {}
    for topic, parts in topics.items():
        out[topic] = {}
        for p in parts:
            given = explicit.get(topic, {}).get(str(p))
            if given is not None and given >= 0:
                out[topic][str(p)] = int(given)
            elif spec == "latest" or latest or given == -1:
                out[topic][str(p)] = -1  # filled by _scan_ends
            else:
                low, _high = consumer.get_watermark_offsets(_tp(topic, p), timeout=TIMEOUT_S)
                out[topic][str(p)] = max(low, 0)
    return out


def _tp(topic: str, partition: int, offset: int = -2) -> Any:
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, partition, offset)


def _scan_ends(consumer: Any, starts: Offsets) -> Offsets:
    """The next offset after the last record of each partition, by reading from `starts` to partition EOF."""
    from confluent_kafka import KafkaError

    ends: Offsets = {t: dict(ps) for t, ps in starts.items()}
    assignment = [_tp(t, int(p), max(o, 0) if o >= 0 else -2) for t, ps in starts.items() for p, o in ps.items()]
    if not assignment:
        return ends
    consumer.assign(assignment)
    remaining = {(tp.topic, tp.partition) for tp in assignment}
    deadline = time.monotonic() + TIMEOUT_S
    while remaining:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no partition end in {TIMEOUT_S}s for {sorted(remaining)}")
        for msg in consumer.consume(10_000, POLL_S):
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    remaining.discard((msg.topic(), msg.partition()))
                    if ends[msg.topic()][str(msg.partition())] < 0:
                        ends[msg.topic()][str(msg.partition())] = msg.offset()
                    continue
                raise RuntimeError(f"reading {msg.topic()}[{msg.partition()}]: {err}")
            ends[msg.topic()][str(msg.partition())] = max(ends[msg.topic()][str(msg.partition())], msg.offset() + 1)
            deadline = time.monotonic() + TIMEOUT_S
    consumer.unassign()
    return ends


def _read_range(options: dict[str, str], part: TopicRange) -> Iterator[pa.RecordBatch]:
    """The records of one partition range as Arrow batches in the kafka source's column layout."""
    from confluent_kafka import KafkaError

    if part.end is not None and part.end <= part.start:
        return
    headers = _headers(options)
    consumer = _consumer(options)
    try:
        consumer.assign([_tp(part.topic, part.partition, part.start)])
        cols: dict[str, list[Any]] = {n: [] for n in ("key", "value", "offset", "timestamp", "timestampType",
                                                      "headers")}
        deadline = time.monotonic() + TIMEOUT_S
        done = False
        while not done:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{part.topic}[{part.partition}]: no record or end in {TIMEOUT_S}s")
            msgs = consumer.consume(10_000, POLL_S)
            if msgs:
                deadline = time.monotonic() + TIMEOUT_S
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if part.end is None or msg.offset() >= part.end:
                            done = True
                        continue
                    raise RuntimeError(f"reading {part.topic}[{part.partition}]: {err}")
                if part.end is not None and msg.offset() >= part.end:
                    done = True
                    break
                cols["key"].append(msg.key())
                cols["value"].append(msg.value())
                cols["offset"].append(msg.offset())
                ts_type, ts = msg.timestamp()
                cols["timestamp"].append(ts * 1000)  # ms -> us; the kafka source keeps -1 (no timestamp) too
                cols["timestampType"].append(ts_type - 1)
                cols["headers"].append(msg.headers() or None)
                if part.end is not None and msg.offset() + 1 >= part.end:
                    done = True
                    break
            if len(cols["offset"]) >= BATCH_ROWS or (done and cols["offset"]):
                yield _batch(part, cols, headers)
                cols = {n: [] for n in cols}
    finally:
        consumer.close()


_HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


def _batch(part: TopicRange, cols: dict[str, list[Any]], headers: bool) -> pa.RecordBatch:
    n = len(cols["offset"])
    arrays = [
        pa.array(cols["key"], pa.binary()), pa.array(cols["value"], pa.binary()),
        pa.array([part.topic] * n, pa.string()), pa.array([part.partition] * n, pa.int32()),
        pa.array(cols["offset"], pa.int64()), pa.array(cols["timestamp"], pa.timestamp("us", tz="UTC")),
        pa.array(cols["timestampType"], pa.int32()),
    ]
    names = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    if headers:
        arrays.append(pa.array([None if h is None else [{"key": k, "value": v} for k, v in h]
                                for h in cols["headers"]], _HEADER_TYPE))
        names.append("headers")
    return pa.RecordBatch.from_arrays(arrays, names=names)


class _BatchReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        consumer = _consumer(self.options)
        try:
            topics = _topics(consumer, self.options)
            starts = _resolve(self.options.get("startingoffsets", "earliest"), consumer, topics, latest=False)
            ending = self.options.get("endingoffsets", "latest")
            ends = _resolve(ending, consumer, topics, latest=False) if ending.startswith("{") else None
        finally:
            consumer.close()
        out: list[InputPartition] = []
        for topic, parts in starts.items():
            for p, start in parts.items():
                end = None if ends is None else ends[topic][p]
                out.append(TopicRange(topic, int(p), start, None if end is None or end < 0 else end))
        return out or [TopicRange("", 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TopicRange)
        if not partition.topic:
            return iter(())
        return _read_range(self.options, partition)


class _StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are the kafka source's JSON; each micro-batch reads [previous end, scanned end)."""

    def __init__(self, options: dict[str, str]) -> None:
        self.options = options
        self.target: Offsets | None = None

    def _latest(self, start: Offsets) -> Offsets:
        consumer = _consumer(self.options)
        try:
            topics = _topics(consumer, self.options)
            base = _resolve("earliest", consumer, topics, latest=False)
            for topic, parts in base.items():  # new topics/partitions start at their beginning
                for p in parts:
                    if p in start.get(topic, {}):
                        parts[p] = start[topic][p]
            return _scan_ends(consumer, base)
        finally:
            consumer.close()

    def initialOffset(self) -> dict:
        consumer = _consumer(self.options)
        try:
            topics = _topics(consumer, self.options)
            spec = self.options.get("startingoffsets", "latest")
            offsets = _resolve(spec, consumer, topics, latest=False)
            if any(o < 0 for ps in offsets.values() for o in ps.values()):
                offsets = _scan_ends(consumer, offsets)
            return offsets
        finally:
            consumer.close()

    def latestOffset(self, start: dict, limit: Any) -> dict:
        if self.target is not None:
            return self.target
        return self._latest(start)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._latest(self.initialOffset())

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        out: list[InputPartition] = []
        for topic, parts in end.items():
            for p, stop in parts.items():
                begin = start.get(topic, {}).get(p, 0)
                if stop > begin:
                    out.append(TopicRange(topic, int(p), begin, stop))
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TopicRange)
        return _read_range(self.options, partition)

    def commit(self, end: dict) -> None:
        pass
