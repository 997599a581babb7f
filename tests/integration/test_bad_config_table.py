"""Bad configuration, as a table, through the real CLI (`python -m pgcdc.cli run --config file`): each case exits
non-zero with exactly one `pgcdc: error:` line naming the property or database object to fix, and leaves nothing
behind: no slot, no publication, no offset topic, no offset file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.local.postgres import free_port

DROP = None  # an override of None removes the property

# (case id, property overrides, SQL run first in the test's database, text the one error line must contain).
# In overrides and SQL, {db} is the test's database and {tmp} its temporary folder.
CASES: list[tuple[str, dict[str, str | None], str, str]] = [
    # -- the configuration alone ----------------------------------------------------------------------------
    ("unknown property", {"topic.prefixx": "a"}, "", "unknown property 'topic.prefixx' (did you mean 'topic.prefix'?)"),
    ("missing topic.prefix", {"topic.prefix": DROP}, "", "topic.prefix: required property is missing"),
    ("missing database.hostname", {"database.hostname": DROP}, "", "database.hostname: required property"),
    ("empty topic.prefix", {"topic.prefix": ""}, "", "topic.prefix: String should have at least 1 character"),
    ("bad enum decimal", {"decimal.handling.mode": "float"}, "", "decimal.handling.mode: Input should be"),
    ("bad enum snapshot.mode", {"snapshot.mode": "sometimes"}, "", "snapshot.mode: Input should be"),
    ("bad enum time", {"time.precision.mode": "nanos"}, "", "time.precision.mode: Input should be"),
    ("bad enum autocreate", {"publication.autocreate.mode": "some"}, "", "publication.autocreate.mode: Input"),
    ("bad enum sslmode", {"database.sslmode": "always"}, "", "database.sslmode: Input should be"),
    ("bad enum offset store", {"offset.storage": "redis"}, "", "offset.storage: unsupported offset store 'redis'"),
    ("bad boolean", {"tombstones.on.delete": "maybe"}, "", "tombstones.on.delete: Input should be a valid boolean"),
    ("port not a number", {"database.port": "five"}, "", "database.port: Input should be a valid integer"),
    ("port out of range", {"database.port": "70000"}, "", "database.port: Input should be less than 65536"),
    ("negative fetch size", {"snapshot.fetch.size": "-1"}, "",
     "snapshot.fetch.size: Input should be greater than or equal to 0"),
    ("negative flush interval", {"offset.flush.interval.ms": "-5"}, "", "offset.flush.interval.ms: Input should be"),
    ("notification sink without topic", {"notification.enabled.channels": "log,sink"}, "",
     "notification.sink.topic.name: Notification topic name must be provided"),
    ("zero status interval", {"status.update.interval.ms": "0"}, "", "status.update.interval.ms: Input should be"),
    ("negative heartbeat", {"heartbeat.interval.ms": "-1"}, "", "heartbeat.interval.ms: Input should be"),
    ("zero snapshot threads", {"snapshot.max.threads": "0"}, "", "snapshot.max.threads: Input should be"),
    ("negative money digits", {"money.fraction.digits": "-2"}, "", "money.fraction.digits: Input should be"),
    ("slot retries below -1", {"slot.max.retries": "-2"}, "", "slot.max.retries: Input should be"),
    ("negative metrics port", {"metrics.port": "-1"}, "", "metrics.port: Input should be"),
    ("bad slot name", {"slot.name": "Bad-Slot"}, "", "slot.name: String should match pattern"),
    ("bad regex table", {"table.include.list": "public.(t"}, "", "table.include.list: bad regular expression"),
    ("bad regex schema", {"schema.exclude.list": "[a"}, "", "schema.exclude.list: bad regular expression"),
    ("bad regex column", {"column.exclude.list": "a**"}, "", "column.exclude.list: bad regular expression"),
    ("bad regex message", {"message.prefix.include.list": "(?P<"}, "",
     "message.prefix.include.list: bad regular expression"),
    ("bad skipped op", {"skipped.operations": "c,x"}, "", "skipped.operations: unknown operation(s) x"),
    ("avro converter without registry", {"key.converter": "io.confluent.connect.avro.AvroConverter"}, "",
     "key.converter.schema.registry.url: required by io.confluent.connect.avro.AvroConverter"),
    ("unknown converter class", {"value.converter": "com.example.Converter"}, "",
     "value.converter: unknown converter class 'com.example.Converter'"),
    ("converter not supported yet", {"value.converter": "io.apicurio.registry.utils.converter.ProtobufConverter"}, "",
     "value.converter: io.apicurio.registry.utils.converter.ProtobufConverter is not supported yet"),
    ("unknown converter option", {"converter.schemas.enabled": "false"}, "",
     "converter.schemas.enabled: unknown option 'schemas.enabled' of the configured converters"),
    ("bad connector class", {"connector.class": "io.debezium.connector.mysql.MySqlConnector"}, "",
     "connector.class: must be io.debezium.connector.postgresql.PostgresConnector"),
    ("kafka sink without brokers", {"bootstrap.servers": DROP}, "", "bootstrap.servers (or kafka.bootstrap.servers)"),
    # Accepted without effect, but checked as Debezium 3.6 checks them (pgcdc/config_values.py).
    ("negative max.batch.size", {"max.batch.size": "-5"}, "", "max.batch.size: must be a positive integer (got '-5')"),
    ("queue not above batch", {"max.queue.size": "100"}, "", "max.queue.size: must be larger than max.batch.size"),
    ("zero poll interval", {"poll.interval.ms": "0"}, "", "poll.interval.ms: must be a positive integer"),
    ("negative snapshot delay", {"snapshot.delay.ms": "-1"}, "", "snapshot.delay.ms: must be a non-negative"),
    ("bad enum locking mode", {"snapshot.locking.mode": "exclusive"}, "", "snapshot.locking.mode: must be one of"),
    ("bad enum failure handling", {"event.processing.failure.handling.mode": "retry"}, "",
     "event.processing.failure.handling.mode: must be one of fail, warn, skip, ignore"),
    ("bad enum errors.tolerance", {"errors.tolerance": "some"}, "", "errors.tolerance: must be one of none, all"),
    ("bad boolean keepalive", {"database.tcpKeepAlive": "on"}, "", "database.tcpKeepAlive: must be true or false"),
    ("bad replica identity autoset", {"replica.identity.autoset.values": "public.t:ALL"}, "",
     "replica.identity.autoset.values: entry 'public.t:ALL'"),
    ("message.key.columns without columns", {"message.key.columns": "public.t"}, "",
     "message.key.columns: entry 'public.t' must be <table regex>:<column>"),
    ("table include and exclude", {"table.include.list": "public.a", "table.exclude.list": "public.b"}, "",
     "table.include.list and table.exclude.list cannot both be set"),
    ("zero restart wait", {"retriable.restart.connector.wait.ms": "0"}, "",
     "retriable.restart.connector.wait.ms: Input should be greater than 0"),
    ("filtered without lists", {"publication.autocreate.mode": "filtered"}, "",
     "publication.autocreate.mode=filtered needs table.include.list"),
    ("override without statement", {"snapshot.select.statement.overrides": "public.t"}, "",
     "snapshot.select.statement.overrides.public.t is not set"),
    ("column include and exclude", {"column.include.list": "a", "column.exclude.list": "b"}, "",
     "column.include.list and column.exclude.list cannot both be set"),
    ("transforms", {"transforms": "a", "transforms.a.type": "io.debezium.transforms.TimezoneConverter",
                    "transforms.a.converted.timezone": "Mars/Olympus"}, "",
     "transforms.a.converted.timezone: 'Mars/Olympus' is neither a time zone"),
    ("outbox option", {"transforms": "a", "transforms.a.type": "io.debezium.transforms.outbox.EventRouter",
                       "transforms.a.table.op.invalid.behavior": "skip"}, "",
     "transforms.a.table.op.invalid.behavior: expected one of warn, error, fatal (got 'skip')"),
    ("database.server.name", {"database.server.name": "x"}, "", "database.server.name was replaced by topic.prefix"),
    ("password file missing", {"database.password": DROP, "database.password.file": "{tmp}/nope"}, "",
     "database.password.file: cannot read"),
    ("password and password file", {"database.password.file": "{tmp}/connector.json"}, "",
     "database.password.file: set either database.password or database.password.file"),
    # -- PostgreSQL says no ---------------------------------------------------------------------------------
    ("wrong password", {"database.password": "wrong"}, "",
     "database.password: authentication failed for user 'postgres'"),
    ("unknown role", {"database.user": "ghost"}, "", "database.password: authentication failed for user 'ghost'"),
    ("nothing listening", {"database.port": "{free_port}"}, "", "database.hostname/database.port: cannot reach"),
    ("unknown host", {"database.hostname": "no-such-host.invalid"}, "",
     "database.hostname: unknown host 'no-such-host.invalid'"),
    ("unknown database", {"database.dbname": "nope"}, "", "database.dbname: database 'nope' does not exist"),
    ("no REPLICATION role", {"database.user": "plain_{db}", "database.password": "Pw-4-plain"},
     "CREATE ROLE plain_{db} LOGIN PASSWORD 'Pw-4-plain'", "database.user: role 'plain_{db}' lacks the REPLICATION"),
    ("sslmode=require without server TLS", {"database.sslmode": "require"}, "", "database.sslmode: "),
    ("missing publication, autocreate disabled", {"publication.autocreate.mode": "disabled"},
     "CREATE TABLE t (id int PRIMARY KEY)", "publication.name: publication 'pub_{db}' does not exist"),
    ("filtered matches no table", {"publication.autocreate.mode": "filtered", "table.include.list": "public.nope"},
     "CREATE TABLE t (id int PRIMARY KEY)", "table.include.list/schema.include.list: no existing table matches"),
    ("no primary key and REPLICA IDENTITY NOTHING", {},
     "CREATE TABLE np (v text); ALTER TABLE np REPLICA IDENTITY NOTHING", "table public.np: REPLICA IDENTITY NOTHING"),
    ("slot of another plugin", {}, "SELECT pg_create_logical_replication_slot('slot_{db}', 'test_decoding')",
     "slot.name: slot 'slot_{db}' uses plugin 'test_decoding'"),
    ("broker unreachable", {"bootstrap.servers": "127.0.0.1:{free_port}",
                            "kafka.socket.connection.setup.timeout.ms": "2000"}, "",
     "bootstrap.servers: cannot reach Kafka"),
]


def run_cli(tmp_path: Path, config: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "bad", "config": config}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", "run", "--config", str(path)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("pgcdc: error:")]


def topics(broker: KafkaBroker) -> set[str]:
    return set(AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(timeout=20).topics)


def state(pg: PostgresCluster, db: str) -> tuple[list, list]:
    """Slots of this database or named for it, and publications in it."""
    slots = pg.execute(f"SELECT slot_name, plugin FROM pg_replication_slots WHERE database = '{db}' "
                       f"OR slot_name = 'slot_{db}' ORDER BY 1")
    pubs = pg.execute("SELECT pubname FROM pg_publication ORDER BY 1", db)
    return slots, pubs


def base(pg: PostgresCluster, db: str, broker: KafkaBroker) -> dict[str, str]:
    return {**pg.connection_properties(db), "name": f"bad_{db}", "topic.prefix": "bad", "snapshot.mode": "no_data",
            "slot.name": f"slot_{db}", "publication.name": f"pub_{db}",
            "bootstrap.servers": broker.bootstrap_servers, "offset.storage.topic": f"offsets_{db}",
            "offset.storage.partitions": "1"}


def check(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert proc.returncode != 0, proc.stderr
    lines = error_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert expected in lines[0], lines[0]


@pytest.fixture(scope="module")
def replica_pg() -> Iterator[PostgresCluster]:
    """A second small cluster with wal_level=replica, shared by this module."""
    with PostgresCluster(settings={"wal_level": "replica", "max_wal_senders": "2", "shared_buffers": "16MB"}) as c:
        yield c


@pytest.mark.parametrize(("overrides", "setup", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_config(pg: PostgresCluster, dbname: str, broker: KafkaBroker, tmp_path: Path,
                    overrides: dict[str, str | None], setup: str, expected: str) -> None:
    fill = {"db": dbname, "tmp": str(tmp_path), "free_port": str(free_port())}
    if setup:
        pg.execute(setup.format(**fill), dbname)
    before = state(pg, dbname)
    config = base(pg, dbname, broker)
    if overrides.get("offset.storage") == "file" or "offset.storage.file.filename" in overrides:
        config["offset.storage.file.filename"] = str(tmp_path / "offsets.dat")
    for key, value in overrides.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value.format(**fill)
    try:
        check(run_cli(tmp_path, config), expected.format(**fill))
        assert state(pg, dbname) == before  # no slot, no publication created
        assert f"offsets_{dbname}" not in topics(broker)
        assert not (tmp_path / "offsets.dat").exists()
    finally:
        pg.execute(f"DROP ROLE IF EXISTS plain_{dbname}")
        pg.execute(f"SELECT pg_drop_replication_slot('slot_{dbname}') FROM pg_replication_slots "
                   f"WHERE slot_name = 'slot_{dbname}'")


def test_offset_file_store_leaves_no_file(pg: PostgresCluster, dbname: str, broker: KafkaBroker,
                                          tmp_path: Path) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    config = {**base(pg, dbname, broker), "offset.storage": "file",
              "offset.storage.file.filename": str(tmp_path / "offsets.dat"), "publication.autocreate.mode": "disabled"}
    check(run_cli(tmp_path, config), f"publication.name: publication 'pub_{dbname}' does not exist")
    assert state(pg, dbname) == ([], [])
    assert not (tmp_path / "offsets.dat").exists()


def test_wal_level_replica(replica_pg: PostgresCluster, broker: KafkaBroker, tmp_path: Path) -> None:
    db = replica_pg.create_database("walrep")
    check(run_cli(tmp_path, base(replica_pg, db, broker)), "wal_level is 'replica'; set wal_level=logical")
    assert state(replica_pg, db) == ([], [])
    assert f"offsets_{db}" not in topics(broker)
