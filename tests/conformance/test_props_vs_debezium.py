"""Debezium 3.6 properties that change what is captured or emitted, compared with the real Debezium in one run:
publish.via.partition.root (partitioned table, snapshot and streaming), skip.messages.without.change (REPLICA
IDENTITY FULL and DEFAULT, with excluded and truncated columns), extended.headers.enabled=false,
include.schema.comments (COMMENT ON before and while streaming), guardrail.collections.max exceeded with the
default action (warn) and streaming.delay.ms (streaming still happens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgcdc.errors import ConfigError, PgcdcError
from pgcdc.local import PostgresCluster
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.conformance.compare import assert_same
from tests.conformance.oracle import run_oracle
from tests.conformance.test_debezium_streaming import run_both
from tests.harness import make_config

SETUP = (
    "CREATE TABLE pt (id int, k int, v text, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);"
    "CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10);"
    "CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (10) TO (20);"
    "INSERT INTO pt VALUES (1, 1, 'a'), (2, 15, 'b');"
    "CREATE TABLE g (id int PRIMARY KEY, keep int, noise int, note text);"
    "ALTER TABLE g REPLICA IDENTITY FULL;"
    "CREATE TABLE h (id int PRIMARY KEY, keep int, noise int);"
    "INSERT INTO g VALUES (1, 10, 100, 'abcd'); INSERT INTO h VALUES (1, 10, 100);"
    "COMMENT ON TABLE g IS 'the g table'; COMMENT ON COLUMN g.id IS 'key column';"
    "COMMENT ON COLUMN g.keep IS 'kept column'"
)
WORKLOAD = [
    "INSERT INTO pt VALUES (3, 2, 'c'), (4, 12, 'd')",
    "UPDATE pt SET v = 'cc' WHERE id = 3",
    "UPDATE pt SET k = 13 WHERE id = 3",  # to the other partition
    "DELETE FROM pt WHERE id = 4",
    "UPDATE g SET noise = 101 WHERE id = 1",  # only an excluded column changes
    "UPDATE g SET note = 'abce' WHERE id = 1",  # a change the truncation hides
    "UPDATE g SET keep = 11, noise = 102 WHERE id = 1",
    "UPDATE h SET noise = 101 WHERE id = 1",  # no old row to compare with
    "UPDATE h SET keep = 11 WHERE id = 1",
    "UPDATE g SET id = 2 WHERE id = 1",
    "COMMENT ON COLUMN g.keep IS 'changed comment'",
    "ALTER TABLE g ADD COLUMN extra text",
    "COMMENT ON COLUMN g.extra IS 'new column'",
    "UPDATE g SET extra = 'x' WHERE id = 2",
    "UPDATE g SET noise = 103 WHERE id = 2",
]
PROPS = {
    "publish.via.partition.root": "true",
    "skip.messages.without.change": "true",
    "column.exclude.list": "public.g.noise,public.h.noise",
    "column.truncate.to.3.chars": "public.g.note",
    "extended.headers.enabled": "false",
    "include.schema.comments": "true",
    "guardrail.collections.max": "2",
    "streaming.delay.ms": "1500",
}


def test_effect_properties_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, PROPS, WORKLOAD, snapshot=True)
    assert_same("effect properties", ours, theirs, snapshot=True)
    text = json.dumps(theirs)
    # What Debezium was measured to do: root and partitions snapshotted, streamed changes on the root's topic,
    # no comments anywhere, no context headers, the updates of g that change no captured column dropped.
    assert [r["topic"][10:] for r in theirs if r["value"] and r["value"]["payload"]["op"] == "r"] == [
        "public.g", "public.h", "public.pt", "public.pt", "public.pt_1", "public.pt_2"]
    assert {r["topic"] for r in theirs if r["value"] and r["value"]["payload"]["op"] != "r"} == {
        "dbserver1.public.pt", "dbserver1.public.g", "dbserver1.public.h"}
    assert "comment" not in text and '"doc"' not in text and "__debezium.context" not in text
    assert sum(1 for r in theirs if r["topic"].endswith(".g") and r["value"]
               and r["value"]["payload"]["op"] == "u") == 2
    assert sum(1 for r in theirs if r["topic"].endswith(".h") and r["value"]
               and r["value"]["payload"]["op"] == "u") == 2


def test_guardrail_fail_stops_at_start_like_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """guardrail.collections.limit.action=fail: Debezium stops at start (partitions count as tables); so does
    pgcdc, with the same sentence, before creating the publication or the slot."""
    pg.execute("CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int, k int, PRIMARY KEY (id, k)) PARTITION BY "
               "RANGE (k); CREATE TABLE b_1 PARTITION OF b FOR VALUES FROM (0) TO (10)", dbname)
    props = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", "guardrail.collections.max": "2",
             "guardrail.collections.limit.action": "FAIL"}
    with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
        run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                 "slot.name": f"dbz_{dbname}",
                                                 "publication.name": f"dbzpub_{dbname}"}}, tmp_path / "dbz.jsonl")
    java = "Guardrail limit exceeded: 3 tables/collections configured for capture, but maximum allowed is 2."
    assert java in str(exc.value)
    connector = Connector(make_config(pg, dbname, **{**props, "name": "pgcdc"}), sink=MemorySink())
    with pytest.raises(PgcdcError) as ours:
        connector.run()
    assert str(ours.value) == f"guardrail.collections.max: {java} (guardrail.collections.limit.action=fail)"
    assert pg.execute(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'", dbname) == [(0,)]
    assert pg.execute(f"SELECT count(*) FROM pg_publication WHERE pubname = 'pub_{dbname}'", dbname) == [(0,)]


def test_partitions_without_partition_root_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """The default (publish.via.partition.root=false) with a filtered publication of the root and its partitions:
    streamed changes on each partition's topic, the snapshot of the root and of each partition."""
    props = {"publication.autocreate.mode": "filtered", "table.include.list": "public\\.pt.*"}
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, props, WORKLOAD[:4], snapshot=True)
    assert_same("partitions", ours, theirs, snapshot=True)
    assert [r["topic"][10:] for r in theirs if r["value"] and r["value"]["payload"]["op"] != "r"] == [
        "public.pt_1", "public.pt_2", "public.pt_1", "public.pt_1", "public.pt_2", "public.pt_2"]


