"""Config loading and validation: every bad input gives one line naming the property."""

from __future__ import annotations

import json

import pytest

from pgcdc.config import build_config, env_overrides, load_config, parse_properties, read_config_file
from pgcdc.config_values import regex_items
from pgcdc.errors import ConfigError

BASE = {"topic.prefix": "dbserver1", "database.hostname": "127.0.0.1", "database.user": "u",
        "database.dbname": "inventory", "bootstrap.servers": "127.0.0.1:9092"}


def test_defaults_are_debeziums() -> None:
    c = build_config(BASE)
    assert (c.slot_name, c.publication_name, c.publication_autocreate_mode) == ("debezium", "dbz_publication",
                                                                               "all_tables")
    assert c.skipped_operations == frozenset({"t"})
    assert c.tombstones_on_delete and not c.provide_transaction_metadata
    assert (c.decimal_handling_mode, c.time_precision_mode, c.snapshot_mode) == ("precise", "adaptive", "initial")
    assert c.database_port == 5432 and c.status_update_interval_ms == 10_000


def test_connect_json_works_unchanged(tmp_path) -> None:
    connector = {"name": "inventory-connector", "config": {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector", "tasks.max": "1",
        "plugin.name": "pgoutput", "database.port": 5432,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": False, "kafka.acks": "all", "producer.override.linger.ms": "20",
        "heartbeat.interval.ms": "10000", "snapshot.fetch.size": "1000", **BASE}}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(connector))
    c = load_config(p, environ={})
    assert c.name == "inventory-connector"
    assert c.value_converter_schemas_enable is False and c.key_converter_schemas_enable is True
    assert c.kafka == {"acks": "all", "linger.ms": "20"}
    assert c.producer_config()["linger.ms"] == "20"


def test_producer_queue_bounded_in_bytes_like_buffer_memory() -> None:
    # The Java producer's buffer.memory default (32 MB), unless the config sets either name.
    assert build_config(BASE).producer_config()["queue.buffering.max.kbytes"] == "32768"
    assert build_config({**BASE, "producer.override.buffer.memory": "8388608"}).producer_config()[
        "queue.buffering.max.kbytes"] == "8192"
    assert build_config({**BASE, "kafka.queue.buffering.max.kbytes": "1024"}).producer_config()[
        "queue.buffering.max.kbytes"] == "1024"


def test_properties_and_yaml_and_env(tmp_path) -> None:
    props = tmp_path / "c.properties"
    props.write_text("# comment\n" + "\n".join(f"{k}={v}" for k, v in BASE.items()) + "\nslot.name = s1\n")
    assert load_config(props, environ={}).slot_name == "s1"
    y = tmp_path / "c.yaml"
    y.write_text("topic:\n  prefix: p\ndatabase:\n  hostname: h\n  user: u\n  dbname: d\n  port: 5433\n"
                 "bootstrap.servers: b:1\n")
    c = load_config(y, environ={"PGCDC_SLOT_NAME": "from_env", "PGCDC_DATABASE_PORT": "6000"})
    assert (c.topic_prefix, c.database_port, c.slot_name) == ("p", 6000, "from_env")


def test_parse_properties_continuations() -> None:
    assert parse_properties("a=1\nb : 2\nc=x\\\n  y\n! bang\n") == {"a": "1", "b": "2", "c": "xy"}


def test_env_overrides_ignore_tool_variables() -> None:
    assert env_overrides({"PGCDC_TOPIC_PREFIX": "x", "PGCDC_PG_BINDIR": "/b", "HOME": "/"}) == {"topic.prefix": "x"}


