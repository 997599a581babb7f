"""Confluent's Avro wire format (magic byte 0, 4-byte schema id, Avro binary) as a RecordFormat for
decode_changes: what pgcdc (or Kafka Connect) writes with `value.converter=io.confluent.connect.avro.AvroConverter`.

    fmt = AvroFormat("http://registry:8081")             # one per job: it caches the schemas it fetched
    spark = local_session(packages=[avro_package()])      # the default decoder's from_avro
    decoded = decode_changes(raw, fmt=fmt)                 # the same tables as JSON

A version is the (topic, value schema id, key schema id) of a record, read from the record's first bytes in
the JVM. Each id's schema is fetched from the registry once (confluent-kafka's client) and turned back into
its Connect schema (the `connect.*` properties Confluent's converter writes, AvroData.toConnectSchema), so the
codecs of pgcdc.spark.schema apply unchanged. Each version's records are decoded once, by one of two decoders
(`decoder=`), into a struct of Avro's plain types (logical types are read as their underlying values, as the
JSON path reads them), which `adapt` turns into the codecs' raw types:

- "spark" (default): Spark's `from_avro` in the JVM (the spark-avro jar, `avro_package()`); measured about
  twice as fast as the other (benchmarks/spark_apply.py --format avro; docs/spark.md, "Avro");
- "arrow": mapInArrow with fastavro's schemaless_reader, the writer schema parsed once per task: for sessions
  without the spark-avro jar.

Both give the same rows (tests/spark/test_avro.py).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyspark
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.converters.avro_schema import reader_schema, writer_schema
from pgcdc.spark import flattened
from pgcdc.spark.changes import PROBE_COLUMNS
from pgcdc.spark.fieldcodec import DecodeOptions

DECODERS = ("arrow", "spark")
_PRIMITIVE: dict[str, T.DataType] = {
    "int": T.IntegerType(), "long": T.LongType(), "float": T.FloatType(), "double": T.DoubleType(),
    "boolean": T.BooleanType(), "string": T.StringType(), "bytes": T.BinaryType(),
}
_CONNECT_PRIMITIVE = {"int": "int32", "long": "int64", "float": "float", "double": "double", "boolean": "boolean",
                      "string": "string", "bytes": "bytes"}
_PASSED = ("topic", "partition", "offset", "key", "value")


def avro_package() -> str:
    """Spark's `from_avro` (spark-avro), the build matching the installed PySpark; for decoder="spark"."""
    return f"org.apache.spark:spark-avro_2.13:{pyspark.__version__}"


# -- the registry's Avro schema -> Connect schema and Spark type ---------------------------------------------

class _Names:
    """Avro's named types seen so far (a record is defined once, then referred to by name)."""

    def __init__(self) -> None:
        self.types: dict[str, Any] = {}

    def define(self, node: dict[str, Any], space: str | None) -> str | None:
        name = node["name"]
        space = node.get("namespace", space) if "." not in name else name.rpartition(".")[0]
        full = name if "." in name else (f"{space}.{name}" if space else name)
        self.types[full] = node
        self.types.setdefault(full.rpartition(".")[2], node)
        return space or None

    def find(self, name: str, space: str | None) -> Any:
        return self.types.get(f"{space}.{name}" if space and "." not in name else name) or self.types[name]


def _walk(node: Any, names: _Names, space: str | None) -> tuple[Any, bool, str | None]:
    """(the schema node, optional, its namespace) with unions with null unwrapped and names resolved."""
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) != 1:
            raise ValueError(f"union {node!r} is not a Connect optional schema")
        inner, _, space = _walk(branches[0], names, space)
        return inner, True, space
    if isinstance(node, str) and node not in _PRIMITIVE:
        return names.find(node, space), False, space
    if isinstance(node, dict) and node.get("type") == "record":
        space = names.define(node, space)
    return node, False, space


def connect_schema(node: Any, names: _Names | None = None, space: str | None = None) -> dict[str, Any]:
    """The Connect schema (JsonConverter's JSON form) an Avro schema written by Confluent's AvroConverter was
    derived from: types from `connect.type`/Avro's, names from `connect.name`, `connect.parameters`."""
    names = names or _Names()
    node, optional, space = _walk(node, names, space)
    spec = node if isinstance(node, dict) else {"type": node}
    kind = spec["type"]
    out: dict[str, Any]
    if isinstance(kind, (dict, list)):  # {"type": {"type": "record", ...}}
        out = connect_schema(kind, names, space)
    elif kind == "record":
        space = spec.get("namespace", space) if "." not in spec["name"] else spec["name"].rpartition(".")[0]
        out = {"type": "struct", "fields": [{**connect_schema(f["type"], names, space), "field": f["name"]}
                                            for f in spec["fields"]]}
    elif kind == "array":
        out = {"type": "array", "items": connect_schema(spec["items"], names, space)}
    elif kind == "map":
        out = {"type": "map", "keys": {"type": "string", "optional": False},
               "values": connect_schema(spec["values"], names, space)}
    else:
        out = {"type": spec.get("connect.type") or _CONNECT_PRIMITIVE[kind]}
    for prop, key in (("connect.name", "name"), ("connect.version", "version"), ("connect.parameters", "parameters")):
        if prop in spec:
            out[key] = spec[prop]
    out["optional"] = optional or out.get("optional", False)
    return out


