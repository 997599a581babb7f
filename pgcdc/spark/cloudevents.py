"""CloudEvents JSON records (Debezium's CloudEventsConverter, serializer.type=json, data.serializer.type=json)
-> the change envelopes changes.py decodes.

Such a record is `{"id":…,"source":…,…,"iodebeziumop":…,"iodebeziumlsn":…,…,"data":{"schema":…,"payload":…}}`:
its `data` is JsonConverter's form of a struct holding the envelope's `before` and `after` (schema named
`io.debezium.connector.postgresql.Data`), and the operation and LSN are the extension attributes (int64
attributes are strings in CloudEvents). `unwrap` rewrites each such value into
`{"schema":<data's schema>,"payload":{"op":…,"source":{"lsn":…},"before":…,"after":…}}`: the data schema is
read as an envelope's (its `before`/`after` fields), so every table, schema version and value decodes on the
path plain JSON records take, and the typed rows are the same. Records that are not CloudEvents go through
unchanged; the test costs one prefix comparison per record (Debezium writes `id` first). The JSON texts of the
data's schema and payload are spliced in as Spark's JSON reader re-emits them (from_json into a string field),
never re-encoded value by value.

A CloudEvent this cannot read (data without its schema, no `iodebeziumop`: extension attributes off) is left
as written, and changes.py quarantines it as a malformed envelope; so is one with Avro data, which
CloudEventsAvroFormat (cloudevents_avro.py) reads.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

_PREFIX = '{"id":'
_EVENT = "struct<specversion: string, iodebeziumop: string, iodebeziumlsn: string, data: string>"
_DATA = "struct<schema: string, payload: string>"


def _quoted_op(op: Column) -> Column:
    # A one-letter operation is quoted as is; anything else makes the envelope's op null (quarantined as such).
    return F.when(op.rlike("^[a-z]$"), F.concat(F.lit('"'), op, F.lit('"'))).otherwise(F.lit("null"))


def _lsn(lsn: Column) -> Column:
    return F.when(lsn.rlike("^[0-9]{1,19}$"), lsn).otherwise(F.lit("null"))


def unwrap(raw: DataFrame) -> DataFrame:
    """`raw` (the kafka source's columns) with each readable CloudEvents JSON value replaced by its envelope."""
    text = F.col("value").cast("string")
    event = F.when(text.startswith(_PREFIX), F.from_json(text, _EVENT))
    parsed = raw.withColumn("__pgcdc_ce", event).withColumn(
        "__pgcdc_ce_data", F.when(F.col("__pgcdc_ce.specversion").isNotNull(),
                                  F.from_json(F.col("__pgcdc_ce.data"), _DATA)))
    schema, payload = F.col("__pgcdc_ce_data.schema"), F.col("__pgcdc_ce_data.payload")
    op = F.col("__pgcdc_ce.iodebeziumop")
    readable = schema.startswith("{") & payload.startswith("{") & op.isNotNull()
    # The payload's members follow op and source: its text without the opening brace (a comma between unless
    # it has none), and one more brace closes the record.
    members = payload.substr(F.lit(2), F.lit(2**31 - 1))
    comma = F.when(payload == "{}", F.lit("")).otherwise(F.lit(","))
    envelope = F.concat(F.lit('{"schema":'), schema, F.lit(',"payload":{"op":'), _quoted_op(op),
                        F.lit(',"source":{"lsn":'), _lsn(F.col("__pgcdc_ce.iodebeziumlsn")), F.lit("}"), comma,
                        members, F.lit("}"))
    value = F.when(F.coalesce(readable, F.lit(False)), envelope.cast("binary")).otherwise(F.col("value"))
    return parsed.withColumn("value", value).drop("__pgcdc_ce", "__pgcdc_ce_data")