@pytest.mark.parametrize(("override", "message"), [
    ({"topic.prefx": "x"}, "unknown property 'topic.prefx' (did you mean 'topic.prefix'?)"),
    ({"snapshot.mode": "sometimes"}, "snapshot.mode: Input should be"),
    ({"database.port": "-1"}, "database.port: Input should be greater than 0"),
    ({"database.port": "abc"}, "database.port: Input should be a valid integer"),
    ({"skipped.operations": "c,x"}, "skipped.operations: unknown operation(s) x"),
    ({"table.include.list": "public.(a"}, "table.include.list: bad regular expression"),
    ({"slot.name": "Bad-Slot"}, "slot.name: String should match pattern"),
    ({"plugin.name": "decoderbufs"}, "plugin.name: Input should be 'pgoutput'"),
    ({"connector.class": "io.debezium.connector.mysql.MySqlConnector"}, "connector.class: must be"),
    ({"tasks.max": "2"}, "tasks.max: Input should be less than or equal to 1"),
    ({"database.server.name": "x"}, "database.server.name was replaced by topic.prefix in Debezium 2.0, which "
                                     "ignores it; remove it (topic.prefix is set)"),
    ({"transforms": "unwrap"}, "transforms.unwrap.type: required"),
    ({"transforms": "a", "transforms.a.type": "io.debezium.transforms.TimezoneConverter",
      "transforms.a.converted.timezone": "UTC", "transforms.a.include.list": "t"},
     "transforms.a.include.list: invalid format 't'"),
    ({"transforms": "a", "transforms.a.type": "io.debezium.transforms.ExtractNewRecordState",
      "transforms.a.nope": "1"}, "transforms.a.nope: unknown option for ExtractNewRecordState (accepted: "),
    ({"transforms": "a", "transforms.a.type": "io.debezium.transforms.ExtractNewRecordState",
      "transforms.a.delete.tombstone.handling.mode": "keep"},
     "transforms.a.delete.tombstone.handling.mode: expected one of drop, tombstone, rewrite"),
    ({"transforms": "a", "transforms.a.type": "io.debezium.transforms.ExtractNewRecordState",
      "transforms.a.drop.tombstones": "false"}, "transforms.a.drop.tombstones: removed in Debezium 3.x"),
    ({"transforms": "a", "transforms.a.type": "io.debezium.transforms.Filter"},
     "transforms.a.type: io.debezium.transforms.Filter needs a JVM scripting engine; use"),
    ({"transforms": "a,a"}, "transforms: duplicate alias 'a'"),
    ({"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.Filter",
      "transforms.a.predicate": "p"}, "transforms.a.predicate: 'p' is not listed in predicates"),
    ({"predicates": "p", "predicates.p.type": "x.Y"}, "predicates.p.type: unknown predicate 'x.Y'"),
    ({"transforms.b.type": "x"}, "transforms.b.type: transform 'b' is not listed in transforms"),
    ({"errors.tolerance": "some"}, "errors.tolerance: must be one of none, all"),
    ({"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
      "transforms.r.blacklist": "a"}, "transforms.r.blacklist: removed in Kafka Connect 4.0 (which ignores it); use"),
    ({"transforms": "a", "transforms.a.type": "no_such_module:f"},
     "transforms.a.type: cannot load the Python callable 'no_such_module:f'"),
    ({"value.converter": "io.apicurio.registry.utils.converter.ProtobufConverter"},
     "value.converter: io.apicurio.registry.utils.converter.ProtobufConverter is not supported yet"),
    ({"offset.storage": "com.example.Store"}, "offset.storage: unsupported offset store"),
    ({"publication.autocreate.mode": "filtered"}, "needs table.include.list or schema.include.list"),
    ({"tombstones.on.delete": "maybe"}, "tombstones.on.delete: Input should be a valid boolean"),
])
def test_bad_values_name_the_property(override: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, **override})
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(("prop", "value", "message"), [
    ("snapshot.mode", "never", "snapshot.mode: 'never' was replaced by no_data in Debezium 2.6, and Debezium 3.x "
                               "refuses it; use no_data"),
    ("snapshot.mode", " NEVER", "snapshot.mode: 'never' was replaced by no_data"),
    ("snapshot.mode", "initial!", "snapshot.mode: Input should be 'initial'"),
    ("database.sslmode", " disable", "database.sslmode: Input should be 'disable'"),  # the JDBC driver's refusal
])
def test_enumerated_values_refused_as_debezium_refuses_them(prop: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, prop: value})
    assert str(exc.value).startswith(message)


