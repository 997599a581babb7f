"""Kafka records (the `kafka` source's columns) -> typed change rows per table, plus a quarantine.

One pass finds the distinct (topic, value schema, key schema) versions in the batch; each version gets its
codecs (pgcdc.spark.schema) and one parse + projection. How records are parsed is a `RecordFormat`: the
JsonConverter's JSON with schemas here (`from_json`), Confluent's Avro wire format in pgcdc.spark.avro.
A version's records are Debezium envelopes or, when its schema is a flattened row (ExtractNewRecordState,
pgcdc.spark.flattened), rows with added fields; either format. Versions of a table are aligned on the newest
one (columns added, dropped or retyped mid-stream), so a schema change is a new projection, not a failure.
Records that are not change events of a known table, or whose key cannot be represented, go to the
quarantine DataFrame with a reason; a value Spark cannot hold makes its column null and is named in the row's
`_pgcdc_unrepresentable` (or, per DecodeOptions.unrepresentable, is clamped or quarantines the record).

Ordering: every change row gets `__pgcdc_pos`, a string that sorts like (source.lsn, kind, partition, offset)
with kind 0 for snapshot reads (`r`, whose lsn is the snapshot's consistent point), 1 for streamed changes
and 2 for tombstones. See docs/spark.md ("Which event wins") for why the LSN, and not the Kafka offset, is
the primary order, and for the one window where it is not exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.errors import ConfigError
from pgcdc.spark import cloudevents, flattened
from pgcdc.spark.flattened import probe_fields
from pgcdc.spark.keys import decode_key
from pgcdc.spark.schema import DecodeOptions, envelope_fields, row_codec

POS = "__pgcdc_pos"
DELETED = "__pgcdc_deleted"
OP = "__pgcdc_op"
META = (POS, DELETED, OP)
# The data columns whose values Spark could not hold in this row (DecodeOptions.unrepresentable); present in
# tables that have a column which can hold such a value, null in rows where every value is there.
UNREPRESENTABLE = "_pgcdc_unrepresentable"
UNREPRESENTABLE_TYPE = T.ArrayType(T.StringType())

QUARANTINE_SCHEMA = T.StructType([
    T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
    T.StructField("offset", T.LongType()), T.StructField("key", T.BinaryType()),
    T.StructField("value", T.BinaryType()), T.StructField("reason", T.StringType()),
])

_KEY_PROBE = "struct<schema: string, payload: string>"


@dataclass
class TableChanges:
    """The change rows of one table (topic) in a batch."""

    topic: str
    keys: tuple[str, ...]
    schema: T.StructType  # data columns of the newest schema version in the batch
    rows: DataFrame  # data columns + __pgcdc_pos, __pgcdc_deleted, __pgcdc_op
    schema_pos: str  # position of the newest event: decides whether this schema replaces the target's
    truncate_pos: str | None = None  # newest truncate of the table in the batch


@dataclass
class Decoded:
    tables: dict[str, TableChanges] = field(default_factory=dict)
    quarantine: DataFrame | None = None


def _pos(lsn: Column, kind: int | Column, partition: Column, offset: Column) -> Column:
    def hexed(c: Column, width: int) -> Column:
        return F.lpad(F.hex(F.coalesce(c, F.lit(0)).cast("long")), width, "0")

    kind_col = kind if isinstance(kind, Column) else F.lit(kind)
    return F.concat(hexed(lsn, 16), kind_col.cast("string"), hexed(partition, 8), hexed(offset, 16))


class RecordFormat(Protocol):
    """How a batch's records are parsed. `probe` yields the columns of PROBE_COLUMNS: vh/kh: ids of the
    value/key schema version (null without one); op/lsn: the envelope's; flat_op/flat_lsn/flat_deleted/no_payload:
    the same read as a flattened row's added fields (pgcdc.spark.flattened; which of the two applies is decided
    per version); `malformed`: the format's reason a record cannot be read. `schemas` gives a version's Connect
    value and key schemas (JsonConverter's JSON text, None when absent); `rows` the records of one version
    (with PROBE_COLUMNS and whatever `parse` needs); `parse` adds `vp` (struct payload: the row when `flat`,
    else struct before, after) and `kp` (struct payload) in the codecs' raw types, and when given text types
    (RowCodec.text: decimals of decimal.format=NUMERIC) `vt` and `kt` likewise in those. `json_decimals`: whether
    the records' decimals are the JSON a converter's decimal.format decides (DecodeOptions.decimal_format);
    a format without it reads them as base64 bytes whatever the options say."""

    json_decimals: bool

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame: ...

    def schemas(self, version: dict[str, Any]) -> tuple[str | None, str | None]: ...

    def rows(self, good: DataFrame, version: dict[str, Any]) -> DataFrame: ...

    def parse(self, rows: DataFrame, value_raw: T.StructType | None, key_raw: T.StructType,
              flat: bool = False, value_text: T.StructType | None = None,
              key_text: T.StructType | None = None) -> DataFrame: ...


PROBE_COLUMNS = ("topic", "partition", "offset", "key", "value", "vh", "kh", "op", "lsn", "has_key", "malformed",
                 "flat_op", "flat_lsn", "flat_deleted", "no_payload")


class JsonFormat:
    """Kafka Connect's JsonConverter with schemas: each record carries its schema; a version is a hash of it.
    `value`/`key`: the columns holding the JSON (pgcdc.spark.protobuf decodes into JSON columns of its own)."""

    json_decimals = True

    def __init__(self, value: str = "value", key: str = "key") -> None:
        self.value, self.key = value, key

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        probe = (f"struct<schema: string, payload: struct<op: string, source: struct<lsn: bigint>, "
                 f"{probe_fields(options)}>>")
        flat_lsn = F.coalesce(*(F.col(f"v.payload.`{n}`") for n in options.lsn_fields))
        return raw.select(
            *raw.columns,
            F.from_json(F.col(self.value).cast("string"), probe).alias("v"),
            F.from_json(F.col(self.key).cast("string"), _KEY_PROBE).alias("k"),
        ).select(
            *raw.columns,
            F.xxhash64("v.schema").alias("vh"), F.xxhash64("k.schema").alias("kh"),
            F.col("v.payload.op").alias("op"), F.col("v.payload.source.lsn").alias("lsn"),
            F.col("k.payload").isNotNull().alias("has_key"),
            F.when(F.col(self.value).isNotNull() & F.col("v.schema").isNull(),
                   F.lit("malformed envelope: value is not JSON with schema and payload "
                         "(value.converter.schemas.enable must be true)")).alias("malformed"),
            F.col(f"v.payload.`{options.op_field}`").alias("flat_op"), flat_lsn.alias("flat_lsn"),
            (F.col(f"v.payload.`{options.deleted_field}`") == "true").alias("flat_deleted"),
            F.col("v.payload").isNull().alias("no_payload"),
        )

    def schemas(self, version: dict[str, Any]) -> tuple[str | None, str | None]:
        return _schema_text(version["sample_value"]), _schema_text(version["sample_key"])

    def rows(self, good: DataFrame, version: dict[str, Any]) -> DataFrame:
        return good.filter(F.col("vh").eqNullSafe(F.lit(version["vh"])) & (F.col("kh") == version["kh"]))

    def parse(self, rows: DataFrame, value_raw: T.StructType | None, key_raw: T.StructType,
              flat: bool = False, value_text: T.StructType | None = None,
              key_text: T.StructType | None = None) -> DataFrame:
        def read(c: str, payload: T.DataType) -> Column:
            return F.from_json(F.col(c).cast("string"), T.StructType([T.StructField("payload", payload)]))

        def image(row: T.StructType) -> T.DataType:
            # A flattened payload is the row (the added fields are not parsed into it).
            return row if flat else T.StructType([T.StructField("before", row), T.StructField("after", row)])

        cols = [read(self.key, key_raw).alias("kp")]
        if key_text is not None:
            cols.append(read(self.key, key_text).alias("kt"))
        if value_raw is not None:
            cols.append(read(self.value, image(value_raw)).alias("vp"))
            if value_text is not None:
                cols.append(read(self.value, image(value_text)).alias("vt"))
        return rows.select("*", *cols)


def classify(df: DataFrame, is_flat: Column, options: DecodeOptions, topics: set[str] | None) -> DataFrame:
    """Records (PROBE_COLUMNS) with the op and lsn of their form, `kind` (ordering), `deleted` and `reason`:
    why a record is not a change row of a table, null when it is one. `is_flat`: the record's version is
    flattened (decided once per version, from its schema)."""
    if "reason" in df.columns:
        return df
    op = F.when(is_flat, F.coalesce(F.col("flat_op"), F.when(F.col("flat_deleted") | F.col("no_payload"), "d"),
                                    F.lit("u"))).otherwise(F.col("op"))
    lsn = F.when(is_flat, F.col("flat_lsn")).otherwise(F.col("lsn"))
    # Deletes: an envelope's `d`, a rewritten flattened delete (`__deleted`), and records without a row: Kafka
    # tombstones and the null value the transform's tombstone mode writes. Those carry no LSN (kind 2, below).
    rowless = F.col("value").isNull() | (is_flat & F.col("no_payload"))
    kind = F.when(rowless, F.lit(2)).when(F.col("op") == "r", F.lit(0)).otherwise(F.lit(1))
    deleted = F.when(rowless, F.lit(True)).when(is_flat, F.col("flat_deleted") | (F.col("op") == "d")).otherwise(
        F.col("op") == "d")
    reason = (
        F.when(F.lit(topics is not None) & ~F.col("topic").isin(*(sorted(topics or ()))), F.lit("unknown topic"))
        .when(F.col("key").isNull() & F.col("value").isNull(), F.lit("record without key and value"))
        .when(F.col("malformed").isNotNull(), F.col("malformed"))
        .when(F.col("value").isNotNull() & F.col("op").isNull(), F.lit("malformed envelope: no payload.op"))
        .when(F.col("value").isNotNull() & ~F.col("op").isin("c", "u", "d", "r", "t"),
              F.concat(F.lit("not a row change: op "), F.col("op")))
        .when(F.col("value").isNotNull() & ~is_flat & F.col("lsn").isNull(),
              F.lit("malformed envelope: no source.lsn"))
        .when(F.lit(options.exact) & is_flat & ~F.col("no_payload") & F.col("lsn").isNull(),
              F.lit("flattened record without an LSN"))
        .when((F.col("op") != "t") & ~F.col("has_key"), F.lit("no key: table without primary key or malformed key"))
    )
    rest = [c for c in df.columns if c not in ("op", "lsn")]
    return (df.select(*rest, op.alias("op"), lsn.alias("lsn"))
            .select("*", kind.alias("kind"), deleted.alias("deleted"), reason.alias("reason")))


def decode_changes(raw: DataFrame, options: DecodeOptions | None = None,
                   topics: set[str] | None = None, fmt: RecordFormat | None = None) -> Decoded:
    """Decode a batch of Kafka records. `topics`: the table topics expected (others are quarantined);
    None accepts every topic whose records are Debezium change envelopes or flattened rows (flattened.py).
    `fmt`: how records are written (default the JsonConverter with schemas; pgcdc.spark.avro.AvroFormat for
    Confluent's Avro). Raises ConfigError (nothing decoded) for flattened topics that cannot be applied exactly
    when `options.exact`."""
    options = options or DecodeOptions()
    if fmt is None:
        raw = cloudevents.unwrap(raw)  # CloudEvents JSON records: the envelope inside their `data`
        fmt = JsonFormat()
    if not getattr(fmt, "json_decimals", False):
        options = replace(options, decimal_format="base64", key_decimal_format=None)
    # Cached for the passes below; the schema texts are not kept (a sample record per version is enough).
    base = fmt.probe(raw, options).select(*PROBE_COLUMNS).persist()
    # The form (envelope or flattened) is a property of the schema version: decided once per version below.
    shaped = base.filter(F.col("malformed").isNull())
    if topics is not None:
        shaped = shaped.filter(F.col("topic").isin(*sorted(topics)))
    versions = (shaped.groupBy("topic", "vh", "kh")
                .agg(F.first("value").alias("sample_value"), F.first("key").alias("sample_key"),
                     F.max(_pos(F.col("lsn"), 1, F.col("partition"), F.col("offset"))).alias("newest"),
                     F.max(_pos(F.col("flat_lsn"), 1, F.col("partition"), F.col("offset"))).alias("newest_flat"),
                     F.max(F.when(F.col("op") == "t", _pos(F.col("lsn"), 1, F.col("partition"), F.col("offset"))))
                     .alias("truncate"))
                .collect())
    by_topic: dict[str, list[dict[str, Any]]] = {}
    flat_ids: list[int] = []
    for row in versions:
        version = row.asDict()
        version["vs"], version["ks"] = fmt.schemas(version)
        del version["sample_value"], version["sample_key"]
        vs = None if version["vs"] is None else json.loads(version["vs"])
        version["flat"] = None
        if vs is not None and flattened.is_flattened(vs):
            version["flat"] = flattened.shape(vs, options)
            version["newest"], version["truncate"] = version["newest_flat"], None
            flat_ids.append(row["vh"])
        by_topic.setdefault(row["topic"], []).append(version)
    for topic, rows in sorted(by_topic.items()) if options.exact else ():
        shapes = [v["flat"] for v in rows if v["flat"] is not None]
        refused = flattened.refusal(topic, shapes, options) if shapes else None
        if refused is not None:
            base.unpersist()
            raise ConfigError(refused)

    is_flat = F.col("vh").isin(*flat_ids) if flat_ids else F.lit(False)
    checked = classify(base, is_flat, options, topics)
    bad = checked.filter(F.col("reason").isNotNull()).select("topic", "partition", "offset", "key", "value",
                                                             "reason")
    good = checked.filter(F.col("reason").isNull())

    decoded = Decoded()
    quarantined = [bad]
    for topic, rows in by_topic.items():
        table, bad_rows = _decode_table(good, topic, rows, options, fmt, topics)
        if bad_rows is not None:
            quarantined.append(bad_rows)
        if table is not None:
            decoded.tables[topic] = table
    out = quarantined[0]
    for q in quarantined[1:]:
        out = out.unionByName(q)
    decoded.quarantine = out
    return decoded


def _schema(record: bytes | bytearray | None) -> dict[str, Any] | None:
    """The Connect schema of a sample record; None for records that have none (they are quarantined: the
    versions are sampled before the per-record checks, which need to know each version's form)."""
    if record is None:
        return None
    try:
        parsed = json.loads(bytes(record))
    except ValueError:
        return None
    schema = parsed.get("schema") if isinstance(parsed, dict) else None
    return schema if isinstance(schema, dict) else None


def _schema_text(record: bytes | bytearray | None) -> str | None:
    schema = _schema(record)
    return None if schema is None else json.dumps(schema)


def _decode_table(good: DataFrame, topic: str, versions: list[Any], options: DecodeOptions, fmt: RecordFormat,
                  topics: set[str] | None) -> tuple[TableChanges | None, DataFrame | None]:
    rows_here = good.filter(F.col("topic") == topic)
    value_versions = [v for v in versions if v["vs"] is not None]
    # The table's newest value schema; truncate-only versions carry no row schema.
    row_versions = []
    for v in value_versions:
        after = _row_schema(v)
        if after is not None and v["ks"] is not None:
            row_versions.append((v, after))
    newest = max((v["newest"] for v in versions), default="")
    t_pos = max((v["truncate"] for v in versions if v["truncate"]), default=None)
    if not row_versions:
        if t_pos is None:
            return None, None
        # Only a truncate of this table in the batch: no row schema; the target keeps its own.
        empty = good.limit(0).select(F.lit(None).cast("string").alias(POS), F.lit(False).alias(DELETED),
                                     F.lit(None).cast("string").alias(OP))
        return TableChanges(topic, (), T.StructType([]), empty, "", t_pos), None
    latest_v, latest_after = max(row_versions, key=lambda p: p[0]["newest"])
    latest = row_codec(latest_after, options)
    keys = tuple(f["field"] for f in json.loads(latest_v["ks"]).get("fields", []))
    keep = options.unrepresentable != "quarantine"
    listed = keep and latest.can_fail(keys)
    no_list = [F.lit(None).cast(UNREPRESENTABLE_TYPE).alias(UNREPRESENTABLE)] if listed else []

    parts: list[DataFrame] = []
    for v in versions:
        if v["ks"] is None:
            continue  # truncates: no key
        key_codec = row_codec(json.loads(v["ks"]), options.for_key())
        key_text = F.col("kt.payload") if key_codec.text is not None else None
        if v["vs"] is None:  # tombstones: key only
            part = classify(fmt.rows(rows_here, v), F.lit(False), options, topics).filter(F.col("reason").isNull())
            parsed = fmt.parse(part, None, key_codec.raw, key_text=key_codec.text)
            key_vals, key_err = decode_key(key_codec, v["ks"], key_text)
            cols = [F.lit(None).cast(latest.typed[n].dataType).alias(n) for n in latest.names if n not in keys]
            parts.append(_finish(parsed, key_vals, cols + no_list, key_err))
            continue
        after = _row_schema(v)
        if after is None:
            continue
        codec = row_codec(after, options)
        flat = v["flat"] is not None
        part = classify(fmt.rows(rows_here, v), F.lit(flat), options, topics)
        part = part.filter(F.col("reason").isNull() & (F.col("op") != "t"))
        parsed = fmt.parse(part, codec.raw, key_codec.raw, flat, codec.text, key_codec.text)

        def image(c: str, flat: bool = flat) -> Column:
            return (F.col(f"{c}.payload") if flat else
                    F.when(F.col("op") == "d", F.col(f"{c}.payload.before")).otherwise(F.col(f"{c}.payload.after")))

        text = image("vt") if codec.text is not None else None
        err: Column | None = None
        unrepresentable: Column | None = None
        if keep:
            values, unrepresentable = codec.decode_keeping(image("vp"), keys, options.unrepresentable == "clamp", text)
        else:
            values, err = codec.decode(image("vp"), text)
        key_vals, key_err = decode_key(key_codec, v["ks"], key_text)
        by_name = dict(zip(codec.names, values))
        cols = []
        for name in latest.names:
            if name in keys:
                continue
            target = latest.typed[name].dataType
            if name in by_name:
                src = codec.typed[name].dataType
                cols.append(by_name[name] if src == target else by_name[name].try_cast(target).alias(name))
            else:
                cols.append(F.lit(None).cast(target).alias(name))
        if listed:
            cols.append(unrepresentable.alias(UNREPRESENTABLE) if unrepresentable is not None else no_list[0])
        error = F.coalesce(err, key_err) if err is not None else key_err
        parts.append(_finish(parsed, key_vals, cols, error))

    if not parts:
        return None, None
    union = parts[0]
    for p in parts[1:]:
        union = union.unionByName(p)
    # Tombstones carry no LSN: they take the position of the event before them for the same key in the
    # partition (their delete), so they sort right after it and never above a later change of that key.
    w = (Window.partitionBy("partition", "__key").orderBy("offset")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    lsn = F.last(F.col("__lsn"), ignorenulls=True).over(w)
    union = union.withColumn("__lsn", F.coalesce(F.col("__lsn"), lsn))
    union = union.withColumn(POS, _pos(F.col("__lsn"), F.col("__kind"), F.col("partition"), F.col("offset")))
    bad_rows = union.filter(F.col("__error").isNotNull()).select(
        F.lit(topic).alias("topic"), "partition", "offset", "__rkey", "__rvalue", "__error").toDF(
        *QUARANTINE_SCHEMA.names)
    data_names = [*keys, *[n for n in latest.names if n not in keys]]
    rows = union.filter(F.col("__error").isNull()).select(*data_names, *([UNREPRESENTABLE] if listed else []), *META)
    schema = T.StructType([latest.typed[n] if n in latest.names else _key_field(keys, n, versions, options)
                           for n in data_names]
                          + ([T.StructField(UNREPRESENTABLE, UNREPRESENTABLE_TYPE)] if listed else []))
    return TableChanges(topic, keys, schema, rows, newest, t_pos), bad_rows


def _key_field(keys: tuple[str, ...], name: str, versions: list[Any], options: DecodeOptions) -> T.StructField:
    for v in versions:
        if v["ks"] is not None:
            return row_codec(json.loads(v["ks"]), options.for_key()).typed[name]
    raise KeyError(name)


def _row_schema(version: dict[str, Any]) -> dict[str, Any] | None:
    """The row's Connect schema in a version: the envelope's `after`, or the flattened row's own fields."""
    if version["flat"] is not None:
        row: dict[str, Any] = version["flat"].row
        return row
    return envelope_fields(json.loads(version["vs"])).get("after")


def _finish(parsed: DataFrame, key_vals: list[Column], cols: list[Column], error: Column | None) -> DataFrame:
    """One schema version's rows: key columns, aligned value columns, and what ordering and errors need."""
    return parsed.select(
        *key_vals, *cols,
        F.col("op").alias(OP), F.col("deleted").alias(DELETED),
        F.col("lsn").alias("__lsn"), F.col("kind").alias("__kind"),
        "partition", "offset",
        # The key's bytes (not their text: Avro keys are not UTF-8) group a key's events for tombstones.
        F.col("key").alias("__key"),
        F.col("key").alias("__rkey"), F.col("value").alias("__rvalue"),
        (error if error is not None else F.lit(None).cast("string")).alias("__error"),
    )
