"""CloudEvents with Avro data (Debezium's CloudEventsConverter with `data.serializer.type=avro`, the event in
Avro or JSON: `serializer.type`) as a RecordFormat: the same change rows as the JSON records of the same changes.

    fmt = CloudEventsAvroFormat("http://registry:8081")   # an AvroFormat: one per job, fetched schemas kept
    decoded = decode_changes(raw, fmt=fmt)

Such an event's `data` is Confluent's Avro wire bytes of a struct of the envelope's `before` and `after` (schema
`io.debezium.connector.postgresql.Data`, registered under `<topic>-data` with Avro events, `<topic>` with JSON
ones; in a JSON event base64 text), and its extension attributes hold the operation (`iodebeziumop`) and the
LSN (`iodebeziumlsn`, a string: CloudEvents has no 64-bit integers). An Avro event is itself in the wire format,
its schema registered under `<topic>`.

The events are read first, before AvroFormat looks at a record: an Avro one with `from_avro` and its schema
(fetched by id once, like any), a JSON one (`{"id":` first, as Debezium writes it) with `from_json`. Their `data`
then takes the record value's place, so AvroFormat reads it as it reads any record: versions by data schema id,
the data schema read as an envelope's (its `before`/`after`), the same codecs and decoders. The op and LSN are
the event's; `value` is the record as written (what a quarantine holds). Records that are not CloudEvents are
AvroFormat's, untouched.
"""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.avro import AvroFormat
from pgcdc.spark.fieldcodec import DecodeOptions
from pgcdc.spark.wire import schema_id

_JSON_PREFIX = '{"id":'
_JSON_EVENT = "struct<datacontenttype: string, iodebeziumop: string, iodebeziumlsn: string, data: string>"
_READ = ("iodebeziumop", "iodebeziumlsn", "data")
_NO_OP = "CloudEvent without iodebeziumop (extension.attributes.enable must be true)"


def _event(op: Column, lsn: Column, data: Column, reason: Column) -> Column:
    return F.struct(op.cast("string").alias("op"), lsn.cast("string").alias("lsn"), data.alias("data"),
                    reason.alias("reason"))


def _is_event(fields: list[str]) -> bool:
    return "specversion" in fields and "data" in fields


class CloudEventsAvroFormat(AvroFormat):
    """AvroFormat for topics of CloudEvents with Avro data. `registry`, `decoder`, `conf`: AvroFormat's (the
    decoder reads the data; Avro events are read with `from_avro`, so the session needs `avro_package()`)."""

    # The event as written, and what was read of it (null for a record that is not a CloudEvent).
    passed = (*AvroFormat.passed, "event", "ce")

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        return super().probe(self._events(raw), options)

    def _events(self, raw: DataFrame) -> DataFrame:
        """`raw` with each CloudEvent's `data` as its value, the event in `event` and what it says in `ce`."""
        from pyspark.sql.avro.functions import from_avro

        vid = schema_id(F.col("value"))
        ids = raw.select(vid.alias("id")).filter("id IS NOT NULL").distinct().collect()
        branches: list[tuple[Column, Column]] = []
        for i in sorted(r["id"] for r in ids):
            schema = self._schema(i)
            fields = schema[2].names if isinstance(schema, tuple) and isinstance(schema[2], T.StructType) else []
            if not _is_event(fields):
                continue  # plain Avro (or a schema AvroFormat quarantines for its own reason)
            if "iodebeziumop" not in fields:
                read = _event(F.lit(None), F.lit(None), F.lit(None), F.lit(_NO_OP))
            else:
                # Read with a reader schema of the three fields used: Spark matches Avro field names ignoring
                # case, and an event has both `iodebeziumtxId` (the source's) and `iodebeziumtxid` (the
                # transaction's), which it refuses as ambiguous.
                written = json.loads(schema[0])
                reader = {**written, "fields": [f for f in written["fields"] if f["name"] in _READ]}
                ev = from_avro(F.expr("substring(value, 6)"), schema[0],
                               {"mode": "PERMISSIVE", "avroSchema": json.dumps(reader)})
                lsn = ev.getField("iodebeziumlsn") if "iodebeziumlsn" in fields else F.lit(None)
                data = ev.getField("data")
                read = _event(ev.getField("iodebeziumop"), lsn, data,
                              F.when(data.isNull(), F.lit(f"cannot decode the CloudEvent (Avro, schema id {i})")))
            branches.append((vid == i, read))
        text = F.col("value").cast("string")
        js = F.from_json(text, _JSON_EVENT)
        avro_data = js.getField("datacontenttype") == "application/avro"
        reason = (F.when(js.isNull(), F.lit("cannot parse the CloudEvent (JSON)"))
                  .when(js.getField("iodebeziumop").isNull(), F.lit(_NO_OP))
                  .when(~F.coalesce(avro_data, F.lit(False)),
                        F.lit("CloudEvent with JSON data: decode_changes reads it without fmt")))
        read = _event(js.getField("iodebeziumop"), js.getField("iodebeziumlsn"),
                      F.when(avro_data, F.unbase64(js.getField("data"))), reason)
        branches.append((F.substring(F.col("value"), 1, len(_JSON_PREFIX)) == F.lit(_JSON_PREFIX.encode()), read))
        ce = F.when(*branches[0])
        for cond, value in branches[1:]:
            ce = ce.when(cond, value)
        # The data is the value from here on: not kept twice in what AvroFormat caches.
        return raw.select("topic", "partition", "offset", "key", "value", ce.alias("ce")).select(
            "topic", "partition", "offset", "key",
            F.when(F.col("ce").isNotNull(), F.col("ce.data")).otherwise(F.col("value")).alias("value"),
            F.col("value").alias("event"), F.col("ce").dropFields("data").alias("ce"))

    def _finish(self, probed: DataFrame) -> DataFrame:
        # A CloudEvent's op and LSN are the event's (its data has only before/after); the record is the event.
        is_event = F.col("ce").isNotNull()
        return (probed.withColumn("value", F.col("event"))
                .withColumn("op", F.when(is_event, F.col("ce.op")).otherwise(F.col("op")))
                .withColumn("lsn", F.when(is_event, F.col("ce.lsn").try_cast("long")).otherwise(F.col("lsn")))
                .withColumn("malformed", F.coalesce(F.col("ce.reason"), F.col("malformed"))))