@pytest.mark.parametrize(("prop", "value", "expected"), [
    # enumerated values: EnumeratedValue.parse trims and ignores case; database.sslmode case only (the JDBC driver)
    ("snapshot.mode", "INITIAL", "initial"), ("snapshot.mode", " No_Data ", "no_data"),
    ("plugin.name", "PGOUTPUT", "pgoutput"), ("lsn.flush.mode", " Manual", "manual"),
    ("decimal.handling.mode", "STRING ", "string"),
    ("time.precision.mode", "Adaptive_Time_Microseconds", "adaptive_time_microseconds"),
    ("binary.handling.mode", "BASE64-URL-SAFE", "base64-url-safe"), ("interval.handling.mode", "\tstring", "string"),
    ("hstore.handling.mode", "MAP", "map"), ("schema.name.adjustment.mode", "Avro_Unicode", "avro_unicode"),
    ("field.name.adjustment.mode", " AVRO ", "avro"), ("database.sslmode", "VERIFY-FULL", "verify-full"),
    # booleans: true or false in any case, blanks ignored; integers: Java's parseInt
    ("tombstones.on.delete", "FALSE", False), ("tombstones.on.delete", " true ", True),
    ("provide.transaction.metadata", "True", True), ("key.converter.schemas.enable", "\tfalse", False),
    ("heartbeat.interval.ms", "+1000", 1000), ("heartbeat.interval.ms", "-0", 0), ("snapshot.max.threads", "02", 2),
    ("offset.flush.interval.ms", " 500 ", 500),  # Kafka Connect's setting: ConfigDef trims
    ("metrics.port", "9090", 9090), ("database.port", "65535", 65535), ("snapshot.fetch.size", "0", 0),
])
def test_values_as_debezium_reads_them(prop: str, value: str, expected: object) -> None:
    config = build_config({**BASE, prop: value})
    assert getattr(config, prop.replace(".", "_")) == expected


@pytest.mark.parametrize(("prop", "value", "kind"), [
    ("tombstones.on.delete", "yes", "boolean"), ("tombstones.on.delete", "0", "boolean"),
    ("include.unknown.datatypes", "on", "boolean"), ("tombstones.on.delete", "", "boolean"),
    ("heartbeat.interval.ms", "1_000", "integer"), ("heartbeat.interval.ms", " 1000", "integer"),
    ("snapshot.max.threads", "2 ", "integer"), ("heartbeat.interval.ms", "1e3", "integer"),
    ("heartbeat.interval.ms", "", "integer"),
])
def test_booleans_and_integers_refused_as_debezium_refuses_them(prop: str, value: str, kind: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, prop: value})
    assert str(exc.value).startswith(f"{prop}: Input should be a valid {kind}") and repr(value) in str(exc.value)


@pytest.mark.parametrize(("prop", "value", "refused"), [
    ("max.batch.size", " 10", True), ("max.batch.size", "+10", False), ("poll.interval.ms", "1_0", True),
    ("errors.retry.timeout", " -1 ", False),  # Kafka Connect's setting: ConfigDef trims
])
def test_accepted_properties_numbers_as_debezium_reads_them(prop: str, value: str, refused: bool) -> None:
    if refused:
        with pytest.raises(ConfigError, match=f"^{prop}: must be"):
            build_config({**BASE, prop: value})
    else:
        build_config({**BASE, prop: value})


