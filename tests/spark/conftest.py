"""The spark tier: one local[2] SparkSession for the whole run, and two pgcdc captures shared by the tests.

`capture` runs a real workload on PostgreSQL (snapshot, then streaming: many types, PostGIS and hstore, PK
changes, deletes, a truncate, columns added, dropped and retyped) through pgcdc with the default handling
modes into the Apache Kafka broker; `modes_capture` runs a small one with the other modes
(binary.handling.mode=hex, hstore.handling.mode=map, interval.handling.mode=string, time.precision.mode=isostring).
The tests read those topics with the `pgcdc_kafka` DataSource and Spark's own `kafka` source and compare what
they build with PostgreSQL itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pytest
from pyspark.sql import SparkSession

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.config import ConnectorConfig
from pgcdc.errors import ConfigError
from pgcdc.local.registry import ApicurioRegistry
from pgcdc.spark import avro_package, local_session
from pgcdc.spark.session import kafka_package
from tests.harness import Running, make_config, wait_for
from tests.integration.test_avro_kafka import read_raw

# In a `stream`: wait until pgcdc has written every change made so far. Put before a DDL statement, it keeps
# the catalog as the change's Relation describes it while pgcdc reads optionality and defaults there, as
# Debezium does: a Relation read after the next DDL (PostgreSQL may send a table's Relation again) would give
# that table one schema more, a race the schema counts below must not depend on.
CAUGHT_UP = "-- wait until pgcdc has caught up"

SETUP = [
    "CREATE EXTENSION postgis",
    "CREATE EXTENSION hstore",
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    """CREATE TABLE every (
        id int PRIMARY KEY, c_smallint smallint, c_int int, c_big bigint, c_num numeric(12,3), c_numv numeric,
        c_real real, c_double float8, c_bool bool, c_text text, c_varchar varchar(10), c_bytea bytea,
        c_date date, c_time time, c_time3 time(3), c_ts timestamp, c_ts3 timestamp(3), c_tstz timestamptz,
        c_uuid uuid, c_json json, c_jsonb jsonb, c_enum mood, c_interval interval, c_int_arr int[],
        c_text_arr text[], c_num_arr numeric(8,2)[])""",
    "CREATE TABLE moves (id int PRIMARY KEY, v text)",
    "CREATE TABLE trunc (id int PRIMARY KEY, v text)",
    "CREATE TABLE evolve (id int PRIMARY KEY, qty int, old text)",
    "CREATE TABLE composite (a int, b text, v numeric(6,2), PRIMARY KEY (a, b))",
    "CREATE TABLE shapes (id int PRIMARY KEY, geom geometry, pt geometry(Point, 4326), geog geography, tags hstore)",
    "CREATE TABLE sentinel (id int PRIMARY KEY)",
]


def every_row(i: int) -> str:
    return (f"({i}, {i % 30000 - 15000}, {i * 7919 - 2**30}, {i * 2**40 - 2**62}, {i * 1234.567 - 99999.5:.3f}, "
            f"{(-1) ** i * i * 3.14159265358979}e{i % 9}, {i / 7}, {i / 3e10}, "
            f"{'true' if i % 2 else 'false'}, 'text {i} ✓', "
            f"'v{i}', '\\x{i:04x}00ff', DATE '2000-01-01' + {i * 37}, TIME '00:00:01.123456' + interval '{i} min', "
            f"TIME '12:00:00.123' + interval '{i} s', TIMESTAMP '1999-12-31 23:59:59.999999' + interval '{i} h', "
            f"TIMESTAMP '2020-02-29 00:00:00.123' + interval '{i} d', "
            f"TIMESTAMPTZ '2021-06-01 12:00:00.654321+02' + interval '{i} min', "
            f"'{uuid.UUID(int=i * 2**64 + i)}', '{{\"a\": {i}, \"b\": [1, 2]}}', '{{\"k\": \"v{i}\", \"n\": {i}}}', "
            f"'{('sad', 'ok', 'happy')[i % 3]}', interval '{i} days {i} seconds', ARRAY[{i}, NULL, -{i}], "
            f"ARRAY['a{i}', NULL, 'ü'], ARRAY[{i}.25, -{i}.5]::numeric(8,2)[])")


SNAPSHOT = [
    "INSERT INTO every VALUES " + ", ".join(every_row(i) for i in range(1, 41)),
    "INSERT INTO every (id) VALUES (1000)",  # all NULL
    "INSERT INTO moves SELECT g, 'm' || g FROM generate_series(1, 20) g",
    "INSERT INTO trunc SELECT g, 't' || g FROM generate_series(1, 10) g",
    "INSERT INTO evolve SELECT g, g, 'o' || g FROM generate_series(1, 10) g",
    "INSERT INTO composite SELECT g, 'k' || g, g * 1.5 FROM generate_series(1, 10) g",
    "INSERT INTO shapes SELECT g, ST_MakePoint(g, -g / 3.0), ST_SetSRID(ST_MakePoint(g * 0.5, g), 4326), "
    "ST_GeogFromText('LINESTRING(0 0, ' || g || ' 1)'), hstore(ARRAY['k', 'n' || g], ARRAY['v' || g, NULL]) "
    "FROM generate_series(1, 10) g",
    "INSERT INTO shapes (id) VALUES (1000)",  # all NULL
]

STREAM = [
    "INSERT INTO every VALUES " + ", ".join(every_row(i) for i in range(41, 81)),
    "UPDATE every SET c_text = 'updated ' || id, c_num = c_num * 2, c_tstz = now() WHERE id % 3 = 0",
    "DELETE FROM every WHERE id % 10 = 5",
    "UPDATE every SET c_json = NULL, c_int_arr = '{}' WHERE id = 2",
    # PK changes (delete + tombstone + create), a key moved twice, a key reused after a delete
    "UPDATE moves SET id = id + 100 WHERE id <= 5",
    "UPDATE moves SET id = 1000 WHERE id = 101",
    "DELETE FROM moves WHERE id BETWEEN 6 AND 8",
    "INSERT INTO moves VALUES (6, 'back')",
    "UPDATE moves SET v = 'again' WHERE id = 6",
    "BEGIN; UPDATE moves SET v = 'tx1' WHERE id = 9; UPDATE moves SET v = 'tx2' WHERE id = 9; "
    "DELETE FROM moves WHERE id = 10; INSERT INTO moves VALUES (10, 'reborn'); COMMIT",
    # truncate, then new rows
    "UPDATE trunc SET v = 'before truncate' WHERE id = 1",
    "TRUNCATE trunc",
    "INSERT INTO trunc VALUES (1, 'after'), (50, 'new')",
    # schema changes mid-stream: added, dropped, retyped columns
    "ALTER TABLE evolve ADD COLUMN note text",
    "INSERT INTO evolve VALUES (11, 11, 'o11', 'noted')",
    "UPDATE evolve SET note = 'n' || id WHERE id <= 3",
    CAUGHT_UP,
    "ALTER TABLE evolve DROP COLUMN old",
    "UPDATE evolve SET qty = qty + 1 WHERE id = 4",
    CAUGHT_UP,
    "ALTER TABLE evolve ALTER COLUMN qty TYPE bigint",
    "UPDATE evolve SET qty = 5000000000 WHERE id = 5",
    "DELETE FROM evolve WHERE id = 6",
    "UPDATE composite SET v = v + 1 WHERE a <= 3",
    "UPDATE composite SET b = 'moved' WHERE a = 4",
    "DELETE FROM composite WHERE a = 5",
    "INSERT INTO shapes VALUES (11, ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 1))', "
    "3857), ST_SetSRID(ST_MakePoint(-180, 90), 4326), ST_GeogFromText('SRID=4326;POINT(13.4 52.5)'), ''), "
    # hstore text: a key with a space, a value with a quote and a backslash, a NULL value
    """(12, ST_GeomFromEWKT('POINT Z (1 2 3)'), NULL, NULL, 'a=>1, "b c"=>"x\\"y\\\\z", "ü"=>NULL')""",
    "UPDATE shapes SET geom = ST_Buffer(geom, 1, 2), tags = tags || hstore('new', 'v') WHERE id <= 3",
    "UPDATE shapes SET pt = NULL, tags = NULL WHERE id = 4",
    "DELETE FROM shapes WHERE id = 5",
    "INSERT INTO sentinel VALUES (1)",
]

TABLES = ("every", "moves", "trunc", "evolve", "composite", "shapes")

# The other handling modes, on a database and capture of their own.
MODES_PROPS = {
    "binary.handling.mode": "hex", "datatype.propagate.source.type": r".+\.BYTEA",
    "hstore.handling.mode": "map", "interval.handling.mode": "string", "time.precision.mode": "isostring",
}
MODES_SETUP = [
    "CREATE EXTENSION hstore",
    """CREATE TABLE modes (id int PRIMARY KEY, c_bytea bytea, c_time time, c_time3 time(3), c_date date,
        c_ts timestamp, c_ts3 timestamp(3), c_interval interval, c_tags hstore)""",
    "CREATE TABLE sentinel (id int PRIMARY KEY)",
]


def modes_row(i: int) -> str:
    return (f"({i}, '\\x{i:02x}00ff', TIME '00:00:01.123456' + interval '{i} min', "
            f"TIME '12:00:00.123' + interval '{i} s', DATE '1999-12-31' + {i * 41}, "
            f"TIMESTAMP '1999-12-31 23:59:59.999999' + interval '{i} h', "
            f"TIMESTAMP '2020-02-29 00:00:00.5' + interval '{i} d', "
            f"interval '{i} years {i} mons {i} days {i}:0{i % 10}:0{i % 7}.25', "
            f"hstore(ARRAY['k', 'n{i}'], ARRAY['v{i}', NULL]))")


MODES_SNAPSHOT = [
    "INSERT INTO modes VALUES " + ", ".join(modes_row(i) for i in range(1, 11)),
    "INSERT INTO modes (id) VALUES (1000)",  # all NULL
]
MODES_STREAM = [
    "INSERT INTO modes VALUES " + ", ".join(modes_row(i) for i in range(11, 21)),
    "INSERT INTO modes VALUES (21, '', '23:59:59.999999', '00:00:00', '0001-01-01', '0001-01-01 00:00:00', "
    "'9999-12-31 23:59:59.999', interval '-1 days -00:00:01.5', '')",
    "INSERT INTO modes (id, c_bytea, c_interval) VALUES (22, decode(repeat('00ff7f80', 64), 'hex'), interval '0'), "
    "(23, NULL, interval '-2 mons -3 days -04:05:06.000001'), "
    "(24, NULL, interval '1 year -1 mons -1 days +01:01:01.25')",  # mixed signs: '+' on the time part
    "UPDATE modes SET c_interval = c_interval * 2, c_tags = c_tags || hstore('q\"uote', 'ü') WHERE id % 3 = 0",
    "DELETE FROM modes WHERE id = 5",
    "INSERT INTO sentinel VALUES (1)",
]


@dataclass
class Capture:
    pg: PostgresCluster
    dbname: str
    bootstrap: str
    topics: dict[str, str]  # table -> topic
    registry: str = ""  # the schema registry's URL, when the records are Avro

    @property
    def dsn(self) -> str:
        return self.pg.dsn(self.dbname)

    def reader_options(self, **extra: str) -> dict[str, str]:
        return {"kafka.bootstrap.servers": self.bootstrap, "subscribe": ",".join(self.topics.values()), **extra}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Spark's own kafka source beside pgcdc_kafka, and spark-avro's from_avro: their jars come from Maven Central
    # on first use (Ivy cache).
    try:
        session = local_session(packages=[kafka_package(), avro_package()])
    except ConfigError as e:
        pytest.fail(str(e), pytrace=False)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def capture_config(pg: PostgresCluster, dbname: str, broker: KafkaBroker, prefix: str, slot: str,
                   tables: Iterable[str], props: dict[str, str]) -> ConnectorConfig:
    """A pgcdc config capturing `tables` (and `sentinel`) of `dbname` under `prefix`, with a slot and publication of
    its own named after `slot`: for several captures of one database running at once."""
    return make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": prefix, "snapshot.mode": "initial", "skipped.operations": "none",
        "slot.name": f"{slot}_{dbname}", "publication.name": f"{slot}p_{dbname}",
        "table.include.list": ",".join(rf"public\.{t}" for t in (*tables, "sentinel")), **props})


def run_capture(pg: PostgresCluster, broker: KafkaBroker, setup: list[str], snapshot: list[str],
                stream: list[str], tables: tuple[str, ...], **props: str) -> Capture:
    """A fresh database: `setup` and `snapshot` run before pgcdc starts (initial snapshot), `stream` while it
    runs; returns when the last statement's event (an insert into `sentinel`) is in Kafka. Each `CAUGHT_UP`
    in `stream` inserts a negative id into `sentinel` and waits for its event."""
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in setup + snapshot:
        pg.execute(stmt, dbname)
    prefix = f"sp{uuid.uuid4().hex[:6]}"
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": prefix, "snapshot.mode": "initial", "skipped.operations": "none",
        # not PostGIS's spatial_ref_sys (thousands of rows)
        "table.include.list": ",".join(rf"public\.{t}" for t in (*tables, "sentinel")), **props})
    sentinel = f"{prefix}.public.sentinel"
    with Running(config):
        waits = 0
        for stmt in stream:
            if stmt != CAUGHT_UP:
                pg.execute(stmt, dbname)
                continue
            waits += 1
            pg.execute(f"INSERT INTO sentinel VALUES (-{waits})", dbname)
            wait_for(lambda n=waits: len(read_raw(broker.bootstrap_servers, sentinel, timeout=10, to_end=False)) >= n,
                     120, f"pgcdc to catch up (sentinel -{waits} in Kafka)")
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, sentinel, timeout=10, to_end=False)) > waits,
                 120, "the workload's last event in Kafka")
    return Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in tables})


@pytest.fixture(scope="session")
def capture(pg: PostgresCluster, broker: KafkaBroker) -> Capture:
    if not pg.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'"):
        pytest.fail("the PostGIS extension is not installed on this PostgreSQL server (`./dev test-spark` installs "
                    "Debian's postgresql-15-postgis-3; other majors have none)")
    return run_capture(pg, broker, SETUP, SNAPSHOT, STREAM, TABLES)


@pytest.fixture(scope="session")
def zoo_capture(pg: PostgresCluster, broker: KafkaBroker) -> Capture:
    from tests.spark import zoo

    return run_capture(pg, broker, zoo.SETUP, zoo.SNAPSHOT, zoo.STREAM, zoo.TABLES)


@pytest.fixture(scope="session")
def modes_capture(pg: PostgresCluster, broker: KafkaBroker) -> Capture:
    return run_capture(pg, broker, MODES_SETUP, MODES_SNAPSHOT, MODES_STREAM, ("modes",), **MODES_PROPS)


# The Avro capture: `capture`'s workload plus a table of TOASTed values, written by pgcdc with Confluent's
# AvroConverter for keys and values into a real schema registry (Apicurio Registry, Confluent's API).
AVRO = "io.confluent.connect.avro.AvroConverter"
BIG = "(SELECT string_agg(md5(g::text || {seed}), '') FROM generate_series(1, 3000) g)"  # ~96 KB, TOASTed
# Arrays stored out of line too: an update leaving them alone carries their placeholders (int[] and date[] the
# placeholder's bytes, uuid[] their name-based UUID), which both Avro decoders give back for toast.py to find.
# Dates and times beside them: Protobuf keeps no type names, so those land as Debezium's numbers (verify reads
# them by the column's type and precision).
ARRAYS = ("array_fill({seed}, ARRAY[1000]), array_fill(md5('{seed}')::uuid, ARRAY[400]), "
          "array_fill(date '2000-01-01' + {seed}, ARRAY[1000]), date '1969-12-31' + {seed} * 1000, "
          "timestamp '2024-02-29 12:34:56.789' + {seed} * interval '1 day', "
          "timestamp '1960-01-01 00:00:00.123456' + {seed} * interval '1 s', time '23:59:59.999', "
          "time '00:00:00.000001' + {seed} * interval '1 h'")


def toasty(seed: int) -> str:
    return f"({seed}, {BIG.format(seed=seed)}, {seed}, {ARRAYS.format(seed=seed)})"


# The TOASTed table's workload (the Protobuf and JSON Schema captures take it too).
TOASTY_SETUP = ["CREATE TABLE toasty (id int PRIMARY KEY, big text, n int, ia int[], ua uuid[], da date[], d date, "
                "ts3 timestamp(3), ts timestamp, t3 time(3), t time)",
                "ALTER TABLE toasty ALTER ia SET STORAGE EXTERNAL, ALTER ua SET STORAGE EXTERNAL, "
                "ALTER da SET STORAGE EXTERNAL"]
TOASTY_SNAPSHOT = [f"INSERT INTO toasty VALUES {toasty(1)}, {toasty(2)}"]
TOASTY_STREAM = [
    f"INSERT INTO toasty VALUES {toasty(3)}",
    f"UPDATE toasty SET big = {BIG.format(seed=4)} WHERE id = 1",
    "DELETE FROM toasty WHERE id = 2",
    "UPDATE toasty SET n = n + 10",  # every TOASTed value unchanged: placeholders
]
AVRO_SETUP = [*SETUP, *TOASTY_SETUP]
AVRO_SNAPSHOT = [*SNAPSHOT, *TOASTY_SNAPSHOT]
AVRO_STREAM = [*TOASTY_STREAM, *STREAM]
AVRO_TABLES = (*TABLES, "toasty")


@pytest.fixture(scope="session")
def avro_capture(pg: PostgresCluster, broker: KafkaBroker, registry: ApicurioRegistry) -> Capture:
    capture = run_capture(pg, broker, AVRO_SETUP, AVRO_SNAPSHOT, AVRO_STREAM, AVRO_TABLES, **{
        "key.converter": AVRO, "value.converter": AVRO, "converter.schema.registry.url": registry.url})
    capture.registry = registry.url
    return capture
