"""Operator commands against a real PostgreSQL: validate, status, offsets show/reset, slot list/drop."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from pgcdc.cli import main
from pgcdc.lsn import format_lsn, parse_lsn
from pgcdc.local import KafkaBroker, PostgresCluster
from pgcdc.offsets import offset_key
from pgcdc.offsets.file import FileOffsetStore
from tests.harness import Running, make_config, wait_for


def props(pg: PostgresCluster, db: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {"name": "ops", "topic.prefix": "ops", **pg.connection_properties(db), "slot.name": f"slot_{db}",
            "publication.name": f"pub_{db}", "sink.type": "file", "sink.file.path": str(tmp_path / "out.jsonl"),
            "offset.storage": "file", "offset.storage.file.filename": str(tmp_path / "offsets.dat"),
            "snapshot.mode": "no_data"}
    base.update(extra)
    return base


def cli(*args: str, props: dict[str, str]) -> Result:
    sets = [x for k, v in props.items() for x in ("--set", f"{k}={v}")]
    return CliRunner().invoke(main, [*args, *sets], catch_exceptions=False)


def test_validate_passes_on_a_good_setup(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute("CREATE TABLE good (id int PRIMARY KEY)", dbname)
    result = cli("validate", props=props(pg, dbname, tmp_path))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "ok: no problems found"
    # validate creates nothing
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE database = '{dbname}'") == []
    assert pg.execute("SELECT 1 FROM pg_publication", dbname) == []


def test_validate_lists_every_problem(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute("CREATE TABLE nokey (v text); CREATE TABLE nothing (id int PRIMARY KEY); "
               "ALTER TABLE nothing REPLICA IDENTITY NOTHING", dbname)
    role = f"r_{dbname}"
    pg.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    try:
        p = props(pg, dbname, tmp_path, **{"database.user": role, "database.password": "pw",
                                           "publication.autocreate.mode": "disabled", "snapshot.mode": "initial",
                                           "sink.type": "kafka", "bootstrap.servers": "127.0.0.1:1"})
        result = cli("validate", props=p)
    finally:
        pg.execute(f"DROP OWNED BY {role}; DROP ROLE {role}", dbname)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1, result.output
    expected = [
        f"error: database.user: role '{role}' lacks the REPLICATION attribute",
        f"error: database.user: '{role}' may not open a replication connection",
        f"error: publication.name: publication 'pub_{dbname}' does not exist and publication.autocreate.mode=disabled",
        "error: table public.nokey: no primary key and REPLICA IDENTITY DEFAULT",
        f"error: table public.nokey: database.user '{role}' may not SELECT it",
        "error: table public.nothing: REPLICA IDENTITY NOTHING",
        f"error: table public.nothing: database.user '{role}' may not SELECT it",
        "error: bootstrap.servers: cannot reach Kafka at 127.0.0.1:1",
    ]
    for want, line in zip(expected, lines, strict=False):
        assert line.startswith(want), (want, lines)
    assert lines[len(expected):] == [f"{len(expected)} error(s), 0 warning(s)"], lines


def test_status_offsets_and_slots(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    p = props(pg, dbname, tmp_path)
    config = make_config(pg, dbname, **p)
    with Running(config):
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        store = FileOffsetStore(p["offset.storage.file.filename"], offset_key("ops", "ops"))
        wait_for(lambda: store.load() is not None, 30, "an offset")
        busy = cli("slot", "drop", "--yes", props=p)
        assert busy.exit_code == 2 and "is in use" in busy.output
        assert '"running": true' in cli("status", props=p).output
    status = json.loads(cli("status", props=p).output)
    assert status["running"] is False
    slot, offset = status["slot"], status["offset"]
    assert slot["slot_name"] == f"slot_{dbname}" and slot["plugin"] == "pgoutput" and slot["lag_bytes"] >= 0
    # Durability order: what the slot confirmed is what the offset holds.
    assert slot["confirmed_flush_lsn"] == offset["lsn_text"] == format_lsn(offset["lsn"])
    shown = json.loads(cli("offsets", "show", props=p).output)
    assert shown == store.load() and shown["messageType"] == "COMMIT"
    listed = cli("slot", "list", props=p).output
    assert f"slot_{dbname}" in listed and slot["confirmed_flush_lsn"] in listed

    # An offset behind the slot's confirmed position: changes in between are gone, and validate says so.
    behind = dict(shown, lsn=shown["lsn"] - 8, lsn_proc=shown["lsn"] - 8, lsn_commit=shown["lsn"] - 8)
    store.store(behind)
    result = cli("validate", props=p)
    assert result.exit_code == 1 and "is behind slot" in result.output, result.output

    reset = cli("offsets", "reset", "--yes", props=p)
    assert reset.exit_code == 0, reset.output
    assert json.loads(cli("offsets", "show", props=p).output) is None
    dropped = cli("slot", "drop", "--yes", props=p)
    assert dropped.output.strip() == f"dropped slot slot_{dbname}"
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == []
    assert cli("slot", "drop", "--yes", props=p).output.strip() == f"no slot named slot_{dbname}"
    assert parse_lsn(slot["confirmed_flush_lsn"]) > 0


def test_kafka_offset_reset_writes_a_null_value(broker: KafkaBroker) -> None:
    from pgcdc.offsets.kafka import KafkaOffsetStore

    key = offset_key("ops", "kafka")
    conf = {"bootstrap.servers": broker.bootstrap_servers, "partitioner": "murmur2_random"}
    store = KafkaOffsetStore(conf, "ops-offsets-reset", key, partitions=1)
    other = KafkaOffsetStore(conf, "ops-offsets-reset", offset_key("other", "kafka"), partitions=1)
    try:
        store.store({"lsn": 42})
        other.store({"lsn": 7})
        store.reset()
        assert store.load() is None
        assert other.load() == {"lsn": 7}  # another connector's offset in the same topic stays
    finally:
        store.close()
        other.close()