def test_every_problem_is_reported_at_once() -> None:
    props = {**BASE, "topic.prefix": "", "database.port": "five", "max.batch.size": "-5", "topic.prefx": "x",
             "transforms": "unwrap"}
    with pytest.raises(ConfigError) as exc:
        build_config(props)
    problems = exc.value.problems
    assert len(problems) == 5, problems
    for name in ("topic.prefix:", "database.port:", "max.batch.size:", "'topic.prefx'", "transforms.unwrap.type:"):
        assert sum(name in p for p in problems) == 1, (name, problems)


def test_cross_checks_are_reported_together() -> None:
    props = {k: v for k, v in BASE.items() if k != "bootstrap.servers"}
    with pytest.raises(ConfigError) as exc:
        build_config({**props, "offset.storage": "kafka", "publication.autocreate.mode": "filtered"})
    assert [p.split(" ")[0] for p in exc.value.problems] == ["bootstrap.servers", "offset.storage=kafka",
                                                             "publication.autocreate.mode=filtered"]


def test_without_kafka_offsets_default_to_a_file() -> None:
    """The README's `sink.type=file` + `sink.file.path=-` works alone: Debezium's engine defaults offset.storage
    to its file store; pgcdc also names the file (offsets.dat in the working directory)."""
    props = {k: v for k, v in BASE.items() if k != "bootstrap.servers"}
    c = build_config({**props, "sink.type": "file", "sink.file.path": "-"})
    assert (c.offset_storage, c.offset_storage_file_filename) == ("file", "offsets.dat")
    c = build_config({**props, "sink.type": "file", "offset.storage":
                      "org.apache.kafka.connect.storage.FileOffsetBackingStore"})
    assert c.offset_storage_file_filename == "offsets.dat"
    assert build_config(BASE).offset_storage == "kafka"  # with Kafka, as before: Kafka Connect's topic store
    assert build_config({**BASE, "offset.storage.file.filename": "x"}).offset_storage == "kafka"


@pytest.mark.parametrize(("override", "message"), [
    # Debezium 3.6's field definitions (CommonConnectorConfig, PostgresConnectorConfig, EmbeddedEngineConfig).
    ({"max.batch.size": "-5"}, "max.batch.size: must be a positive integer (got '-5')"),
    ({"max.batch.size": "0"}, "max.batch.size: must be a positive integer"),
    ({"max.queue.size": "abc"}, "max.queue.size: must be a positive integer"),
    ({"max.queue.size": "100"}, "max.queue.size: must be larger than max.batch.size (100 <= 2048)"),
    ({"max.queue.size": "600", "max.batch.size": "600"}, "max.queue.size: must be larger than max.batch.size"),
    ({"max.queue.size.in.bytes": "-1"}, "max.queue.size.in.bytes: must be a non-negative integer"),
    ({"poll.interval.ms": "0"}, "poll.interval.ms: must be a positive integer"),
    ({"snapshot.delay.ms": "-1"}, "snapshot.delay.ms: must be a non-negative integer"),
    ({"xmin.fetch.interval.ms": "x"}, "xmin.fetch.interval.ms: must be a non-negative integer"),
    ({"offset.flush.timeout.ms": "0"}, "offset.flush.timeout.ms: must be a positive integer"),
    ({"topic.cache.size": "lots"}, "topic.cache.size: must be an integer"),
    ({"snapshot.locking.mode": "exclusive"}, "snapshot.locking.mode: must be one of shared, none, custom"),
    ({"snapshot.isolation.mode": "snapshot"}, "snapshot.isolation.mode: must be one of serializable"),
    ({"snapshot.query.mode": "all"}, "snapshot.query.mode: must be one of select_all, custom"),
    ({"snapshot.tables.order.by.row.count": "yes"}, "snapshot.tables.order.by.row.count: must be one of"),
    ({"incremental.snapshot.watermarking.strategy": "x"}, "incremental.snapshot.watermarking.strategy: must"),
    ({"schema.refresh.mode": "always"}, "schema.refresh.mode: must be one of columns_diff"),
    ({"schema.name.adjustment.mode": "ascii"}, "schema.name.adjustment.mode: must be one of none, avro"),
    ({"field.name.adjustment.mode": "ascii"}, "field.name.adjustment.mode: must be one of none, avro"),
    ({"event.processing.failure.handling.mode": "retry"}, "event.processing.failure.handling.mode: must be"),
    ({"incremental.snapshot.allow.schema.changes": "maybe"}, "incremental.snapshot.allow.schema.changes: must"),
    ({"database.tcpKeepAlive": "on"}, "database.tcpKeepAlive: must be true or false"),
    ({"errors.tolerance": "some"}, "errors.tolerance: must be one of none, all"),
    ({"errors.log.enable": "yes"}, "errors.log.enable: must be true or false"),
    ({"errors.retry.timeout": "1m"}, "errors.retry.timeout: must be an integer"),
    ({"custom.metric.tags": "a"}, "custom.metric.tags: must be comma-separated key=value pairs"),
    ({"replica.identity.autoset.values": "public.t:ALL"}, "replica.identity.autoset.values: entry 'public.t:ALL'"),
    # Implemented properties whose format or range the model's types did not express.
    ({"message.key.columns": "public.t"}, "message.key.columns: entry 'public.t' must be <table regex>:<column>"),
    ({"message.key.columns": "public.t:a;s.u"}, "message.key.columns: entry 's.u'"),
    ({"table.include.list": "public.a", "table.exclude.list": "public.b"},
     "table.include.list and table.exclude.list cannot both be set"),
    ({"schema.include.list": "a", "schema.exclude.list": "b"},
     "schema.include.list and schema.exclude.list cannot both be set"),
    ({"retriable.restart.connector.wait.ms": "0"}, "retriable.restart.connector.wait.ms: Input should be greater"),
])
def test_accepted_properties_values_are_checked_as_debezium_does(override: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, **override})
    assert [message in p for p in exc.value.problems] == [True], exc.value.problems