# Debezium's enumerated values in other cases and with blanks around them: Debezium 3.6 trims them and ignores
# case (EnumeratedValue.parse), and each still takes effect (string decimals, hex bytes, ISO intervals,
# Connect times, Avro-adjusted names). database.sslmode: case only (PostgreSQL's JDBC driver refuses blanks).
ENUM_SETUP = ("CREATE TABLE a (id int PRIMARY KEY, \"n-1\" numeric(5,2), b bytea, i interval, t time);"
              "INSERT INTO a VALUES (1, 1.5, '\\x0102', '1 day', '10:00')")
ENUM_WORKLOAD = ["INSERT INTO a VALUES (2, -0.05, '\\x', '-1 year -2 mons 3 days -00:00:00.000001', '23:59:59.999999')"]
ENUM_SPELLINGS = {
    "upper": {"database.sslmode": "DISABLE", "plugin.name": "PGOUTPUT", "lsn.flush.mode": "CONNECTOR",
              "publication.autocreate.mode": "ALL_TABLES", "snapshot.mode": "INITIAL",
              "decimal.handling.mode": "STRING", "time.precision.mode": "CONNECT", "binary.handling.mode": "HEX",
              "interval.handling.mode": "STRING", "hstore.handling.mode": "MAP",
              "schema.name.adjustment.mode": "AVRO", "field.name.adjustment.mode": "AVRO"},
    "blanks": {"database.sslmode": "Disable", "plugin.name": " pgoutput ", "lsn.flush.mode": " connector ",
               "publication.autocreate.mode": " all_tables ", "snapshot.mode": " initial ",
               "decimal.handling.mode": " String ", "time.precision.mode": " connect ", "binary.handling.mode": " hex ",
               "interval.handling.mode": " string ", "hstore.handling.mode": " map ",
               "schema.name.adjustment.mode": " avro ", "field.name.adjustment.mode": " Avro "},
}


