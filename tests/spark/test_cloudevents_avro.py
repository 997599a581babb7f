"""CloudEvents with Avro data (value.converter=io.debezium.converters.CloudEventsConverter, data.serializer.type
avro; the event in Avro or JSON) read by pgcdc.spark's CloudEventsAvroFormat: one workload with extreme values
captured three times at once into a real Apicurio registry, by JsonConverter and by CloudEventsConverter
avro/avro and json/avro; the CloudEvents topics decode into the same typed rows as the JSON ones and fold into
tables identical to PostgreSQL."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import orjson
import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from pgcdc.local import ApicurioRegistry, KafkaBroker, PostgresCluster
from pgcdc.spark import CloudEventsAvroFormat, apply_changes, decode_changes, read_table, table_path
from pgcdc.spark.changes import POS
from pgcdc.spark.verify import verify
from tests.harness import Running, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.spark.conftest import AVRO, CAUGHT_UP, SETUP, SNAPSHOT, STREAM, TABLES, Capture, capture_config
from tests.spark.test_end_to_end import EXPECTED_TYPES, SHAPES_TYPES, read_all, types_of

CE = "io.debezium.converters.CloudEventsConverter"
# Values at the edges: NaN, the infinities and -0.0 (float8, real and in arrays), numerics at their
# precision's limits (and NaN, which no event can carry: null), the integers' ends, empty strings, bytes and
# arrays, arrays of nulls, nulls.
EDGES_SETUP = ["""CREATE TABLE edges (id int PRIMARY KEY, f8 float8, f4 real, n numeric(38,18), nv numeric,
    n5 numeric(5,0), big bigint, i int, s smallint, t text, b bytea, ia int[], ta text[], fa float8[])"""]
EDGE_ROWS = [
    "'NaN', 'NaN', 99999999999999999999.999999999999999999, 'NaN', 99999, 9223372036854775807, 2147483647, "
    "32767, '', '', '{}', '{}', '{NaN,Infinity,-Infinity,-0}'",
    "'Infinity', 'Infinity', -99999999999999999999.999999999999999999, 0.000000000000000001, -99999, "
    "-9223372036854775808, -2147483648, -32768, ' ', '\\x00', '{NULL}', '{\"\",NULL}', '{NULL}'",
    "'-Infinity', '-Infinity', -0.000000000000000001, -0, 0, 0, 0, 0, 'ü ✓ \"q\" \\\\', '\\x00ff7f80', "
    "'{-1,0,1}', '{\"a b\",ü}', '{1e308,5e-324,-1.7976931348623157e308}'",
    "'-0', '-0', 0, 12345678901234567890.123456789012345678, 1, 1, 1, 1, 't', 'x', '{}', '{}', '{}'",
    "1e308, 3.4028235e38, 0.000000000000000001, -1e-18, -1, -1, -1, -1, NULL, NULL, NULL, NULL, NULL",
    "5e-324, 1e-45, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
]
EDGES_SNAPSHOT = ["INSERT INTO edges VALUES " + ", ".join(f"({i}, {r})" for i, r in enumerate(EDGE_ROWS, 1)),
                  "INSERT INTO edges (id) VALUES (1000)"]
EDGES_STREAM = [
    "INSERT INTO edges VALUES " + ", ".join(f"({100 + i}, {r})" for i, r in enumerate(EDGE_ROWS, 1)),
    "UPDATE edges SET f8 = '-0', fa = '{}', t = '' WHERE id IN (2, 102)",
    "UPDATE edges SET f8 = 'NaN', nv = 'NaN', ta = '{NULL,\"\"}' WHERE id = 1000",
    "DELETE FROM edges WHERE id IN (3, 104)",
]
ALL_TABLES = (*TABLES, "edges")
KINDS = {  # CloudEventsConverter's serializer.type/data.serializer.type -> its settings
    "avro/avro": {"value.converter.serializer.type": "avro", "value.converter.data.serializer.type": "avro"},
    "json/avro": {"value.converter.data.serializer.type": "avro"},
}


@pytest.fixture(scope="module")
def captures(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> dict[str, Capture]:
    """"json" (JsonConverter) and one capture per CloudEvents kind of one database: each snapshots it, then
    streams one workload. Keys are AvroConverter's in the CloudEvents captures."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in SETUP + EDGES_SETUP + SNAPSHOT + EDGES_SNAPSHOT:
        pg.execute(stmt, dbname)
    kinds: dict[str, dict[str, str]] = {"json": {}}
    for kind, props in KINDS.items():
        kinds[kind] = {"key.converter": AVRO, "key.converter.schema.registry.url": registry.url,
                       "value.converter": CE, "value.converter.avro.schema.registry.url": registry.url, **props}
    out: dict[str, Capture] = {}
    configs = []
    for n, (kind, props) in enumerate(kinds.items()):
        prefix = f"ce{n}{uuid.uuid4().hex[:6]}"
        configs.append(capture_config(pg, dbname, broker, prefix, f"ce{n}", ALL_TABLES, props))
        out[kind] = Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in ALL_TABLES},
                            registry.url)
    with Running(configs[0]), Running(configs[1]), Running(configs[2]):
        for stmt in (s for s in STREAM + EDGES_STREAM if s != CAUGHT_UP):  # no schema counts here
            pg.execute(stmt, dbname)
        pg.execute("INSERT INTO sentinel VALUES (2)", dbname)
        for c in out.values():
            sentinel = c.topics["every"].replace(".every", ".sentinel")
            wait_for(lambda s=sentinel: len(read_raw(broker.bootstrap_servers, s, timeout=10, to_end=False)) >= 2, 120,
                     "the workload's last event in Kafka")
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_avro_cloudevents_decode_into_the_json_records_rows(spark: SparkSession, captures: dict[str, Capture],
                                                            kind: str) -> None:
    plain, ce = captures["json"], captures[kind]
    raw = read_all(spark, ce)
    # The records are CloudEvents whose data is Avro in Confluent's wire format, the event Avro or JSON.
    sample = bytes(raw.filter(raw.topic == ce.topics["edges"]).filter(raw.value.isNotNull()).first().value)
    if kind == "avro/avro":
        assert sample[:1] == b"\x00" and b"1.0" in sample and b"application/avro" in sample
    else:
        event = orjson.loads(sample)
        assert event["specversion"] == "1.0" and event["datacontenttype"] == "application/avro"
        assert base64.b64decode(event["data"])[:1] == b"\x00"
    ours = decode_changes(raw, fmt=CloudEventsAvroFormat(ce.registry))
    theirs = decode_changes(read_all(spark, plain))
    assert ours.quarantine is not None
    assert ours.quarantine.groupBy("reason").count().collect() == []
    assert len(ours.tables) == len(theirs.tables) == len(ALL_TABLES)
    for table in ALL_TABLES:
        a, b = ours.tables[ce.topics[table]], theirs.tables[plain.topics[table]]
        assert (a.keys, a.schema) == (b.keys, b.schema), table
        assert (a.truncate_pos is None) == (b.truncate_pos is None), table
        # The position holds the snapshot's consistent point, which is each slot's own.
        left, right = a.rows.drop(POS), b.rows.drop(POS)
        assert left.count() == right.count() > 0, table
        assert left.exceptAll(right).count() == 0 and right.exceptAll(left).count() == 0, table