@pytest.mark.parametrize("override", [
    {"max.batch.size": "100", "max.queue.size": "101"}, {"snapshot.locking.mode": "NONE"},
    {"incremental.snapshot.watermarking.strategy": "insert_delete"}, {"errors.retry.timeout": "-1"},
    {"replica.identity.autoset.values": "public.t:FULL, s.u:INDEX u_idx"}, {"custom.metric.tags": "k=v,a=b"},
    {"database.tcpKeepAlive": "TRUE"}, {"poll.interval.ms": "100"}, {"message.key.columns": "public.t:a,b;s.u:c"},
])
def test_accepted_properties_good_values_pass(override: dict[str, str]) -> None:
    build_config({**BASE, **override})


@pytest.mark.parametrize("missing", ["topic.prefix", "database.hostname", "database.user", "database.dbname"])
def test_missing_required(missing: str) -> None:
    props = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigError, match=f"^{missing}: required property is missing$"):
        build_config(props)


def test_kafka_sink_needs_bootstrap() -> None:
    props = {k: v for k, v in BASE.items() if k != "bootstrap.servers"}
    with pytest.raises(ConfigError, match="bootstrap.servers"):
        build_config(props)
    assert build_config({**props, "sink.type": "file", "offset.storage": "memory"}).sink_type == "file"
    assert build_config({**props, "kafka.bootstrap.servers": "k:1"}).bootstrap_servers == "k:1"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "config: [unclosed"])
def test_malformed_files(tmp_path, text: str) -> None:
    p = tmp_path / ("c.yaml" if text.startswith("config") else "c.json")
    p.write_text(text)
    with pytest.raises(ConfigError, match="malformed config file"):
        read_config_file(p)


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        read_config_file("/nonexistent/pgcdc.json")


def test_password_never_echoed() -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, "database.password": ["secret-value"]})  # type: ignore[dict-item]
    assert "secret-value" not in str(exc.value)


