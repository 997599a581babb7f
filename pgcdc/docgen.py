"""docs/configuration.md, generated from the config model: `python -m pgcdc.docgen > docs/configuration.md`.

Every row comes from `ConnectorConfig` (alias = Debezium's property name, default, Literal values, the field's
docstring) or from the accepted-but-inert names in `pgcdc/properties.py`; tests/unit/test_docs_config.py fails
when the committed file differs from what this prints.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Literal, get_args, get_origin

import annotated_types
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from pgcdc.config import (OFFSET_STORES, PASSTHROUGH_PREFIXES, SELECT_OVERRIDE_PREFIX, ConnectorConfig,
                          is_secret_property)
from pgcdc.properties import ACCEPTED_NOT_IMPLEMENTED, ACCEPTED_PREFIXES

COMMAND = "python -m pgcdc.docgen > docs/configuration.md"

# Properties Debezium's PostgreSQL connector does not have: pgcdc's own (besides the `pgcdc.` namespace).
PGCDC_ONLY = frozenset({"sink.type", "sink.file.path", "metrics.port", "metrics.host", "database.password.file"})


def _supported(alias: str) -> str:
    return "pgcdc only" if alias.startswith("pgcdc.") or alias in PGCDC_ONLY else "yes"


def _default(info: FieldInfo) -> str:
    value = info.default
    if value is PydanticUndefined:
        return "**required**"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (tuple, frozenset)):
        return f"`{','.join(sorted(value))}`" if value else "empty"
    if value == "":
        return "empty"
    return f"`{value}`"


def _bounds(info: FieldInfo) -> str:
    parts: list[str] = []
    for m in info.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if isinstance(m, getattr(annotated_types, attr.capitalize())):
                parts.append(f"{sign} {getattr(m, attr)}")
    if len(parts) == 2 and parts[0].startswith("≥") and parts[1].startswith("≤") and parts[0][2:] == parts[1][2:]:
        return f"= {parts[0][2:]}"
    return ", ".join(parts)


def _values(name: str, info: FieldInfo) -> str:
    ann = info.annotation
    optional = get_origin(ann) in (typing.Union, types.UnionType)
    args = [a for a in get_args(ann) if a is not type(None)] if optional else [ann]
    if name == "offset_storage":  # the validator also maps Kafka Connect's backing-store class names
        return " / ".join(f"`{k}`" for k in OFFSET_STORES if "." in k) + ", or `kafka` / `file` / `memory`"
    if len(args) == 1 and get_origin(args[0]) is Literal:
        return " / ".join(f"`{v}`" for v in get_args(args[0]))
    kind = args[0] if len(args) == 1 else ann
    if kind is bool:
        return "`true` / `false`"
    if kind is int:
        bounds = _bounds(info)
        return f"integer{' ' + bounds if bounds else ''}"
    if get_origin(kind) is tuple or name == "skipped_operations":
        return "comma-separated list"
    return "string"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference() -> str:
    out = [
        "# Configuration reference",
        "",
        f"Generated from the config model (`pgcdc/config.py`, `pgcdc/properties.py`) by `{COMMAND}`; a unit",
        "test fails when this file is stale. Do not edit it by hand.",
        "",
        "Property names are Debezium's: a Kafka Connect connector JSON (`{\"name\":…, \"config\":{…}}`), a flat JSON",
        "object, a `.properties` file or YAML (nested keys joined with dots) works unchanged. Every property can",
        "also be set as an environment variable `PGCDC_<PROPERTY>` (upper case, dots as underscores:",
        "`PGCDC_TOPIC_PREFIX`) or with `--set property=value`; the environment wins over the file, `--set` over",
        "both (the few camelCase names, all without effect, have no environment spelling). Unknown names are",
        "refused with a suggestion; so are values outside the listed ones. Debezium's listed values are read as",
        "Debezium reads them, case and surrounding blanks ignored (`INITIAL`, ` string `), `database.sslmode`",
        "case only, as PostgreSQL's JDBC driver; `snapshot.mode=never`, which Debezium 3.x refuses, is refused.",
        "A boolean is `true` or `false` in any case (not `yes`, `on` or `1`); an integer is digits with an optional",
        "sign, as Java parses it (not `1_000`, and not ` 2 `: Debezium does not trim numbers, Kafka Connect's own",
        "settings such as `offset.flush.interval.ms` are trimmed). A list of regular expressions is split at its",
        "commas as Debezium splits it: a comma after a backslash belongs to the expression (`t{1\\,3}`).",
        "",
        "**supported**: `yes` — Debezium's property, acted on as Debezium does (within the values listed);",
        "`pgcdc only` — pgcdc's own, Debezium has no such property; `accepted, no effect` — accepted so that",
        "Debezium's configuration works unchanged, logged as a warning at start-up, not acted on. Their values",
        "are still checked as Debezium 3.6 checks them (`pgcdc/config_values.py`: `max.batch.size=-5` is refused",
        "as Debezium refuses it), and every problem of a configuration is reported at once, one line each.",
        "",
        "## Properties",
        "",
        "| property | default | values | supported | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, info in ConnectorConfig.model_fields.items():
        if not info.alias:
            continue
        out.append(f"| `{info.alias}` | {_default(info)} | {_values(name, info)} | {_supported(info.alias)} | "
                   f"{_cell(info.description or '')} |")
    out += [
        "",
        "## Families of properties",
        "",
        "| property | supported | meaning |",
        "| --- | --- | --- |",
        f"| `{SELECT_OVERRIDE_PREFIX}<schema>.<table>` | yes | the SELECT that snapshots that table, for the "
        "tables named in `snapshot.select.statement.overrides` |",
        "| `kafka.bootstrap.servers` | yes | same as `bootstrap.servers` (Debezium Server's spelling) |",
        "| `column.mask.with.<N>.chars` | yes | columns (regexes of `<schema>.<table>.<column>`) written as N "
        "asterisks |",
        "| `column.mask.hash[.v2].<algorithm>.with.salt.<salt>` | yes | columns written as the hex digest of salt "
        "and value (v1: Java-serialized string, v2: UTF-8), cut to the column's length |",
        "| `column.truncate.to.<N>.chars` | yes | columns cut to N characters |",
    ]
    for prefix in PASSTHROUGH_PREFIXES:
        out.append(f"| `{prefix}*` | yes | passed to the Kafka producer (librdkafka) with the prefix removed, "
                   "e.g. `" + prefix + "compression.type` |")
    out += [
        "| `transforms`, `transforms.<alias>.*`, `predicates`, `predicates.<name>.*` | partly | single message "
        "transforms and predicates, read as Kafka Connect reads them; the transforms pgcdc has are listed under "
        "Single message transforms below, any other type is refused by name |",
        "| `errors.tolerance`, `errors.log.enable`, `errors.log.include.messages` | yes | a transform failing on a "
        "record: `none` stops the connector with one line naming the alias, `all` skips the record (logged when "
        "`errors.log.enable`) |",
        "| `topic.creation.default.partitions`, `topic.creation.default.replication.factor`, "
        "`topic.creation.groups`, `topic.creation.<group>.include`/`.exclude`/`.partitions`/`.replication.factor`, "
        "`topic.creation.<group>.<topic config>` | yes | Kafka Connect's topic creation (KIP-158): a topic that "
        "does not exist is created on its first record with the first matching group's settings (`default` matches "
        "every topic; -1: the broker's default), the group's other properties as its topic configs; any "
        "`topic.creation.*` property makes the default group's partitions and replication factor required "
        "(pgcdc/topic_creation); `topic.creation.enable` (a worker setting) and the properties of a group not in "
        "`topic.creation.groups` are accepted with no effect, as Kafka Connect does not read them |",
        "| `database.server.name` | refused | replaced by `topic.prefix` in Debezium 2.0 |",
        "| `converters`, `<name>.type`, `<name>.*` | refused (empty: accepted) | Debezium custom converters are Java "
        "classes pgcdc cannot run; a single message transform changes values after capture |",
        "| `post.processors`, `<name>.type`, `<name>.*` | refused (empty: accepted) | Debezium post processors "
        "(ReselectColumnsPostProcessor) are not supported; REPLICA IDENTITY FULL makes updates carry unchanged "
        "TOAST values |",
        "",
        "## Accepted, no effect",
        "",
        "Accepted with a warning at start-up, so a Debezium connector JSON keeps working; pgcdc does not act on "
        "them. A prefix (`errors.*`) covers the names of its family other than the properties listed above.",
        "",
        "| property | supported |",
        "| --- | --- |",
    ]
    aliases = {f.alias for f in ConnectorConfig.model_fields.values() if f.alias}
    for prop in sorted(ACCEPTED_NOT_IMPLEMENTED - aliases):
        out.append(f"| `{prop}` | accepted, no effect |")
    for prefix in sorted(ACCEPTED_PREFIXES):
        out.append(f"| `{prefix}*` | accepted, no effect |")
    out += _framework()
    out += _converters()
    secret_examples = sorted(p for p in (*aliases, *ACCEPTED_NOT_IMPLEMENTED) if is_secret_property(p))
    out += [
        "",
        "## Secrets",
        "",
        "The values of properties whose name contains `password`, `secret`, `sasl.jaas.config`, `ssl.key`, "
        "`user.info` or `auth.token` (here: "
        + ", ".join(f"`{p}`" for p in secret_examples) + ", and pass-through settings such as "
        "`kafka.sasl.password` or `kafka.ssl.key.pem`) are replaced by `***` in every log line and error message, "
        "and left out of the configuration's printed form. `database.password.file` (environment: "
        "`PGCDC_DATABASE_PASSWORD_FILE`) reads the password from a file instead; see `docs/security.md`.",
        "",
        *_transforms_section(),
    ]
    return "\n".join(out)


def _transforms_section() -> list[str]:
    from pgcdc.transforms.config import NOT_YET, SCRIPTING, TRANSFORMS
    from pgcdc.transforms.predicates import PREDICATES

    out = ["## Single message transforms", "",
           "`transforms=<alias>,…` with `transforms.<alias>.type`, `transforms.<alias>.predicate`, "
           "`transforms.<alias>.negate` and the transform's options, and `predicates=<name>,…` with "
           "`predicates.<name>.type` and its options, are read as Kafka Connect reads them and applied in order to "
           "every record (change events, tombstones, heartbeats, transaction metadata, logical-decoding messages), "
           "in the snapshot and while streaming, with the output Debezium 3.6 produces (compared record by record "
           "in `tests/conformance/test_transforms_vs_debezium.py`). An unknown type or option is refused with one "
           "line naming the alias and the accepted values. `transforms.<alias>.type=module:function` applies a "
           "Python callable taking and returning a `pgcdc.transforms.Record` (None drops it). A dropped or rerouted "
           "record never changes the stored or confirmed position.", "",
           "| type | options |", "| --- | --- |"]
    for name, (_, opts) in TRANSFORMS.items():
        out.append(f"| {name} | {', '.join(f'`{o}`' for o in opts) or '—'} |")
    for name in PREDICATES:
        out.append(f"| {name} (predicate) | {', '.join(f'`{o}`' for o in PREDICATES[name][1]) or '—'} |")
    out += ["", "ExtractNewRecordState's `drop.tombstones`, `delete.handling.mode`, `add.source.fields` and "
            "`operation.header` were removed in Debezium 3.x (which ignores them): pgcdc refuses them, naming the "
            "replacement. `replace.null.with.default` is accepted: the envelope's JSON already carries what it "
            "decides. InsertHeader's `value.literal` may be a string, boolean or integer (a literal Kafka Connect "
            "would parse as a decimal, date, array or map is refused).", "",
            "`pgcdc.spark` builds exact current-state tables from ExtractNewRecordState's records when they carry "
            "`__deleted`, `__lsn` and `__op` (`delete.tombstone.handling.mode=rewrite`, `add.fields=op,lsn`); other "
            "configurations are refused there unless asked for, see docs/spark.md \"Flattened records\".", "",
            "The outbox `io.debezium.transforms.outbox.EventRouter` behaves as Debezium 3.6.3 was measured to, "
            "including where that fails a record (which stops the connector unless `errors.tolerance=all`): with "
            "`table.expand.json.payload=true` a top-level JSON array or an integer beyond 64 bits fails the "
            "record; with `table.field.event.schema.version` the value schema is cached per version, so a later "
            "event of that version whose payload has another schema fails; a column named in "
            "`table.fields.additional.placement` that the table lacks fails the record even with "
            "`table.fields.additional.error.on.missing=false`. A payload that is not a JSON object or array, or "
            "an array of mixed types, stays the string it was (logged as a warning). "
            "`field.name.adjustment.mode` (none, avro, avro_unicode) renames the expanded payload's fields. "
            "TimestampRouter needs a record timestamp: Debezium's change events have none (it fails them, as "
            "Kafka Connect does); the outbox EventRouter sets one (`table.field.event.timestamp`, else `ts_ms`). "
            "ExtractChangedRecordState adds its headers to every change event (empty lists unless the event has "
            "`before` and `after`, i.e. an update under REPLICA IDENTITY FULL) and to the tombstone after a delete, "
            "as Debezium 3.6.3 does. PartitionRouting hashes string, integer, boolean, float, Decimal and bytes "
            "fields as Java's hashCode does (bytes as the ByteBuffer Debezium holds them in), or with "
            "`partition.hash.function=murmur` as Debezium's MurmurHash3 does (a string's UTF-8 bytes, anything "
            "else its Java hash code); a struct, array or Connect Date/Time/Timestamp field fails the record (Java "
            "hashes them through their schema or element classes), and a path through a null struct (`after.id` "
            "on a delete) fails the record as in Debezium: use `change.id`. ExtractField reads "
            "`field.syntax.version=V2` paths into nested structs (`outer.inner`, a backticked step may hold dots). "
            "Cast to float32 rounds to a Java float and writes it as JDK 17's Float.toString does (an integer "
            "float below 2^63 as its long digits with the insignificant ones rounded off: 9.0E9 is 8.9999995E9). "
            "HeaderToValue needs `header.converter.schemas.enable=true` (the header's "
            "schema becomes the field's) and follows Debezium's nesting rules, quirks included (a field whose name "
            "is a substring of a nested destination is descended into). TimestampConverter reads a field's type "
            "as Kafka Connect does: Connect's Timestamp/Date/Time by name, any other int64 as unix time in "
            "`unix.precision` (Debezium's MicroTimestamp included), a string through `format`, parsed as "
            "SimpleDateFormat.parse does (lenient: 2024-02-30 is March 1; blanks before a field skipped; text "
            "after the pattern ignored; Julian dates before 1582-10-15; two-digit years in the century starting "
            "80 years ago) with the letters y, M, d, H, h, k, K, m, s, S, a, X, Z and z (zones as offsets, GMT "
            "or UTC: another zone name, or a pattern with G, E, D, F, u, w, W, Y or L, fails the record with a line "
            "naming it); "
            "a value that does not match fails the record as in Kafka Connect. `format` writes "
            "SimpleDateFormat's letters G, y, Y, M, L, d, H, h, k, K, m, s, S, E, a, D, F, u, w, W, z, Z, X in UTC "
            "through "
            "GregorianCalendar, measured with Debezium 3.6.3 on snapshot and streaming records: Julian dates "
            "before 1582-10-15 (PostgreSQL's 0001-01-01 is `0001-01-03`), `y` the year of its era `G` (BC "
            "dates), years far beyond 9999 (an `infinity` timestamp, read as unix time, is year 294247), weeks as a "
            "JVM with the `en`/`en_US` default locale counts them (from Sunday, week 1 holds January 1: "
            "2020-12-28 is `2021-W01` with `YYYY-'W'ww`; see docs/compatibility.md); a timestamptz "
            "(a ZonedTimestamp string) is parsed with `format` whatever the target type, and `infinity` fails "
            "the record as in Kafka Connect; unix time "
            "read in seconds stops at the long range as TimeUnit does, a `Date` target's day count wraps as a Java "
            "int, and a `Date` of Long.MIN_VALUE milliseconds fails the record (its midnight is out of range). "
            "HeaderFrom "
            "and HeaderToValue fail a tombstone as Kafka Connect and Debezium do: filter tombstones first. "
            "Kafka Connect's transforms and predicates (`org.apache.kafka.connect.transforms.*`) get their settings "
            "trimmed, as ConfigDef trims every setting's text before parsing it (`\" cdc_$1 \"` is `cdc_$1`, a list "
            "`\" d , w \"` is `d` and `w`; measured with Debezium 3.6.3's Kafka Connect 4.3); Debezium's transforms "
            "read theirs as Debezium does. "
            "MaskField reads `replacement` as Kafka Connect does (measured with Debezium 3.6.3): trimmed, then "
            "`new BigDecimal(text)` for a numeric field, so `NaN`, `Infinity`, `1.5f` or `1_000` fail each record "
            "whose masked field is not null (a null passes); a float64 gets the nearest double (`-0.0` is `0.0`, "
            "BigDecimal having no negative zero, while `-1e-400` underflows to `-0.0`), a float32 that double "
            "rounded again to a float (`3.4028236E38` is `Infinity`), an integer the value truncated toward zero "
            "and narrowed as a Java cast (`70000.9` in an int16 is 4464). MaskField fails a tombstone as Kafka "
            "Connect does (a null value is no Map): filter tombstones first, as with HeaderFrom.", "",
            "Speed: a chain of one ExtractNewRecordState and any number of RegexRouters, without predicates, "
            "`add.headers`, `route.by.field`, `drop.fields.header.name`, `replace.null.with.default=false` or "
            "`add.fields` that read `before`/`after`, is compiled per topic and table version: inserts, updates "
            "and snapshot reads are written from the envelope's bytes without decoding them "
            "(`pgcdc/transforms/compiled.py`, the same bytes: tests/unit/test_transforms_compiled.py). Other "
            "chains, and the other records of these (deletes, tombstones, truncates, heartbeats, transaction "
            "metadata, messages), go through the transforms record by record, several times slower per record "
            "(benchmarks/README.md).", "",
            ("Refused as not supported yet: " + ", ".join(f"`{n}`" for n in NOT_YET) + ". " if NOT_YET else
             "") +
            "Scripting transforms (" + ", ".join(f"`{n}`" for n in SCRIPTING) + ") are refused, naming "
            "Kafka Connect's Filter with a predicate or a Python callable as the alternative.", ""]
    return out


def _framework() -> list[str]:
    from pgcdc import framework_properties as fp

    out = ["", "## Kafka Connect's connector properties and Debezium's internals", "",
           "Kafka Connect's connector-level properties and Debezium 3.6's properties that change nothing pgcdc "
           "does are accepted with a warning, their values checked as Kafka Connect's ConfigDef or Debezium checks "
           "them; where a value asks for something pgcdc does not do, it is refused with one line saying why and "
           "what to use instead (`pgcdc/framework_properties.py`; docs/migrating-from-debezium.md).", "",
           "| property | what pgcdc takes of it, and why |", "| --- | --- |",
           "| `offsets.storage.topic` | Kafka Connect's own offsets topic for this connector (KIP-618): pgcdc keeps "
           "the offsets there, in Connect's format, as `offset.storage.topic` with `offset.storage=kafka`, so it "
           "resumes where the Connect connector stopped; refused with a different `offset.storage.topic`, another "
           "`offset.storage` or no `bootstrap.servers` |",
           "| `offset.mismatch.strategy` | what a stored offset behind the slot's confirmed position does, as "
           "`pgcdc.offset.behind.slot`: `trust_offset` fails, `trust_slot` and `trust_greater_lsn` stream on from "
           "the slot, `no_validation` (Debezium's default) leaves `pgcdc.offset.behind.slot` as set; refused "
           "beside a `pgcdc.offset.behind.slot` that says otherwise |"]
    for name, (_, why) in sorted(fp.INERT.items()):
        out.append(f"| `{name}` | {_cell(why)} |")
    out.append(f"| `{fp.PREFIXES[0]}*` | the rest of the OpenLineage settings, inert without "
               "openlineage.integration.enabled |")
    out += ["", "Refused, as names nothing reads: " + "; ".join(_cell(why) for _, why in sorted(fp.REFUSED.items()))
            + "."]
    return out


def _converters() -> list[str]:
    from pgcdc.converters import settings as cs
    from pgcdc.converters.meaning import CLASS_MEANING, MEANING

    out = [
        "",
        "## Converters",
        "",
        "`key.converter`, `value.converter` and `header.converter` name Kafka Connect converter classes; a side's",
        "options are the properties under its prefix with the prefix removed (`value.converter.schemas.enable` is",
        "JsonConverter's `schemas.enable` for values). As in Debezium's engine, `converter.<option>` sets an option",
        "for every side whose converter has it, over the per-side property (`converter.schemas.enable=false`).",
        "An unknown class or option, or one not supported yet, stops the start with one line naming the property.",
        "",
        "JsonConverter is the envelope's own output (precomputed per table). Any other key or value converter",
        "gets each record with its Connect schema and converts it; header values reach the header converter with",
        "their schema the same way, and the offsets topic stays JSON whatever the converters. Confluent's",
        "AvroConverter writes Confluent's wire format (byte",
        "0, the 4-byte schema id, the Avro binary); the Avro schema is derived from the Connect schema as",
        "Confluent's AvroData does (`connect.name`, `connect.version`, `connect.parameters`, `connect.default`,",
        "`connect.doc`, namespaces from the Connect names, optional fields as unions with null, Connect's logical",
        "types), compared byte for byte with Confluent 7.0's converter (tests/conformance/test_avro_vs_debezium.py).",
        "A schema version is compiled and registered once per subject and process. While the registry cannot be",
        "reached or refuses a schema, the record waits: pgcdc retries with a growing pause (up to 30 s) and logs",
        "one line per attempt; nothing after it is written or confirmed.",
        "",
        "Confluent's JsonSchemaConverter (`io.confluent.connect.json.JsonSchemaConverter`) writes byte 0, the",
        "4-byte schema id and the value as JSON (the JsonConverter payload: bytes and decimals base64); the",
        "schema registered (schemaType JSON, under the subject strategy's name) is the JSON Schema Confluent's",
        "JsonSchemaData derives (`connect.type`, `connect.index`, `connect.version`, `connect.parameters`, the",
        "Connect name as `title`, optional schemas as `oneOf` with null), with its member order. Compared with",
        "Confluent 7.0.16's converter, built from its source, on the recorded records",
        "(tests/unit/test_confluent_jsonschema.py).",
        "",
        "StringConverter writes `String.valueOf(value)` as Kafka Connect does: for Debezium's structs that is",
        "`Struct.toString()` (`Struct{after=Struct{id=1,name=x},op=c,...}`: null fields left out, defaults not",
        "applied); SimpleHeaderConverter (a Connect worker's default header converter) writes",
        "`Values.convertToString` (`{\"id\":2}` for a `__debezium.newkey` header, plain text for a string",
        "header). The primitive converters (`org.apache.kafka.connect.converters.Double|Float|Integer|Long|Short|",
        "BooleanConverter`) write their one Java type big-endian, for values that single message transforms turn",
        "into that type (`ExtractField$Value`); Kafka's ByteArrayConverter and Debezium's BinaryDataConverter and",
        "ByteArrayConverter write a `bytes` value as it is (Debezium's ByteArrayConverter only a byte[], not a",
        "bytea column's ByteBuffer; Debezium's pass any other value to `delegate.converter.type`, configured with",
        "the `delegate.converter.type.*` options; docs/compatibility.md). A value a converter",
        "cannot write (a change event given to IntegerConverter) stops pgcdc at that record with one line naming",
        "side, topic, converter and the value's Java class, where Kafka Connect fails its task",
        "(`errors.tolerance` covers transforms only). Compared byte for byte with Kafka Connect 4.3's and",
        "Debezium 3.6.3's converter classes (tests/conformance/test_simple_converters_vs_debezium.py).",
        "",
        "Apicurio's AvroConverter (`io.apicurio.registry.utils.converter.AvroConverter`) follows Apicurio Registry's",
        "3.x serde (matched: 3.0.9; Debezium 3.6's `debezium/connect` image bundles 3.2.5, Debezium 3.4's 2.6.13):",
        "byte 0, the content id in 4 bytes, the Avro binary; the artifact `<topic>-key`/`<topic>-value` in the",
        "default group; the schema Apicurio's AvroData derives (the same as Confluent's, compared with Apicurio's own",
        "AvroData in tests/unit/test_apicurio_avro_data.py). Apicurio 2.x's framing is",
        "`apicurio.registry.use-id=globalId` with `apicurio.registry.id-handler=...Legacy8ByteIdHandler`. As",
        "Apicurio's resolver: auto-register first, else find-latest, else the schema must be registered already.",
        "",
        "Apicurio's ExtJsonConverter (`io.apicurio.registry.utils.converter.ExtJsonConverter`, same serde) writes",
        "`{\"schemaId\":<content id>,\"payload\":<the value as JsonConverter without schema>}` and registers the",
        "Connect schema, as JsonConverter's JSON, as a `KCONNECT` artifact (same artifact names and resolution",
        "order) through Apicurio's v3 API; the id is always the content id in the record, never in headers",
        "(compared with Apicurio 3.0.9's own class in tests/unit/test_apicurio_ext_json.py). Apicurio 3.0.9 has no",
        "`io.apicurio.registry.utils.converter.JsonConverter`; its `ProtobufConverter` is in no release up to",
        "3.3.1 (docs/compatibility.md).",
        "",
        "| class | sides | option | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for cls, options in cs.OPTIONS.items():
        sides = ", ".join(side for side, classes in cs._SIDE_CLASSES.items() if cls in classes)
        for i, name in enumerate(sorted(options)):
            first = cls if i == 0 else ""
            meaning = CLASS_MEANING.get((cls, name)) or MEANING.get(name, "")
            out.append(f"| {first} | {sides if i == 0 else ''} | `{name}` | {_cell(meaning)} |")
    out += ["", "Not supported yet (refused): " + ", ".join(f"`{c}`" for c in sorted(cs.NOT_YET)) + "."]
    return out


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
