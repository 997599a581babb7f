"""The spark tier: one local[2] SparkSession for the whole run, and one pgcdc capture shared by the tests.

The capture runs a real workload on PostgreSQL (snapshot, then streaming: many types, PK changes, deletes,
a truncate, columns added, dropped and retyped) through pgcdc into the Tansu broker; the tests read those
topics with the `pgcdc_kafka` DataSource and compare what they build with PostgreSQL itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from pyspark.sql import SparkSession

from pgcdc.local import PostgresCluster, TansuBroker
from pgcdc.spark import local_session
from tests.harness import Running, make_config, read_topic, wait_for

SETUP = [
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
    "ALTER TABLE evolve DROP COLUMN old",
    "UPDATE evolve SET qty = qty + 1 WHERE id = 4",
    "ALTER TABLE evolve ALTER COLUMN qty TYPE bigint",
    "UPDATE evolve SET qty = 5000000000 WHERE id = 5",
    "DELETE FROM evolve WHERE id = 6",
    "UPDATE composite SET v = v + 1 WHERE a <= 3",
    "UPDATE composite SET b = 'moved' WHERE a = 4",
    "DELETE FROM composite WHERE a = 5",
    "INSERT INTO sentinel VALUES (1)",
]

TABLES = ("every", "moves", "trunc", "evolve", "composite")


@dataclass
class Capture:
    pg: PostgresCluster
    dbname: str
    bootstrap: str
    topics: dict[str, str]  # table -> topic

    @property
    def dsn(self) -> str:
        return self.pg.dsn(self.dbname)

    def reader_options(self, **extra: str) -> dict[str, str]:
        return {"kafka.bootstrap.servers": self.bootstrap, "subscribe": ",".join(self.topics.values()), **extra}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = local_session()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def capture(pg: PostgresCluster, broker: TansuBroker) -> Capture:
    dbname = f"s_{uuid.uuid4().hex[:10]}"
    pg.create_database(dbname)
    for stmt in SETUP + SNAPSHOT:
        pg.execute(stmt, dbname)
    prefix = f"sp{uuid.uuid4().hex[:6]}"
    config = make_config(pg, dbname, broker.bootstrap_servers, **{
        "topic.prefix": prefix, "snapshot.mode": "initial", "skipped.operations": "none"})
    with Running(config):
        for stmt in STREAM:
            pg.execute(stmt, dbname)
        wait_for(lambda: bool(read_topic(broker.bootstrap_servers, f"{prefix}.public.sentinel", timeout=10)),
                 120, "the workload's last event in Kafka")
    return Capture(pg, dbname, broker.bootstrap_servers, {t: f"{prefix}.public.{t}" for t in TABLES})