@pytest.mark.parametrize("spelling", list(ENUM_SPELLINGS))
def test_enumerated_values_are_read_as_debezium_reads_them(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                           spelling: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, ENUM_SETUP, ENUM_SPELLINGS[spelling], ENUM_WORKLOAD, snapshot=True)
    assert_same(f"enumerated values ({spelling})", ours, theirs, snapshot=True)
    # (the records as the comparison reads them: integers as their text)
    assert [r["value"]["payload"]["after"] for r in theirs] == [
        {"id": "1", "n_1": "1.50", "b": "0102", "i": "P0Y0M1DT0H0M0S", "t": "36000000"},
        {"id": "2", "n_1": "-0.05", "b": "", "i": "P-1Y-2M3DT0H0M-0.000001S", "t": "86399999"}]


def test_snapshot_mode_never_is_refused_as_debezium_refuses_it(pg: PostgresCluster, dbname: str,
                                                               tmp_path: Path) -> None:
    props = {"topic.prefix": "dbserver1", "snapshot.mode": "never"}
    with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
        run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                 "slot.name": f"dbz_{dbname}",
                                                 "publication.name": f"dbzpub_{dbname}"}}, tmp_path / "dbz.jsonl")
    assert "The 'snapshot.mode' value is invalid: Value must be one of" in str(exc.value)
    with pytest.raises(PgcdcError) as ours:
        make_config(pg, dbname, **{**props, "name": "pgcdc"})
    assert str(ours.value) == ("snapshot.mode: 'never' was replaced by no_data in Debezium 2.6, and Debezium 3.x "
                               "refuses it; use no_data")


# Booleans and integers as Debezium 3.6 reads them: true or false in any case, blanks around ignored; an integer
# as Java's parseInt reads it (a sign allowed; no blanks, no underscores).
SPELLINGS = [("tombstones.on.delete", " FALSE ", True), ("tombstones.on.delete", "yes", False),
             ("include.unknown.datatypes", "on", False), ("tombstones.on.delete", "0", False),
             ("heartbeat.interval.ms", "+1000", True), ("heartbeat.interval.ms", "1_000", False),
             ("snapshot.max.threads", " 2 ", False), ("snapshot.fetch.size", "0", True)]


def debezium_takes(pg: PostgresCluster, dbname: str, tmp_path: Path, props: dict[str, str],
                   refused: str | None) -> dict[str, str]:
    """Debezium snapshots a one-row table with `props` (refused None), or refuses the `refused` property's value;
    returns the properties to give pgcdc."""
    pg.execute("CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a VALUES (1)", dbname)
    props = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", **props}
    config = {"name": "oracle", "config": {**pg.connection_properties(dbname), **props, "slot.name": f"dbz_{dbname}",
                                           "publication.name": f"dbzpub_{dbname}"}}
    if refused is None:
        assert [r["value"]["payload"]["op"] for r in run_oracle(config, tmp_path / "dbz.jsonl", idle_timeout=3)
                if r["topic"] == "dbserver1.public.a"] == ["r"]
    else:
        with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
            run_oracle(config, tmp_path / "dbz.jsonl")
        assert f"The '{refused}' value is invalid" in str(exc.value)
    return {**props, "name": "pgcdc"}


