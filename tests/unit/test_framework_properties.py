"""Kafka Connect's connector-level properties and Debezium 3.6's internal ones: accepted with their values checked
as Connect's ConfigDef or Debezium's Field checks them, refused (one line: why, what instead) where a value asks for
behaviour pgcdc does not have, and `offsets.storage.topic` taken as the Kafka offset store's topic."""

from __future__ import annotations

import logging

import pytest

from pgcdc.config import build_config
from pgcdc.errors import ConfigError
from pgcdc.plugin_version import connector_version_problem

BASE = {"topic.prefix": "dbserver1", "database.hostname": "127.0.0.1", "database.user": "u",
        "database.dbname": "inventory", "bootstrap.servers": "127.0.0.1:9092"}


def _problems(override: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, **override})
    return list(exc.value.problems)


@pytest.mark.parametrize("override", [
    # Kafka Connect 4.3 (ConnectorConfig, SourceConnectorConfig): ConfigDef trims strings; the enums of
    # exactly.once.support and transaction.boundary are case-insensitive, config.action.reload's are not.
    {"config.action.reload": "none"}, {"config.action.reload": " restart "},
    {"exactly.once.support": "Requested"}, {"transaction.boundary": "POLL"}, {"transaction.boundary": "interval"},
    {"transaction.boundary.interval.ms": "0"}, {"tasks.max.enforce": "false"},
    {"connector.plugin.version": "latest"}, {"connector.plugin.version": "[3.6,4.0)"},
    {"key.converter.plugin.version": "latest"}, {"header.converter.plugin.version": " latest "},
    # Debezium 3.6 (CommonConnectorConfig, RelationalDatabaseConnectorConfig, PostgresConnectorConfig).
    {"executor.shutdown.timeout.ms": "1"}, {"query.fetch.size": "0"}, {"queue.provider.type": "MEMORY"},
    {"snapshot.max.threads.multiplier": "4"}, {"legacy.snapshot.max.threads": "true"},
    {"internal.legacy.snapshot.max.threads": "false"}, {"internal.advanced.metrics.enable": "true"},
    {"internal.snapshot.scan.all.columns.force": "true"}, {"custom.sanitize.pattern": r".*\.token$"},
    {"include.schema.changes": "maybe"},  # left out of the PostgreSQL connector's definition: never checked
    {"openlineage.integration.enabled": "false"}, {"openlineage.integration.job.tags": "k1=v1,k2=v2"},
    {"openlineage.integration.job.namespace": "ns"}, {"openlineage.integration.config.file.path": "x.yml"},
    {"database.include.list": ""}, {"table.ignore.builtin": "TRUE"},
    {"sourceinfo.struct.maker": "io.debezium.connector.postgresql.PostgresSourceInfoStructMaker"},
    {"transaction.metadata.factory": "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory"},
    {"snapshot.query.mode.custom.name": ""}, {"snapshot.query.mode.custom.name": "ignored.with.select_all"},
    {"internal.log.position.check.enable": "true"},
    {"lsn.flush.timeout.ms": "60000"},
    {"lsn.flush.timeout.action": "FAIL"},
])
def test_accepted_with_no_effect(override: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pgcdc.config"):
        build_config({**BASE, **override})
    assert f"accepted but not acted on by pgcdc: {next(iter(override))}" in caplog.text


@pytest.mark.parametrize(("override", "message"), [
    # Values Connect or Debezium refuse (measured: ConfigDef.validate, PostgresConnector.validate).
    ({"config.action.reload": "RESTART"}, "config.action.reload: must be one of none, restart (got 'RESTART')"),
    ({"exactly.once.support": "maybe"}, "exactly.once.support: must be one of REQUIRED, REQUESTED (got 'maybe')"),
    ({"transaction.boundary": "x"}, "transaction.boundary: must be one of INTERVAL, POLL, CONNECTOR (got 'x')"),
    ({"transaction.boundary.interval.ms": "-5"}, "transaction.boundary.interval.ms: must be a non-negative"),
    ({"tasks.max.enforce": "yes"}, "tasks.max.enforce: must be true or false (got 'yes')"),
    ({"executor.shutdown.timeout.ms": "0"}, "executor.shutdown.timeout.ms: must be a positive integer (got '0')"),
    ({"query.fetch.size": "-1"}, "query.fetch.size: must be a non-negative integer (got '-1')"),
    ({"snapshot.max.threads.multiplier": "0"}, "snapshot.max.threads.multiplier: must be a positive integer"),
    ({"legacy.snapshot.max.threads": "maybe"}, "legacy.snapshot.max.threads: must be true or false"),
    ({"internal.advanced.metrics.enable": "maybe"}, "internal.advanced.metrics.enable: must be true or false"),
    ({"internal.log.position.check.enable": "maybe"}, "internal.log.position.check.enable: must be true or"),
    ({"internal.snapshot.scan.all.columns.force": "x"}, "internal.snapshot.scan.all.columns.force: must be true"),
    ({"openlineage.integration.enabled": "maybe"}, "openlineage.integration.enabled: must be true or false"),
    ({"openlineage.integration.job.owners": "a=b,c"}, "openlineage.integration.job.owners: must be comma-sep"),
    ({"table.ignore.builtin": "maybe"}, "table.ignore.builtin: must be true or false (got 'maybe')"),
    ({"lsn.flush.timeout.ms": "0"}, "lsn.flush.timeout.ms: must be a positive integer (got '0')"),
    ({"lsn.flush.timeout.ms": "3000000000"}, "lsn.flush.timeout.ms: must be a positive integer"),
    ({"lsn.flush.timeout.action": "x"}, "lsn.flush.timeout.action: must be one of fail, warn, ignore (got 'x')"),
    ({"database.include.list": "(["}, "database.include.list: bad regular expression '(['"),
    ({"snapshot.query.mode": "custom"},
     "snapshot.query.mode.custom.name cannot be empty when snapshot.query.mode 'custom' is defined"),
    # Values asking for behaviour pgcdc does not have: why, and what instead.
    ({"exactly.once.support": "required"}, "exactly.once.support: required is refused: pgcdc delivers at least "
                                           "once"),
    ({"transaction.boundary": "connector"}, "transaction.boundary: connector is refused, as Kafka Connect refuses "
                                            "it for Debezium's PostgreSQL connector"),
    ({"openlineage.integration.enabled": "true"}, "openlineage.integration.enabled: true is refused: pgcdc emits "
                                                  "no OpenLineage events; remove it (got 'true')"),
    ({"queue.provider.type": "chronicle"}, "queue.provider.type: only memory"),
    ({"database.include.list": "inventory"}, "database.include.list: not supported: the PostgreSQL connector "
                                             "captures one database, database.dbname"),
    ({"database.exclude.list": "other"}, "database.exclude.list: not supported"),
    ({"table.ignore.builtin": "false"}, "table.ignore.builtin: false is not supported"),
    ({"sourceinfo.struct.maker": "com.acme.Maker"}, "sourceinfo.struct.maker: not supported: pgcdc writes the "
                                                    "source block of io.debezium.connector.postgresql"),
    ({"transaction.metadata.factory": "com.acme.Factory"}, "transaction.metadata.factory: not supported"),
    ({"snapshot.query.mode": "custom", "snapshot.query.mode.custom.name": "mine"},
     "snapshot.query.mode.custom.name: not supported: a custom snapshot query is a Java plug-in"),
    ({"internal.custom.retriable.exception": ".*timeout.*"}, "internal.custom.retriable.exception: not supported"),
    ({"internal.log.position.check.enable": "false"}, "internal.log.position.check.enable: false is not "
                                                      "supported"),
    ({"internal.create.slot.command.timeout": "-1"}, "internal.create.slot.command.timeout: Input should be "
                                                     "greater than or equal to 0"),
    ({"lsn.flush.timeout.action": "warn"}, "lsn.flush.timeout.action: not supported yet"),
    ({"offset.mismatch.strategy": "sometimes"}, "offset.mismatch.strategy: must be one of no_validation, "
                                                "trust_offset, trust_slot, trust_greater_lsn (got 'sometimes')"),
    ({"offset.mismatch.strategy": "trust_slot", "pgcdc.offset.behind.slot": "fail"},
     "offset.mismatch.strategy=trust_slot means pgcdc.offset.behind.slot=warn, but pgcdc.offset.behind.slot=fail: "
     "keep one"),
    ({"connector.plugin.version": "3.6.2.Final"}, "connector.plugin.version: pgcdc writes the events of Debezium "
                                                  "3.6.3.Final, which '3.6.2.Final' leaves out"),
    ({"value.converter.plugin.version": "4.3.0"}, "value.converter.plugin.version: pgcdc's converters are built "
                                                  "in (docs/configuration.md, Converters), no version of one can be "
                                                  "chosen; remove it or use latest (got '4.3.0')"),
    ({"key.converter.plugin.version": "[4.0,"}, "key.converter.plugin.version: bad version range: Unbounded range"),
    # Names Debezium 3.6 does not read (Field.createInternal prefixes them with `internal.`).
    ({"advanced.metrics.enable": "true"}, "advanced.metrics.enable is not read by Debezium 3.6 (it ignores this "
                                          "name): its property is internal.advanced.metrics.enable"),
    ({"create.slot.command.timeout": "10"}, "its property is internal.create.slot.command.timeout"),
    ({"multi.partition.mode": "true"}, "multi.partition.mode is set by Debezium itself"),
])
def test_refused_with_one_line(override: dict[str, str], message: str) -> None:
    problems = _problems(override)
    assert [message in p for p in problems] == [True], problems


# Measured with Kafka Connect 4.3: PluginUtils.connectorVersionRequirement(spec), then
# VersionRange.containsVersion(3.6.3.Final) (True/False) or the InvalidVersionSpecificationException's message.
CONNECT_VERSION_RANGES = [
    ('latest', True), ('3.6.3.Final', True), ('3.6.3', True), ('3.6.3.final', True), ('3.6.2.Final', False),
    ('3.6', False), ('[3.6,4.0)', True), ('[3.6.3.Final]', True), ('(3.6.3.Final,)', False), ('[3.6.3,)', True),
    ('(,3.6.3]', True), ('(,3.6.3)', False), ('[3.0,3.6.3.Final)', False), ('[3.6.3.CR1,3.6.3.Final]', True),
    ('[3.6.4.Alpha1,)', False), ('(3.6.3.Beta1,3.6.3.SP1)', True), ('[1.0,2.0),[3.0,4.0)', True),
    ('[1.0,2.0),[4.0,5.0)', False), ('[3.7,', 'Unbounded range: [3.7,'),
    ('(3.6.3)', 'Single version must be surrounded by []: (3.6.3)'),
    ('[4.0,3.0]', 'Range defies version ordering: [4.0,3.0]'), ('[3.6,3.6]', False),
    ('[1.0,2.0),3.6.3', 'Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0),3.6.3'),
    ('3.6.3-SNAPSHOT', False), ('[3.6.3-SNAPSHOT,3.6.3.Final)', False), ('[3.6.3.Final,3.6.3.SP1)', True),
    (' [3.6,4) ', True),
]


@pytest.mark.parametrize(("spec", "connect"), CONNECT_VERSION_RANGES)
def test_connector_plugin_version_as_connect_reads_it(spec: str, connect: bool | str) -> None:
    problem = connector_version_problem(spec)
    if connect is True:
        assert problem is None
    elif connect is False:
        assert problem is not None and "leaves out" in problem
    else:
        assert problem == f"bad version range: {connect}"


def test_offsets_storage_topic_is_the_kafka_offset_store() -> None:
    # KIP-618: a Connect connector with its own offsets topic keeps them there, in Connect's format, which pgcdc's
    # Kafka offset store reads and writes: the same topic resumes where the Connect connector stopped.
    c = build_config({**BASE, "offsets.storage.topic": " connect-offsets-inventory "})
    assert (c.offset_storage, c.offset_storage_topic) == ("kafka", "connect-offsets-inventory")
    c = build_config({**BASE, "offsets.storage.topic": "t", "offset.storage.topic": "t",
                      "offset.storage": "org.apache.kafka.connect.storage.KafkaOffsetBackingStore"})
    assert (c.offset_storage, c.offset_storage_topic) == ("kafka", "t")


@pytest.mark.parametrize(("override", "message"), [
    ({"offsets.storage.topic": " "}, "offsets.storage.topic: must be non-empty (got ' ')"),
    ({"offsets.storage.topic": "a", "offset.storage.topic": "b"},
     "offsets.storage.topic ('a') and offset.storage.topic ('b') name different offset topics: keep one"),
    ({"offsets.storage.topic": "a", "offset.storage": "file"},
     "offsets.storage.topic names a Kafka topic for the offsets but offset.storage=file: remove one"),
    ({"offsets.storage.topic": "a", "bootstrap.servers": "", "sink.type": "file"},
     "offsets.storage.topic: the offsets topic needs bootstrap.servers"),
])
def test_offsets_storage_topic_conflicts(override: dict[str, str], message: str) -> None:
    problems = _problems(override)
    assert [message in p for p in problems] == [True], problems


@pytest.mark.parametrize(("strategy", "policy"), [
    ("no_validation", "fail"), (" Trust_Offset ", "fail"), ("trust_slot", "warn"), ("trust_greater_lsn", "warn"),
])
def test_offset_mismatch_strategy_sets_what_an_offset_behind_the_slot_does(strategy: str, policy: str) -> None:
    assert build_config({**BASE, "offset.mismatch.strategy": strategy}).pgcdc_offset_behind_slot == policy
    # no_validation keeps pgcdc's own setting.
    if strategy == "no_validation":
        assert build_config({**BASE, "offset.mismatch.strategy": strategy,
                             "pgcdc.offset.behind.slot": "warn"}).pgcdc_offset_behind_slot == "warn"


@pytest.mark.parametrize(("override", "message"), [
    ({"converters": "isbn, geo", "isbn.type": "com.example.IsbnConverter", "isbn.schema.name": "x"},
     "converters: isbn, geo: Debezium custom converters are Java classes (com.example.IsbnConverter, geo.type "
     "unset) that pgcdc cannot run"),
    ({"post.processors": "reselector",
      "reselector.type": "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
      "reselector.reselect.columns.include.list": "public.t:c"},
     "post.processors: reselector: Debezium post processors (io.debezium.processors.reselect."
     "ReselectColumnsPostProcessor) are not supported; for unchanged TOAST values"),
])
def test_custom_plugins_are_refused_in_one_line(override: dict[str, str], message: str) -> None:
    problems = _problems(override)
    assert len(problems) == 1 and problems[0].startswith(message), problems  # their <name>.* options with it


@pytest.mark.parametrize("prop", ["converters", "post.processors"])
def test_an_empty_plugin_list_is_accepted(prop: str) -> None:
    build_config({**BASE, prop: " "})


@pytest.mark.parametrize(("override", "message"), [
    ({"snapshot.mode": "custom", "snapshot.mode.custom.name": "my"},
     "snapshot.mode: custom runs a Java Snapshotter (snapshot.mode.custom.name) pgcdc cannot load; use initial"),
    ({"snapshot.locking.mode": "CUSTOM", "snapshot.locking.mode.custom.name": "my"},
     "snapshot.locking.mode: custom loads a Java class (snapshot.locking.mode.custom.name) pgcdc cannot run"),
])
def test_custom_snapshot_plugins_are_refused_in_one_line(override: dict[str, str], message: str) -> None:
    problems = _problems(override)
    assert len(problems) == 1 and problems[0].startswith(message), problems
