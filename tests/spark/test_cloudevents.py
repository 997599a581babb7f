"""CloudEvents JSON records (value.converter=io.debezium.converters.CloudEventsConverter, serializer.type and
data.serializer.type json) read by pgcdc.spark: one workload captured twice at once, by pgcdc with JsonConverter
and with CloudEventsConverter; the CloudEvents topics decode into the same typed rows as the JSON ones and fold
into tables identical to PostgreSQL."""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
import pytest
from pyspark.sql import DataFrame, SparkSession

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.spark import decode_changes, read_table, table_path
from pgcdc.spark.changes import POS
from tests.harness import Running, make_config, read_topic, wait_for
from tests.spark.conftest import CAUGHT_UP, SETUP, SNAPSHOT, STREAM, TABLES, Capture
from tests.spark.test_end_to_end import EXPECTED_TYPES, SHAPES_TYPES, apply, assert_exact, read_all, types_of

CE = "io.debezium.converters.CloudEventsConverter"


@pytest.fixture(scope="module")
def twin(pg: PostgresCluster, broker: KafkaBroker) -> tuple[Capture, Capture]:
    """(JsonConverter capture, CloudEvents capture) of one database: both snapshot it, then stream one workload."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in SETUP + SNAPSHOT:
        pg.execute(stmt, dbname)
    captures = []
    configs = []
    for name, props in (("json", {}), ("ce", {"value.converter": CE})):
        prefix = f"{name}{uuid.uuid4().hex[:6]}"
        configs.append(make_config(pg, dbname, broker.bootstrap_servers, **{
            "topic.prefix": prefix, "snapshot.mode": "initial", "skipped.operations": "none",
            "slot.name": f"{name}_{dbname}", "publication.name": f"{name}p_{dbname}",
            "table.include.list": ",".join(rf"public\.{t}" for t in (*TABLES, "sentinel")), **props}))
        captures.append(Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in TABLES}))
    with Running(configs[0]), Running(configs[1]):
        for stmt in (s for s in STREAM if s != CAUGHT_UP):  # no schema counts here
            pg.execute(stmt, dbname)
        for c in captures:
            sentinel = c.topics["every"].replace(".every", ".sentinel")
            wait_for(lambda s=sentinel: bool(read_topic(broker.bootstrap_servers, s, timeout=10)), 120,
                     "the workload's last event in Kafka")
    return captures[0], captures[1]


def _rows(df: DataFrame) -> DataFrame:
    # The position holds the snapshot's consistent point, which is each slot's own: everything else is compared.
    return df.drop(POS)


def test_cloudevents_records_decode_into_the_json_records_rows(spark: SparkSession,
                                                               twin: tuple[Capture, Capture]) -> None:
    plain, ce = twin
    raw = read_all(spark, ce)
    # The records are CloudEvents (the envelope's before/after inside `data`), not Debezium's JSON envelope.
    sample = raw.filter(raw.topic == ce.topics["every"]).filter(raw.value.isNotNull()).first()
    assert sample is not None
    event = orjson.loads(sample.value)
    assert event["specversion"] == "1.0" and set(event["data"]["payload"]) == {"before", "after"}
    ours, theirs = decode_changes(raw), decode_changes(read_all(spark, plain))
    assert ours.quarantine is not None and ours.quarantine.count() == 0
    assert len(ours.tables) == len(theirs.tables) == len(TABLES)
    for table in TABLES:
        a, b = ours.tables[ce.topics[table]], theirs.tables[plain.topics[table]]
        assert (a.keys, a.schema) == (b.keys, b.schema), table
        assert (a.truncate_pos is None) == (b.truncate_pos is None), table
        left, right = _rows(a.rows), _rows(b.rows)
        assert left.count() == right.count() > 0, table
        assert left.exceptAll(right).count() == 0 and right.exceptAll(left).count() == 0, table


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_cloudevents_tables_equal_postgres(spark: SparkSession, twin: tuple[Capture, Capture], tmp_path: Path,
                                           fmt: str) -> None:
    _, ce = twin
    assert apply(spark, read_all(spark, ce), tmp_path, fmt) == {}
    assert_exact(ce, tmp_path, fmt)
    assert types_of(read_table(spark, table_path(tmp_path, ce.topics["every"]), fmt)) == EXPECTED_TYPES
    assert types_of(read_table(spark, table_path(tmp_path, ce.topics["shapes"]), fmt)) == SHAPES_TYPES


@pytest.mark.parametrize("option", ["json.schemas.enable", "extension.attributes.enable"])
def test_cloudevents_it_cannot_read_are_quarantined_as_written(spark: SparkSession, pg: PostgresCluster,
                                                               broker: KafkaBroker, option: str) -> None:
    """Without the data's schema, or without the operation and LSN (extension attributes off), the event is
    quarantined as it is in Kafka."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    pg.execute("CREATE TABLE u (id int PRIMARY KEY, v text)", dbname)
    prefix = f"ce{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}.public.u"
    with Running(make_config(pg, dbname, broker.bootstrap_servers, **{
            "topic.prefix": prefix, "value.converter": CE, f"value.converter.{option}": "false"})):
        pg.execute("INSERT INTO u VALUES (1, 'a'), (2, 'b')", dbname)
        pg.execute("UPDATE u SET v = 'c' WHERE id = 1", dbname)
        wait_for(lambda: len(read_topic(broker.bootstrap_servers, topic, timeout=10)) >= 3, 120, "3 records")
    raw = read_all(spark, Capture(pg, dbname, broker.bootstrap_servers, {"u": topic}))
    written = sorted(bytes(r.value) for r in raw.collect())
    assert len(written) == 3 and all(orjson.loads(v)["specversion"] == "1.0" for v in written)
    decoded = decode_changes(raw)
    assert decoded.tables == {} and decoded.quarantine is not None
    quarantined = decoded.quarantine.collect()
    assert sorted(bytes(r.value) for r in quarantined) == written
    assert {r.reason for r in quarantined} == {"malformed envelope: value is not JSON with schema and payload "
                                              "(value.converter.schemas.enable must be true)"}