def spark_type(node: Any, names: _Names | None = None, space: str | None = None) -> T.DataType:
    """The Spark type of an Avro schema read without its logical types (as from_avro reads the writer schema
    after writer_schema() stripped them)."""
    names = names or _Names()
    node, _, space = _walk(node, names, space)
    spec = node if isinstance(node, dict) else {"type": node}
    kind = spec["type"]
    if isinstance(kind, (dict, list)):
        return spark_type(kind, names, space)
    if kind == "record":
        space = spec.get("namespace", space) if "." not in spec["name"] else spec["name"].rpartition(".")[0]
        return T.StructType([T.StructField(f["name"], spark_type(f["type"], names, space)) for f in spec["fields"]])
    if kind == "array":
        return T.ArrayType(spark_type(spec["items"], names, space))
    if kind == "map":
        return T.MapType(T.StringType(), spark_type(spec["values"], names, space))
    return _PRIMITIVE[kind]


def adapt(c: Column, have: T.DataType, want: T.DataType) -> Column:
    """A column of Avro's plain types as the raw type a codec expects of JSON (bytes as base64 text,
    int8/int16 as byte/short): the codecs then decode both formats alike."""
    if have == want:
        return c
    if isinstance(have, T.BinaryType) and isinstance(want, T.StringType):
        return F.base64(c)
    if isinstance(have, T.StructType) and isinstance(want, T.StructType):
        fields = {f.name: f.dataType for f in have.fields}
        return F.when(c.isNotNull(), F.struct(*[
            (adapt(c.getField(f.name), fields[f.name], f.dataType) if f.name in fields
             else F.lit(None).cast(f.dataType)).alias(f.name) for f in want.fields]))
    if isinstance(have, T.ArrayType) and isinstance(want, T.ArrayType):
        return F.transform(c, lambda x: adapt(x, have.elementType, want.elementType))
    if isinstance(have, T.MapType) and isinstance(want, T.MapType):
        return F.transform_values(c, lambda k, v: adapt(v, have.valueType, want.valueType))
    if isinstance(want, T.StringType) and isinstance(have, (T.StructType, T.ArrayType, T.MapType)):
        return F.to_json(c)  # a map with non-string keys: JSON text, as the JSON path keeps it
    return c.cast(want)


# -- the format -------------------------------------------------------------------------------------------

