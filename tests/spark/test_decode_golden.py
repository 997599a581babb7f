"""Every field of the golden Debezium captures (tests/data/debezium, real Debezium 3.6 output in several handling
modes) decoded by Spark built-ins, compared with a reference decoder written from the Connect/Debezium type
definitions in plain Python. Values that Spark's types cannot hold must be quarantined, never rounded."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pgcdc.spark import DecodeOptions, decode_changes

DATA = Path(__file__).parent.parent / "data" / "debezium"
SCENARIOS = sorted(p.stem for p in DATA.glob("*.jsonl"))
RAW = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
       "timestampType int")
EPOCH = dt.datetime(1970, 1, 1)


class Unrepresentable(Exception):
    pass


def _unscaled(b64: str) -> int:
    return int.from_bytes(base64.b64decode(b64), "big", signed=True)


def _fit(d: Decimal, precision: int, scale: int) -> Decimal:
    digits = len(d.as_tuple().digits)
    exp = d.as_tuple().exponent
    assert isinstance(exp, int)
    if -exp > scale or digits + exp > precision - scale:
        raise Unrepresentable
    return d.quantize(Decimal(1).scaleb(-scale))


def reference(schema: dict[str, Any], v: Any, options: DecodeOptions) -> Any:
    """The value Spark must produce for one Connect value (as collect() returns it)."""
    try:
        return _reference(schema, v, options)
    except OverflowError:  # outside years 1..9999 (PostgreSQL's infinity)
        raise Unrepresentable from None


def _reference(schema: dict[str, Any], v: Any, options: DecodeOptions) -> Any:
    if v is None:
        return None
    name, type_ = schema.get("name"), schema.get("type")
    params = schema.get("parameters") or {}
    if name == "org.apache.kafka.connect.data.Decimal":
        scale = int(params["scale"])
        precision = int(params.get("connect.decimal.precision", 38))
        return _fit(Decimal(_unscaled(v)).scaleb(-scale), precision, scale)
    if name == "io.debezium.data.VariableScaleDecimal":
        return _fit(Decimal(_unscaled(v["value"])).scaleb(-v["scale"]), 38, options.variable_scale)
    if name in ("io.debezium.time.Date", "org.apache.kafka.connect.data.Date"):
        return dt.date(1970, 1, 1) + dt.timedelta(days=v)
    micros_per = {"io.debezium.time.Time": 1000, "org.apache.kafka.connect.data.Time": 1000,
                  "io.debezium.time.MicroTime": 1}
    if name in micros_per:
        return v * micros_per[name]
    if name == "io.debezium.time.NanoTime":
        return v // 1000
    ts_micros = {"io.debezium.time.Timestamp": 1000, "org.apache.kafka.connect.data.Timestamp": 1000,
                 "io.debezium.time.MicroTimestamp": 1}
    if name in ts_micros:
        return EPOCH + dt.timedelta(microseconds=v * ts_micros[name])
    if name == "io.debezium.time.NanoTimestamp":
        return EPOCH + dt.timedelta(microseconds=v // 1000)
    if name == "io.debezium.time.ZonedTimestamp":
        try:
            instant = dt.datetime.fromisoformat(v)
        except ValueError:
            raise Unrepresentable from None
        return instant.astimezone().replace(tzinfo=None)  # pyspark returns local wall time
    if type_ == "bytes":
        return base64.b64decode(v)
    if type_ in ("float", "double"):
        # The JsonConverter writes NaN and the infinities as JSON strings.
        x = float(v)
        return finite(struct.unpack("f", struct.pack("f", x))[0] if type_ == "float" else x)
    if type_ == "array":
        return [reference(schema["items"], x, options) for x in v]
    if type_ == "map":
        return {k: reference(schema["values"], x, options) for k, x in v.items()}
    if type_ == "struct":
        return {f["field"]: reference(f, v.get(f["field"]), options) for f in schema["fields"]}
    return v


def finite(x: float) -> Any:
    return "NaN" if math.isnan(x) else x  # NaN != NaN: compare a marker


def plain(v: Any) -> Any:
    if isinstance(v, float):
        return finite(v)
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if hasattr(v, "asDict"):
        return plain(v.asDict(recursive=True))
    return v


@pytest.fixture(scope="module")
def golden(spark: SparkSession) -> dict[str, Any]:
    """All captures decoded in one batch (topics prefixed with the scenario), collected once."""
    records = {s: [json.loads(line) for line in (DATA / f"{s}.jsonl").read_text().splitlines()] for s in SCENARIOS}
    rows = [(json.dumps(r["key"]).encode() if r["key"] is not None else None,
             json.dumps(r["value"]).encode() if r["value"] is not None else None,
             f"{s}:{r['topic']}", 0, i, None, 0) for s, recs in records.items() for i, r in enumerate(recs)]
    raw = spark.createDataFrame(rows, RAW)
    decoded = decode_changes(raw, DecodeOptions(unrepresentable="quarantine"))
    kept: dict[tuple[str, int], list[str]] = {}  # the default mode: rows kept, failing columns named
    for topic, table in decode_changes(raw, DecodeOptions()).tables.items():
        if "_pgcdc_unrepresentable" in table.rows.columns:
            for row in table.rows.filter("_pgcdc_unrepresentable IS NOT NULL").collect():
                kept[(topic, int(row["__pgcdc_pos"][-16:], 16))] = row["_pgcdc_unrepresentable"]
    got: dict[tuple[str, int], dict[str, Any]] = {}
    for topic, table in decoded.tables.items():
        for row in table.rows.collect():
            if row["__pgcdc_op"] is None:
                continue  # tombstones
            offset = int(row["__pgcdc_pos"][-16:], 16)
            got[(topic, offset)] = {k: plain(v) for k, v in row.asDict().items() if not k.startswith("__pgcdc")}
    quarantined = {(r["topic"], r["offset"]): r["reason"] for r in decoded.quarantine.collect()}
    return {"records": records, "got": got, "quarantined": quarantined, "kept": kept}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_golden_capture_decodes_like_the_reference(golden: dict[str, Any], scenario: str) -> None:
    options = DecodeOptions()
    expected: dict[tuple[str, int], dict[str, Any]] = {}
    unrepresentable: set[tuple[str, int]] = set()
    schemaless: set[tuple[str, int]] = set()
    for i, r in enumerate(golden["records"][scenario]):
        value, topic = r["value"], f"{scenario}:{r['topic']}"
        if value is not None and "schema" not in value:
            schemaless.add((topic, i))
            continue
        if not value or value["payload"].get("op") not in ("c", "u", "d", "r") or r["key"] is None:
            continue
        fields = {f["field"]: f for f in value["schema"]["fields"]}
        image = "before" if value["payload"]["op"] == "d" else "after"
        try:
            expected[(topic, i)] = reference(fields[image], value["payload"][image], options)
        except Unrepresentable:
            unrepresentable.add((topic, i))

    got = {k: v for k, v in golden["got"].items() if k[0].startswith(f"{scenario}:")}
    quarantined = {k: v for k, v in golden["quarantined"].items() if k[0].startswith(f"{scenario}:")}
    assert {k for k, v in quarantined.items() if v.startswith("cannot represent")} == unrepresentable
    # by default the same records are kept, with the columns the quarantine named listed
    kept = {k: sorted(v) for k, v in golden["kept"].items() if k[0].startswith(f"{scenario}:")}
    assert kept == {k: sorted(quarantined[k].removeprefix("cannot represent value of ").split(","))
                    for k in unrepresentable}
    assert {k for k, v in quarantined.items() if "schemas.enable" in v} == schemaless
    assert set(got) == set(expected)
    for key, want in expected.items():
        # delete images carry only the key (and fallbacks) under REPLICA IDENTITY DEFAULT; compare the fields
        # the table's newest schema has (older versions' fields are aligned to it)
        assert {k: got[key][k] for k in want if k in got[key]} == {k: v for k, v in want.items() if k in got[key]}, key


@pytest.mark.parametrize("mode", ["bytes", "base64", "base64-url-safe", "hex"])
def test_bytea_in_every_binary_handling_mode(spark: SparkSession, mode: str) -> None:
    """binary.handling.mode: 'bytes' is Connect bytes (base64 in JSON); the others are strings that only the
    propagated source type (column.propagate.source.type) marks as bytea."""
    from pyspark.sql import functions as F

    from pgcdc.spark.schema import SOURCE_TYPE, codec

    values = [b"", b"\x00", b"\xff\xfe\xfd", bytes(range(256)), b"\xfb\xff"]
    encode = {"bytes": lambda b: base64.b64encode(b).decode(), "base64": lambda b: base64.b64encode(b).decode(),
              "base64-url-safe": lambda b: base64.urlsafe_b64encode(b).decode(), "hex": bytes.hex}[mode]
    schema: dict[str, Any] = {"type": "bytes"} if mode == "bytes" else {
        "type": "string", "parameters": {SOURCE_TYPE: "BYTEA"}}
    fc = codec(schema, DecodeOptions(binary_mode=mode))
    df = spark.createDataFrame([(encode(v),) for v in values], "v string")
    value, error = fc.decode(F.col("v"))
    rows = df.select(value.alias("b"), (error if error is not None else F.lit(False)).alias("e")).collect()
    assert [bytes(r["b"]) for r in rows] == values
    assert not any(r["e"] for r in rows)
    plain_text = codec({"type": "string"}, DecodeOptions(binary_mode=mode))
    assert plain_text.typed.simpleString() == "string"  # without the source type a string stays a string


# Debezium's encodings of PostgreSQL's date infinities (days; snapshot and streaming: pgcdc.pgtypes.temporal
# for infinity, Debezium 3.6 measured -625821272 and -2147472691 for -infinity) and an interval it saturated.
DATE_SENTINELS = [(-622_191_234, "top"), (-2_147_472_692, "top"), (-625_821_272, "bottom"),
                  (-2_147_472_691, "bottom"), (2_932_897, "top"), (-719_163, "bottom"), (0, None)]


@pytest.mark.parametrize("mode", ["null", "clamp"])
def test_date_infinities_and_saturated_intervals(spark: SparkSession, mode: str) -> None:
    from pyspark.sql import functions as F

    from pgcdc.spark.schema import codec

    options = DecodeOptions(unrepresentable=mode)
    date = codec({"type": "int32", "name": "io.debezium.time.Date"}, options)
    df = spark.createDataFrame([(d,) for d, _ in DATE_SENTINELS], "v int")
    value, error = date.decode(F.col("v"))
    rows = df.select(value.alias("d"), error.alias("e")).collect()
    ends = {"top": dt.date(9999, 12, 31), "bottom": dt.date(1, 1, 1), None: dt.date(1970, 1, 1)}
    assert [r["e"] for r in rows] == [end is not None for _, end in DATE_SENTINELS]
    if mode == "clamp":
        assert [r["d"] for r in rows] == [ends[end] for _, end in DATE_SENTINELS]
    else:  # RowCodec.decode_keeping nulls a failed value; the codec's own value is not used then
        assert rows[-1]["d"] == dt.date(1970, 1, 1)
    duration = codec({"type": "int64", "name": "io.debezium.time.MicroDuration"}, options)
    df = spark.createDataFrame([(2**63 - 1,), (-(2**63),), (5,)], "v long")
    value, error = duration.decode(F.col("v"))
    rows = df.select(value.alias("i"), error.alias("e")).collect()
    assert [r["e"] for r in rows] == [True, True, False]
    assert [r["i"] for r in rows] == ([2**63 - 1, -(2**63), 5] if mode == "clamp" else [None, None, 5])