@pytest.mark.parametrize(("kind", "decoder", "fmt"), [("avro/avro", "spark", "parquet"),
                                                      ("avro/avro", "arrow", "delta"),
                                                      ("json/avro", "spark", "parquet")])
def test_avro_cloudevents_tables_equal_postgres(spark: SparkSession, captures: dict[str, Capture], tmp_path: Path,
                                                kind: str, decoder: str, fmt: str) -> None:
    ce = captures[kind]
    decoded = decode_changes(read_all(spark, ce), fmt=CloudEventsAvroFormat(ce.registry, decoder=decoder))
    assert apply_changes(spark, decoded, tmp_path, fmt) == {}
    reports = [verify(ce.dsn, f"public.{t}", table_path(tmp_path, ce.topics[t]), fmt) for t in ALL_TABLES]
    assert all(r.ok for r in reports), "\n".join(r.text() for r in reports)
    assert types_of(read_table(spark, table_path(tmp_path, ce.topics["every"]), fmt)) == EXPECTED_TYPES
    assert types_of(read_table(spark, table_path(tmp_path, ce.topics["shapes"]), fmt)) == SHAPES_TYPES
    edges = read_table(spark, table_path(tmp_path, ce.topics["edges"]), fmt)
    assert edges.filter("id = 1").first()["f8"] != edges.filter("id = 1").first()["f8"]  # NaN
    assert str(edges.filter("id = 101").first()["fa"]) == "[nan, inf, -inf, -0.0]"


def test_avro_cloudevents_it_cannot_read_are_quarantined_as_written(spark: SparkSession,
                                                                    captures: dict[str, Capture],
                                                                    tmp_path: Path) -> None:
    """An Avro event cut short, a JSON event without its operation and one with JSON data: one reason each, the
    event as written in the quarantine; the table's own records are applied."""
    ce, js = captures["avro/avro"], captures["json/avro"]
    topic = ce.topics["moves"]
    raw = read_all(spark, ce, subscribe=topic)
    good = raw.filter("value IS NOT NULL").first()
    event = orjson.loads(bytes(read_all(spark, js, subscribe=js.topics["moves"]).filter("value IS NOT NULL")
                               .first().value))
    no_op = orjson.dumps({k: v for k, v in event.items() if k != "iodebeziumop"})
    json_data = orjson.dumps({**event, "datacontenttype": "application/json", "data": {"before": None}})
    bad_topic = f"{topic}.bad{uuid.uuid4().hex[:6]}"
    written = [bytes(good["value"])[:12], no_op, json_data]
    producer = Producer({"bootstrap.servers": ce.bootstrap})
    for value in written:
        producer.produce(bad_topic, key=bytes(good["key"]), value=value)
    assert producer.flush(30) == 0
    both = raw.unionByName(read_all(spark, ce, subscribe=bad_topic))
    decoded = decode_changes(both, fmt=CloudEventsAvroFormat(ce.registry))
    assert decoded.quarantine is not None
    quarantined = {bytes(r.value): r.reason for r in decoded.quarantine.collect()}
    event_id = int.from_bytes(bytes(good["value"])[1:5], "big")
    assert quarantined == {
        written[0]: f"cannot decode the CloudEvent (Avro, schema id {event_id})",
        written[1]: "CloudEvent without iodebeziumop (extension.attributes.enable must be true)",
        written[2]: "CloudEvent with JSON data: decode_changes reads it without fmt"}
    assert apply_changes(spark, decoded, tmp_path) == {r: 1 for r in quarantined.values()}
    report = verify(ce.dsn, "public.moves", table_path(tmp_path, topic), "parquet")
    assert report.ok, report.text()