class AvroFormat:
    """Confluent's Avro wire format, schemas from a registry by id. `registry`: the registry's URL (the
    Confluent API; Apicurio's is under /apis/ccompat/v7); `conf`: more of confluent-kafka's client settings
    (`basic.auth.user.info`, `ssl.*`, ...). Reuse one across batches: fetched schemas are kept."""

    passed: tuple[str, ...] = _PASSED  # the raw columns kept beside the decoded ones (a subclass adds its own)
    json_decimals = False  # (RecordFormat) Avro decimals are bytes

    def __init__(self, registry: str, decoder: str = "spark", **conf: Any) -> None:
        if decoder not in DECODERS:
            raise ValueError(f"AvroFormat decoder={decoder!r}: expected one of {', '.join(DECODERS)}")
        from confluent_kafka.schema_registry import SchemaRegistryClient

        self.url = registry
        self.decoder = decoder
        self.client = SchemaRegistryClient({"url": registry, **conf})
        self.schemas_by_id: dict[int, tuple[str, str, T.DataType] | str] = {}  # id -> (Avro, Connect, type) | error
        self.decoded: dict[tuple[str, int | None, int | None], DataFrame] = {}  # the batch's versions, cached
        self.base: DataFrame | None = None

    def _schema(self, schema_id: int) -> tuple[str, str, T.DataType] | str:
        """(writer schema text, Connect schema text, Spark type), or why the id cannot be used."""
        known = self.schemas_by_id.get(schema_id)
        if known is not None:
            return known
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            text = self.client.get_schema(schema_id).schema_str
        except SchemaRegistryError as exc:
            if exc.http_status_code != 404:
                raise RuntimeError(f"schema registry {self.url}: schema id {schema_id}: {exc}") from None
            entry: tuple[str, str, T.DataType] | str = f"schema id {schema_id} is not in the schema registry"
        else:
            try:
                parsed = writer_schema(text)
                entry = (json.dumps(parsed), json.dumps(connect_schema(parsed)), spark_type(parsed))
            except (ValueError, KeyError, TypeError) as exc:
                entry = f"schema id {schema_id} is not a Connect schema: {exc}"
        self.schemas_by_id[schema_id] = entry
        return entry

    def probe(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        def schema_id(c: Column) -> Column:
            ok = (F.length(c) >= 5) & (F.substring(c, 1, 1) == F.lit(b"\x00"))
            return F.when(ok, F.conv(F.hex(F.substring(c, 2, 4)), 16, 10).cast("long"))

        base = raw.select(*self.passed, schema_id(F.col("value")).alias("vh"), schema_id(F.col("key")).alias("kh"))
        wire = ((F.col("value").isNotNull() & F.col("vh").isNull()) | (F.col("key").isNotNull() & F.col("kh").isNull()))
        for cached in (self.base, *self.decoded.values()):  # the previous batch's
            if cached is not None:
                cached.unpersist()
        base = self.base = base.select("*", wire.alias("wire_bad")).persist()
        bad = self._finish(base.filter("wire_bad").select(
            *self.passed, "vh", "kh", F.lit(None).cast("string").alias("op"), F.lit(None).cast("long").alias("lsn"),
            F.lit(False).alias("has_key"),
            F.lit("not Confluent's wire format (magic byte 0, 4-byte schema id)").alias("malformed"),
            *_no_flat_columns()))
        parts = [bad.select(*PROBE_COLUMNS)]
        self.decoded = {}
        for row in base.filter("not wire_bad").select("topic", "vh", "kh").distinct().collect():
            version = (row["topic"], row["vh"], row["kh"])
            rows = base.filter((F.col("topic") == row["topic"]) & F.col("vh").eqNullSafe(F.lit(row["vh"]))
                               & F.col("kh").eqNullSafe(F.lit(row["kh"]))).select(*self.passed, "vh", "kh")
            decoded = self._finish(self._decode(rows, row["vh"], row["kh"], options)).persist()
            self.decoded[version] = decoded
            parts.append(decoded.select(*PROBE_COLUMNS))
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out

    def _finish(self, probed: DataFrame) -> DataFrame:
        """The probe's columns of decoded records as the caller sees them (a subclass's say over them)."""
        return probed

    def _decode(self, rows: DataFrame, vid: int | None, kid: int | None, options: DecodeOptions) -> DataFrame:
        """One version's records with `v` and `k` (Avro's plain types) and the probe's columns."""
        value = None if vid is None else self._schema(vid)
        key = None if kid is None else self._schema(kid)
        unusable = next((s for s in (value, key) if isinstance(s, str)), None)
        if unusable is not None:
            return rows.select("*", F.lit(None).alias("v"), F.lit(None).alias("k"),
                               F.lit(None).cast("string").alias("op"), F.lit(None).cast("long").alias("lsn"),
                               F.lit(False).alias("has_key"), F.lit(unusable).alias("malformed"),
                               *_no_flat_columns())
        assert not isinstance(value, str) and not isinstance(key, str)
        decode = _decode_arrow if self.decoder == "arrow" else _decode_spark
        out = decode(rows, value, key)
        v_type = out.schema["v"].dataType
        names = v_type.names if isinstance(v_type, T.StructType) else []
        source = out.schema["v"].dataType["source"].dataType if "source" in names else None
        op = F.col("v.op") if "op" in names else F.lit(None).cast("string")
        lsn = (F.col("v.source.lsn").cast("long") if isinstance(source, T.StructType) and "lsn" in source.names
               else F.lit(None).cast("long"))
        envelope = value is None or not flattened.is_flattened(json.loads(value[1]))
        # An envelope's op is a required field: null means the bytes did not decode (from_avro's PERMISSIVE
        # mode and fastavro at a truncated end do not always give a null record).
        value_failed = F.col("v").isNull() | (F.col("v.op").isNull() if envelope and "op" in names else F.lit(False))
        failed = F.when((F.col("value").isNotNull() & value_failed) | (F.col("key").isNotNull() & F.col("k").isNull()),
                        F.lit(f"cannot decode Avro with schema ids value {vid}, key {kid}"))
        return out.select("*", op.alias("op"), lsn.alias("lsn"), F.col("k").isNotNull().alias("has_key"),
                          failed.alias("malformed"), *_flat_columns(names, options))

    def schemas(self, version: dict[str, Any]) -> tuple[str | None, str | None]:
        value = None if version["vh"] is None else self._schema(version["vh"])
        key = None if version["kh"] is None else self._schema(version["kh"])
        return (value[1] if isinstance(value, tuple) else None), (key[1] if isinstance(key, tuple) else None)

    def rows(self, good: DataFrame, version: dict[str, Any]) -> DataFrame:
        return self.decoded[(version["topic"], version["vh"], version["kh"])]

    def parse(self, rows: DataFrame, value_raw: T.StructType | None, key_raw: T.StructType,
              flat: bool = False, value_text: T.StructType | None = None,
              key_text: T.StructType | None = None) -> DataFrame:
        # (Avro decimals are bytes: decode_changes reads them as base64, whose codecs need no text.)
        k_type = rows.schema["k"].dataType
        cols = [F.struct(adapt(F.col("k"), k_type, key_raw).alias("payload")).alias("kp")]
        if value_raw is not None:
            v_type = rows.schema["v"].dataType
            assert isinstance(v_type, T.StructType)
            # A flattened record is the row (adapt keeps the row's fields, not the added ones).
            payload = adapt(F.col("v"), v_type, value_raw) if flat else F.struct(*[
                adapt(F.col(f"v.{side}"), v_type[side].dataType, value_raw).alias(side)
                for side in ("before", "after")])
            cols.append(F.struct(payload.alias("payload")).alias("vp"))
        return rows.select("*", *cols)


Schema = tuple[str, str, T.DataType]


def _flat_columns(names: list[str], options: DecodeOptions) -> list[Column]:
    """A flattened row's added fields (pgcdc.spark.flattened), null where the record has none."""
    def field(name: str, kind: str) -> Column:
        return F.col(f"v.`{name}`").cast(kind) if name in names else F.lit(None).cast(kind)

    lsn = F.coalesce(*(field(n, "long") for n in options.lsn_fields))
    return [field(options.op_field, "string").alias("flat_op"), lsn.alias("flat_lsn"),
            (field(options.deleted_field, "string") == "true").alias("flat_deleted"),
            F.col("v").isNull().alias("no_payload")]


def _no_flat_columns() -> list[Column]:
    return [F.lit(None).cast("string").alias("flat_op"), F.lit(None).cast("long").alias("flat_lsn"),
            F.lit(None).cast("boolean").alias("flat_deleted"), F.lit(True).alias("no_payload")]


def _decode_spark(rows: DataFrame, value: Schema | None, key: Schema | None) -> DataFrame:
    from pyspark.sql.avro.functions import from_avro

    def read(column: str, schema: Schema | None) -> Column:
        if schema is None:
            return F.lit(None)
        body = F.expr(f"substring({column}, 6)")
        return from_avro(body, schema[0], {"mode": "PERMISSIVE"})

    return rows.select("*", read("value", value).alias("v"), read("key", key).alias("k"))


def _decode_arrow(rows: DataFrame, value: Schema | None, key: Schema | None) -> DataFrame:
    from pyspark.sql.pandas.types import to_arrow_type

    null = T.NullType()
    v_type, k_type = (null if value is None else value[2]), (null if key is None else key[2])
    out_schema = T.StructType([*rows.schema.fields, T.StructField("v", v_type), T.StructField("k", k_type)])
    texts = (None if value is None else value[0], None if key is None else key[0])
    arrow_types = tuple(None if t == null else to_arrow_type(t) for t in (v_type, k_type))

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import fastavro

        # once per task; without fields' defaults, which fastavro refuses where they are NaN or an infinity
        readers = [None if t is None else fastavro.parse_schema(reader_schema(t)) for t in texts]

        def column(data: list[bytes | None], parsed: Any, arrow_type: Any, n: int) -> pa.Array:
            if parsed is None:
                return pa.nulls(n)
            out = []
            for record in data:
                if record is None:
                    out.append(None)
                    continue
                buf = io.BytesIO(record)
                buf.seek(5)
                try:
                    out.append(fastavro.schemaless_reader(buf, parsed, None))
                except Exception:  # a record its schema cannot read: null, quarantined by the caller
                    out.append(None)
            return pa.array(out, type=arrow_type)

        for batch in batches:
            n = batch.num_rows
            v = column(batch.column("value").to_pylist(), readers[0], arrow_types[0], n)
            k = column(batch.column("key").to_pylist(), readers[1], arrow_types[1], n)
            yield pa.RecordBatch.from_arrays([*batch.columns, v, k], names=[*batch.schema.names, "v", "k"])

    return rows.mapInArrow(decode, out_schema)