@pytest.mark.parametrize(("props", "table", "captured"), [
    ({}, ("public", "t"), True),
    ({"table.include.list": "public\\.a.*"}, ("public", "abc"), True),
    ({"table.include.list": "public\\.a.*"}, ("public", "b"), False),
    ({"table.exclude.list": "public\\.secret"}, ("public", "secret"), False),
    ({"schema.include.list": "app"}, ("public", "t"), False),
    ({"schema.exclude.list": "audit"}, ("audit", "log"), False),
])
def test_filters(props: dict[str, str], table: tuple[str, str], captured: bool) -> None:
    assert build_config({**BASE, **props}).captures(*table) is captured


def test_tooling_variables_are_not_properties() -> None:
    tooling = {"PGCDC_PG_VERSION": "13", "PGCDC_PG_CACHE": "x", "PGCDC_PG_BINDIR": "x", "PGCDC_TANSU_BIN": "x",
               "PGCDC_S3RVER_BIN": "x", "PGCDC_KAFKA_HOME": "x", "PGCDC_APICURIO_JAR": "x",
               "PGCDC_LOG_LEVEL": "debug", "PGCDC_TEST_CRASH_AFTER": "x", "PGCDC_SOAK_KILLS": "50"}
    assert env_overrides({**tooling, "PGCDC_TOPIC_PREFIX": "shop"}) == {"topic.prefix": "shop"}


@pytest.mark.parametrize(("value", "items"), [
    ("a,b", ("a", "b")), (" a , b ,,", ("a", "b")), ("", ()),
    ("public\\.t_[a-z]{1\\,2}", ("public\\.t_[a-z]{1,2}",)),  # an escaped comma belongs to the expression
    ("a\\.b,c\\,d", ("a\\.b", "c,d")), ("a\\\\,b", ("a\\\\", "b")),  # an escaped backslash does not escape
])
def test_regex_lists_split_as_debezium_splits_them(value: str, items: tuple[str, ...]) -> None:
    assert regex_items(value) == items


def test_a_regex_list_ending_in_a_backslash_is_refused() -> None:
    with pytest.raises(ValueError, match="unterminated escape sequence"):
        regex_items("a,b\\")
    with pytest.raises(ConfigError, match="^table.include.list: unterminated escape sequence at the end of the list"):
        build_config({**BASE, "table.include.list": "public.a\\"})


@pytest.mark.parametrize(("props", "heartbeat", "transaction"), [
    ({}, "__debezium-heartbeat.dbserver1", "dbserver1.transaction"),
    ({"topic.delimiter": "_"}, "__debezium-heartbeat_dbserver1", "dbserver1_transaction"),
    ({"topic.heartbeat.name": "hb-all", "topic.heartbeat.prefix": "ignored"}, "hb-all", "dbserver1.transaction"),
    ({"topic.heartbeat.name": "", "topic.heartbeat.prefix": "beat"}, "beat.dbserver1", "dbserver1.transaction"),
])
def test_heartbeat_and_transaction_topics(props: dict[str, str], heartbeat: str, transaction: str) -> None:
    config = build_config({**BASE, **props})
    assert (config.heartbeat_topic, config.transaction_topic) == (heartbeat, transaction)


@pytest.mark.parametrize(("prop", "value"), [
    ("topic.prefix", "db server"), ("topic.prefix", "ünï"), ("topic.delimiter", "/"), ("topic.delimiter", " "),
    ("topic.heartbeat.prefix", "hb x"), ("topic.transaction", "tx/x"), ("topic.heartbeat.name", "a,b"),
])
def test_topic_names_refused_as_debezium_refuses_them(prop: str, value: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config({**BASE, prop: value})
    assert str(exc.value) == (f"{prop}: {value} has invalid format (only the underscore, hyphen, dot and alphanumeric "
                              "characters are allowed)")