@pytest.mark.parametrize(("prop", "value", "accepted"), SPELLINGS)
def test_booleans_and_integers_are_read_as_debezium_reads_them(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                               prop: str, value: str, accepted: bool) -> None:
    props = debezium_takes(pg, dbname, tmp_path, {prop: value}, None if accepted else prop)
    if accepted:
        make_config(pg, dbname, **props)
        return
    with pytest.raises(PgcdcError) as ours:
        make_config(pg, dbname, **props)
    assert str(ours.value).startswith(f"{prop}: Input should be a valid ") and repr(value) in str(ours.value)


@pytest.mark.parametrize(("prop", "value"), [("topic.prefix", "db server"), ("topic.delimiter", "/"),
                                             ("topic.heartbeat.name", "hb/shared")])
def test_topic_names_are_refused_as_debezium_refuses_them(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                          prop: str, value: str) -> None:
    props = {"topic.prefix": "dbserver1", prop: value}
    with pytest.raises(RuntimeError, match="Debezium oracle failed") as exc:
        run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                 "slot.name": f"dbz_{dbname}",
                                                 "publication.name": f"dbzpub_{dbname}"}}, tmp_path / "dbz.jsonl")
    java = f"{value} has invalid format (only the underscore, hyphen, dot and alphanumeric characters are allowed)"
    # topic.prefix in the connector's validation; the others where the topic naming strategy logs its refusal
    assert f"The '{prop}' value" in str(exc.value) + (tmp_path / "dbz.jvm.log").read_text()
    assert java in (tmp_path / "dbz.jvm.log").read_text()
    with pytest.raises(PgcdcError) as ours:
        make_config(pg, dbname, **{**props, "name": "pgcdc"})
    assert str(ours.value) == f"{prop}: {java}"


# Properties Debezium 3.6 defines that pgcdc accepts without acting on them: the values Debezium takes are taken
# (event.converting.failure.handling.mode, which only the MySQL-family connectors read, unchecked), the ones it
# refuses are refused.
INERT_3_6 = [({"statistics.metrics.enabled": "false", "connection.validation.timeout.ms": "5000",
               "database.query.timeout.ms": "1000", "event.converting.failure.handling.mode": "drop"}, None),
             ({"connection.validation.timeout.ms": "0"}, "connection.validation.timeout.ms")]


@pytest.mark.parametrize(("props", "refused"), INERT_3_6)
def test_inert_properties_take_what_debezium_takes(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                   props: dict[str, str], refused: str | None) -> None:
    ours = debezium_takes(pg, dbname, tmp_path, props, refused)
    if refused is None:
        make_config(pg, dbname, **ours)
        return
    with pytest.raises(PgcdcError, match=f"^{refused}: must be "):
        make_config(pg, dbname, **ours)


def test_removed_filter_names_filter_nothing_in_debezium_and_are_refused(pg: PostgresCluster, dbname: str,
                                                                        tmp_path: Path) -> None:
    """table.whitelist and its kin, removed in Debezium 2.0: Debezium 3.6 ignores them and captures every table;
    pgcdc refuses them, naming the property to use, rather than ignore a filter."""
    pg.execute("CREATE TABLE a (id int PRIMARY KEY); INSERT INTO a VALUES (1)", dbname)
    props = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", "table.whitelist": "public.other",
             "column.blacklist": "public.a.id"}
    records = run_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **props,
                                                       "slot.name": f"dbz_{dbname}",
                                                       "publication.name": f"dbzpub_{dbname}"}},
                         tmp_path / "dbz.jsonl", idle_timeout=3)
    assert [r["value"]["payload"]["after"] for r in records if r["topic"] == "dbserver1.public.a"] == [{"id": 1}]
    with pytest.raises(ConfigError) as ours:
        make_config(pg, dbname, **{**props, "name": "pgcdc"})
    assert list(ours.value.problems) == [
        "table.whitelist was removed in Debezium 2.0 (Debezium 3.6 ignores it, so it filters nothing): use "
        "table.include.list",
        "column.blacklist was removed in Debezium 2.0 (Debezium 3.6 ignores it, so it filters nothing): use "
        "column.exclude.list"]
