"""Kafka Connect 4.x connector-level properties (ConnectorConfig, SourceConnectorConfig) and Debezium 3.6 properties
(CommonConnectorConfig, RelationalDatabaseConnectorConfig, PostgresConnectorConfig) that change nothing pgcdc does,
or that pgcdc takes only at the values that ask for nothing it lacks.

Each name has the check Kafka Connect's ConfigDef or Debezium's Field applies to its value (the same wording as
config_values.py), then, for a value asking for behaviour pgcdc does not have, one line saying why and what to
use instead. `WHY` is the sentence docs/configuration.md prints for each (`python -m pgcdc.docgen`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pgcdc.config_values import BOOLEAN, Rule, _metric_tags, _number, one_of, refused
from pgcdc.plugin_version import connector_version_problem, converter_version_problem

POSITIVE_LONG = _number(64, 1, "a positive integer")
NON_NEGATIVE_INT = _number(32, 0, "a non-negative integer")
POSITIVE_INT = _number(32, 1, "a positive integer")
CONNECT_NON_NEGATIVE_LONG = _number(64, 0, "a non-negative integer", trim=True)  # Kafka Connect's: ConfigDef trims
PG_SOURCE_INFO = "io.debezium.connector.postgresql.PostgresSourceInfoStructMaker"
TX_FACTORY = "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory"


def exactly(*allowed: str) -> Rule:
    """ConfigDef.ValidString: case-sensitive, after ConfigDef trimmed the text."""
    def check(value: str) -> str | None:
        return None if value.strip() in allowed else f"must be one of {', '.join(allowed)}"
    return check


def _regex_list(value: str) -> str | None:
    # Field::isListOfRegex: each comma-separated item a regular expression.
    for item in (v.strip() for v in value.split(",") if v.strip()):
        try:
            re.compile(item)
        except re.error as exc:
            return f"bad regular expression {item!r}: {exc}"
    return None


def _regex(value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as exc:
        return f"bad regular expression: {exc}"
    return None


def only(check: Rule | None, allowed: tuple[str, ...], why: str, *, fold: bool = True) -> Rule:
    """Debezium's or Connect's own check first; then a value outside `allowed` is refused with `why`."""
    ok = {a.lower() if fold else a for a in allowed}

    def rule(value: str) -> str | None:
        problem = check(value) if check else None
        if problem:
            return problem
        text = value.strip()
        return None if (text.lower() if fold else text) in ok else why
    return rule


def _not_set(why: str) -> Rule:
    return lambda value: None if not value.strip() else why


# property -> (check, why it changes nothing a pgcdc user sees, or what pgcdc takes of it)
INERT: dict[str, tuple[Rule | None, str]] = {
    # Kafka Connect's connector-level properties.
    "config.action.reload": (
        exactly("none", "restart"),
        "what a Connect worker does when a config provider's value changes; pgcdc has no config providers"),
    "exactly.once.support": (
        only(one_of("REQUIRED", "REQUESTED"), ("requested",),
             "required is refused: pgcdc delivers at least once (a restart may repeat the events after the last "
             "stored offset) and writes no Kafka transactions; remove it or use requested"),
        "requested only: it asks a Connect worker with exactly-once source support for it; pgcdc is at-least-once"),
    "transaction.boundary": (
        only(one_of("INTERVAL", "POLL", "CONNECTOR"), ("poll", "interval"),
             "connector is refused, as Kafka Connect refuses it for Debezium's PostgreSQL connector, which cannot "
             "define transaction boundaries; use poll (the default)"),
        "poll or interval: the boundaries of a Connect worker's exactly-once transactions; pgcdc writes none"),
    "transaction.boundary.interval.ms": (
        CONNECT_NON_NEGATIVE_LONG, "the length of those exactly-once transactions; pgcdc writes none"),
    "tasks.max.enforce": (BOOLEAN, "whether Connect fails a connector that makes more than tasks.max tasks; pgcdc "
                                   "runs one"),
    "connector.plugin.version": (
        connector_version_problem,
        "a version range Kafka Connect picks the plugin by: accepted when it holds 3.6.3.Final (or is `latest`), "
        "the Debezium release whose events pgcdc writes; any other is refused"),
    **{f"{side}.converter.plugin.version": (
        converter_version_problem, "latest only: the converter's version Kafka Connect picks; pgcdc's are built in")
       for side in ("key", "value", "header")},
    # Debezium's: executor, queue, metrics and snapshot-splitting internals.
    "executor.shutdown.timeout.ms": (POSITIVE_LONG, "how long Debezium waits for its task executor to stop"),
    "query.fetch.size": (NON_NEGATIVE_INT, "JDBC fetch size of streaming queries, which the PostgreSQL connector "
                                           "does not run"),
    "queue.provider.type": (
        only(None, ("memory",), "only memory: pgcdc has no pluggable change-event queue; remove it"),
        "memory only (Debezium's default): the queue between Debezium's reader and its Connect task"),
    "internal.advanced.metrics.enable": (BOOLEAN, "Debezium's JMX streaming metrics; pgcdc's are on metrics.port"),
    "statistics.metrics.enabled": (BOOLEAN, "latency statistics in Debezium's JMX metrics; pgcdc's metrics are on "
                                            "metrics.port"),
    "connection.validation.timeout.ms": (POSITIVE_LONG, "how long Debezium's validation of a configuration waits for "
                                                        "its database connection; pgcdc connects when it starts"),
    "database.query.timeout.ms": (None, "the JDBC driver's timeout of Debezium's queries; pgcdc's have none"),
    "event.converting.failure.handling.mode": (
        None, "failures converting the MySQL-family connectors' binlog values; the PostgreSQL connector neither "
              "reads nor checks it (any value is taken, measured)"),
    "internal.snapshot.scan.all.columns.force": (BOOLEAN, "how Debezium discovers columns before a snapshot"),
    "custom.sanitize.pattern": (
        _regex, "which configuration values Debezium masks in its logs; pgcdc masks secrets by its own list (see "
                "Secrets)"),
    "include.schema.changes": (
        None, "Debezium's PostgreSQL connector leaves it out of its configuration (no schema change topic)"),
    "openlineage.integration.enabled": (
        only(BOOLEAN, ("false",), "true is refused: pgcdc emits no OpenLineage events; remove it"),
        "false only: pgcdc emits no OpenLineage events (the other `openlineage.integration.*` settings are "
        "inert without it)"),
    "openlineage.integration.job.tags": (_metric_tags, "inert without openlineage.integration.enabled"),
    "openlineage.integration.job.owners": (_metric_tags, "inert without openlineage.integration.enabled"),
    "openlineage.integration.config.file.path": (None, "inert without openlineage.integration.enabled"),
    "openlineage.integration.job.namespace": (None, "inert without openlineage.integration.enabled"),
    "openlineage.integration.job.description": (None, "inert without openlineage.integration.enabled"),
    "openlineage.integration.dataset.kafka.bootstrap.servers": (None, "inert without "
                                                                      "openlineage.integration.enabled"),
    # Debezium's, taken at their default only: another value asks for what pgcdc does not do.
    "database.include.list": (
        only(_regex_list, ("",), "not supported: the PostgreSQL connector captures one database, database.dbname; "
                                 "remove it and filter with schema.include.list or table.include.list"),
        "empty only: a filter of the MySQL-family connectors"),
    "database.exclude.list": (
        only(_regex_list, ("",), "not supported: the PostgreSQL connector captures one database, database.dbname; "
                                 "remove it and filter with schema.exclude.list or table.exclude.list"),
        "empty only: as database.include.list"),
    "table.ignore.builtin": (
        only(BOOLEAN, ("true",), "false is not supported: pgcdc never captures PostgreSQL's system schemas "
                                 "(pg_catalog, information_schema); remove it"),
        "true only (the default): system tables are never captured"),
    "sourceinfo.struct.maker": (
        only(None, (PG_SOURCE_INFO,), f"not supported: pgcdc writes the source block of {PG_SOURCE_INFO} and "
                                      "loads no Java class; remove it (a transform can reshape records)", fold=False),
        f"{PG_SOURCE_INFO} only (the default)"),
    "transaction.metadata.factory": (
        only(None, (TX_FACTORY,), f"not supported: pgcdc writes the transaction metadata of {TX_FACTORY} and loads "
                                  "no Java class; remove it", fold=False),
        f"{TX_FACTORY} only (the default)"),
    "snapshot.query.mode.custom.name": (
        None, "read only with snapshot.query.mode=custom, which pgcdc refuses: it names a Java SnapshotQuery "
              "plug-in"),
    "internal.custom.retriable.exception": (
        _not_set("not supported: pgcdc restarts only after a lost connection (errors.max.retries); remove it"),
        "empty only: it makes matching errors restart the connector"),
    "internal.log.position.check.enable": (
        only(BOOLEAN, ("true",), "false is not supported: pgcdc always compares the stored offset with the slot; "
                                 "pgcdc.offset.behind.slot=warn streams on when the offset is behind it"),
        "true only (the default): the check that the stored position is still in the slot"),
    "lsn.flush.timeout.ms": (POSITIVE_INT, "how long Debezium waits for a confirmed position to be sent; pgcdc sends "
                                           "it without a time limit"),
    "lsn.flush.timeout.action": (
        only(one_of("fail", "warn", "ignore"), ("fail",),
             "not supported yet: pgcdc stops when a confirmed position cannot be sent; remove it (fail is the "
             "default)"),
        "fail only (the default): pgcdc stops when a confirmed position cannot be sent"),
}

# Names Debezium 3.6 does not read: refused with the reason, so that a setting nothing acts on is not kept.
REFUSED: dict[str, str] = {
    **{name: (f"{name} is not read by Debezium 3.6 (it ignores this name): its property is internal.{name}")
       for name in ("advanced.metrics.enable", "create.slot.command.timeout", "custom.retriable.exception",
                    "log.position.check.enable", "snapshot.scan.all.columns.force")},
    "multi.partition.mode": ("multi.partition.mode is set by Debezium itself when it builds the topic naming "
                             "strategy (a configured value is overwritten): remove it"),
    **{f"{kind}.{old}": (f"{kind}.{old} was removed in Debezium 2.0 (Debezium 3.6 ignores it, so it filters "
                         f"nothing): use {kind}.{new}")
       for kind in ("schema", "table", "column") for old, new in (("whitelist", "include.list"),
                                                                  ("blacklist", "exclude.list"))},
}

# Accepted with these prefixes (the family's other settings); values checked by INERT where a name is listed.
PREFIXES = ("openlineage.integration.",)

# offset.mismatch.strategy -> pgcdc.offset.behind.slot: what a stored offset behind the slot's confirmed position
# does. PostgresConnectorConfig.OffsetSlotMismatchStrategy: trust_offset fails then (the slot was recreated or
# moved past the offset); trust_slot and trust_greater_lsn stream on from the slot. An offset ahead of the slot
# needs no choice: pgcdc streams from the offset, as trust_offset and trust_greater_lsn do (trust_slot would
# repeat the events in between). no_validation leaves pgcdc's own policy (docs/migrating-from-debezium.md).
MISMATCH_STRATEGY = {"no_validation": None, "trust_offset": "fail", "trust_slot": "warn", "trust_greater_lsn": "warn"}

RULES: dict[str, Rule] = {**{name: rule for name, (rule, _) in INERT.items() if rule is not None},
                          "offset.mismatch.strategy": one_of(*MISMATCH_STRATEGY)}


def problems(props: Mapping[str, str]) -> list[str]:
    """One line per value Connect or Debezium would refuse, or pgcdc cannot honour, naming property and value."""
    out = refused(RULES, props)
    if props.get("snapshot.query.mode", "").strip().lower() == "custom":
        name = props.get("snapshot.query.mode.custom.name", "")
        if not name.strip():  # CommonConnectorConfig.SNAPSHOT_QUERY_MODE_CUSTOM_NAME's validator
            out.append("snapshot.query.mode.custom.name cannot be empty when snapshot.query.mode 'custom' is "
                       "defined")
        else:
            out.append(f"snapshot.query.mode.custom.name: not supported: a custom snapshot query is a Java plug-in "
                       f"pgcdc cannot load; remove it and snapshot.query.mode=custom, and set "
                       f"snapshot.select.statement.overrides instead (got {name!r})")
    if props.get("snapshot.mode", "").strip().lower() == "custom":
        out.append("snapshot.mode: custom runs a Java Snapshotter (snapshot.mode.custom.name) pgcdc cannot load; use "
                   "initial, always, initial_only, no_data, never, when_needed, or configuration_based with its "
                   "snapshot.mode.configuration.based.* settings")
    if props.get("snapshot.locking.mode", "").strip().lower() == "custom":
        out.append("snapshot.locking.mode: custom loads a Java class (snapshot.locking.mode.custom.name) pgcdc cannot "
                   "run; remove it (shared and none are accepted)")
    return out




def map_mismatch_strategy(props: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    if "offset.mismatch.strategy" not in props:
        return dict(props), []
    out = {k: v for k, v in props.items() if k != "offset.mismatch.strategy"}
    value = props["offset.mismatch.strategy"]
    if value.strip().lower() not in MISMATCH_STRATEGY:  # EnumeratedValue.parse: trimmed, any case
        return out, [f"offset.mismatch.strategy: must be one of {', '.join(MISMATCH_STRATEGY)} (got {value!r})"]
    policy = MISMATCH_STRATEGY[value.strip().lower()]
    own = props.get("pgcdc.offset.behind.slot")
    if policy is None:
        return out, []
    if own is not None and own.strip() != policy:
        return out, [f"offset.mismatch.strategy={value.strip()} means pgcdc.offset.behind.slot={policy}, but "
                     f"pgcdc.offset.behind.slot={own}: keep one"]
    return {**out, "pgcdc.offset.behind.slot": policy}, []


def map_offsets_topic(props: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Kafka Connect's `offsets.storage.topic` (KIP-618: the connector's own offsets topic, in Connect's format) is
    where pgcdc's Kafka offset store keeps them, so that pgcdc resumes where the Connect connector stopped: it becomes
    `offset.storage.topic` with `offset.storage=kafka`. A setting naming another store or topic is refused."""
    if "offsets.storage.topic" not in props:
        return dict(props), []
    from pgcdc.config import OFFSET_STORES  # config_load imports both; this module stays importable alone

    out = {k: v for k, v in props.items() if k != "offsets.storage.topic"}
    topic = props["offsets.storage.topic"].strip()
    if not topic:  # SourceConnectorConfig: ConfigDef.NonEmptyString
        return out, [f"offsets.storage.topic: must be non-empty (got {props['offsets.storage.topic']!r})"]
    other = props.get("offset.storage.topic")
    if other is not None and other.strip() != topic:
        return out, [f"offsets.storage.topic ({topic!r}) and offset.storage.topic ({other!r}) name different "
                     "offset topics: keep one"]
    store = props.get("offset.storage")
    if store is not None and OFFSET_STORES.get(store) != "kafka":
        return out, [f"offsets.storage.topic names a Kafka topic for the offsets but offset.storage={store}: "
                     "remove one"]
    if not (props.get("bootstrap.servers") or props.get("kafka.bootstrap.servers")):
        return out, ["offsets.storage.topic: the offsets topic needs bootstrap.servers; or remove it to keep the "
                     "offsets in a file"]
    return {**out, "offset.storage.topic": topic, "offset.storage": store or "kafka"}, []
