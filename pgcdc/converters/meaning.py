"""What each converter option does in pgcdc, for docs/configuration.md (pgcdc/docgen.py); the options
themselves and their checks are settings.py's."""

from __future__ import annotations

_A = "apicurio.registry."

# What each option does in pgcdc, for docs/configuration.md (pgcdc/docgen.py).
MEANING: dict[str, str] = {
    "converter.type": "set by a Connect worker; no effect",
    "schemas.enable": "JsonConverter: wrap in `{schema, payload}` (default true); other converters: no effect",
    "schemas.cache.size": "no effect (schemas are compiled once per version)",
    "decimal.format": "JsonConverter: `BASE64` (default) or `NUMERIC`, a Connect Decimal as a JSON number "
                      "(BigDecimal.toString's text, values and schema defaults); JsonSchemaConverter and "
                      "ExtJsonConverter: only `BASE64` (`NUMERIC` refused: decimal.handling.mode=string or double "
                      "writes decimals as text or numbers)",
    "replace.null.with.default": "JsonConverter: a null field whose schema has a default is written as the default "
                                 "(default true, KIP-581); false keeps the null",
    "converter.encoding": "StringConverter: the character set of the text (Java's names; default UTF-8)",
    "delegate.converter.type": "Debezium's BinaryDataConverter/ByteArrayConverter: the converter class of "
                               "values without a bytes schema, its options under `delegate.converter.type.`; "
                               "unset, such a value stops the connector",
    "schema.registry.url": "required; one or more comma-separated URLs (user:password@ in a URL is basic auth; "
                           "`mock://<scope>` is confluent-kafka's in-memory registry, for tests)",
    "auto.register.schemas": "register a record's schema (default true); false: look it up, it must be registered",
    "use.latest.version": "with auto.register.schemas=false: write with the subject's latest schema id (default "
                          "false; registering comes first, as in Confluent's serializers; ProtobufConverter: not yet "
                          "with auto.register.schemas=false)",
    "latest.compatibility.strict": "with use.latest.version: the registry must find the record's schema compatible "
                                   "with the latest (default true)",
    "key.subject.name.strategy": "TopicNameStrategy (default), RecordNameStrategy or TopicRecordNameStrategy "
                                 "(`io.confluent.kafka.serializers.subject.*`)",
    "value.subject.name.strategy": "as key.subject.name.strategy",
    "basic.auth.credentials.source": "`URL` (default: user info in the URL) or `USER_INFO`",
    "basic.auth.user.info": "`user:password` with basic.auth.credentials.source=USER_INFO (a secret)",
    "schema.registry.basic.auth.user.info": "same as basic.auth.user.info",
    "bearer.auth.credentials.source": "`STATIC_TOKEN`: send `bearer.auth.token` as `Authorization: Bearer` "
                                      "(SASL_OAUTHBEARER_INHERIT is refused: it needs Kafka's OAuth login)",
    "bearer.auth.token": "the token for STATIC_TOKEN (a secret)",
    "bearer.auth.logical.cluster": "Confluent Cloud's logical cluster, sent as `target-sr-cluster`",
    "bearer.auth.identity.pool.id": "Confluent Cloud's identity pool, sent as `Confluent-Identity-Pool-Id`",
    "http.connect.timeout.ms": "the registry request timeout (the larger of the two; default: none)",
    "http.read.timeout.ms": "as http.connect.timeout.ms",
    "schema.registry.ssl.truststore.location": "CAs to trust for an `https://` registry: PKCS12 or PEM (a JKS "
                                               "store is refused with the keytool line converting it)",
    "schema.registry.ssl.truststore.password": "the PKCS12 truststore's password",
    "schema.registry.ssl.truststore.type": "`JKS` (default; the file is read as what it is), `PKCS12` or `PEM`",
    "schema.registry.ssl.truststore.certificates": "CAs as PEM text, instead of a truststore file",
    "schema.registry.ssl.keystore.location": "client certificate and key for mutual TLS: PKCS12, or one PEM file",
    "schema.registry.ssl.keystore.password": "the PKCS12 keystore's password",
    "schema.registry.ssl.keystore.type": "as schema.registry.ssl.truststore.type",
    "schema.registry.ssl.key.password": "the PEM private key's password",
    "schema.registry.ssl.keystore.certificate.chain": "client certificate chain as PEM text (with keystore.key)",
    "schema.registry.ssl.keystore.key": "client private key as PEM text (with keystore.certificate.chain)",
    "schema.registry.ssl.endpoint.identification.algorithm": "only `https` (the default): the registry's host "
                                                             "name is checked against its certificate",
    "schema.registry.ssl.protocol": "no effect: Python's TLS negotiates the newest version both sides speak",
    "schemas.cache.config": "no effect (a schema version is compiled and registered once per process)",
    "max.schemas.per.subject": "no effect",
    "connect.meta.data": "AvroConverter: false leaves every `connect.*` property out of the schema (default true); "
                         "Apicurio's AvroConverter: only `true`",
    "enhanced.avro.schema.support": "AvroConverter: true or false, the same schemas for Debezium's records "
                                    "(measured; it changes only Avro enums and their docs, which Debezium's schemas "
                                    "do not have); Apicurio's AvroConverter: only `false`",
    "normalize.schemas": "AvroConverter: register (or look up) the schema as Confluent's AvroSchema.normalize() "
                         "writes it (properties sorted; measured) (default false); ProtobufConverter, "
                         "JsonSchemaConverter: only `false`",
    "avro.remove.java.properties": "AvroConverter: true or false, the same schemas (Debezium's have no "
                                   "`avro.java.string` property; measured)",
    "scrub.invalid.names": "AvroConverter: a record, namespace or field name Avro refuses is scrubbed as "
                           "Confluent's converter does (`c-1` -> `c_1`, `1st` -> `x1st`, `é` -> `_C3_A9`) instead "
                           "of stopping the connector (default false; not with use.latest.version and "
                           "auto.register.schemas=false); "
                           "ProtobufConverter: field, message and package names scrubbed as its ProtobufData does "
                           "(`c-1` -> `c_1`, `1st` -> `x1st`, `_ok` -> `x_ok`, `é` -> `_C3_A9`; default false); "
                           "JsonSchemaConverter: only `false`",
    "serializer.type": "CloudEvents: `json` (default) or `avro` (the event through the `avro.*` AvroConverter)",
    "data.serializer.type": "CloudEvents: the `data` attribute in `json` (default) or `avro` (Confluent wire "
                            "bytes, registered under `<topic>-data` with avro/avro, `<topic>` with json/avro)",
    "extension.attributes.enable": "CloudEvents: the `iodebezium*` attributes (op, each source field, the "
                                   "transaction) (default true)",
    "schema.cloudevents.name": "CloudEvents: the Avro event's schema name (default "
                               "`<topic.prefix>.<database>.CloudEvents.Envelope`)",
    "schema.name.adjustment.mode": "CloudEvents: adjustment of the event's schema name: `avro` (default), "
                                   "`avro_unicode`, `none`",
    "metadata.source": "CloudEvents: where `source`, `op`, `transaction` come from, `value` (default "
                       "`value,id:generate,type:generate,traceparent:header,dataSchemaName:generate`) or `header` "
                       "(headers the header converter wrote, e.g. by HeaderFrom: then `data` is the whole value); "
                       "`id:header`, `type:header` read those attributes from headers",
    "opentelemetry.tracing.attributes.enable": "CloudEvents: only `false` (Debezium reads `traceparent` from a "
                                               "header its tracing SMT writes)",
    "schema.data.name.source.header.enable": "CloudEvents: only `false`",
    "json.*": "CloudEvents: JsonConverter's options for the event and its `data` (`json.schemas.enable`: "
              "`data` as `{schema, payload}`, default true; `json.replace.null.with.default`, …)",
    "avro.*": "CloudEvents: the Avro converter's options. With `avro.apicurio.registry.url` (one URL, also "
              "written in `dataschema`) Apicurio's AvroConverter and its `avro.apicurio.registry.*` options "
              "(`auto-register` must be `true`); else Confluent's AvroConverter (`avro.schema.registry.url`, "
              "required with Avro, also written in `dataschema`; auth, subject strategies, …)",
    "enhanced.protobuf.schema.support": "true or false, the same schemas and bytes (measured; it changes only how "
                                        "Confluent's converter reads records back)",
    "optional.for.nullables": "true labels a nullable field that is not an array or a map `optional` (proto3 "
                              "presence; written `[deprecated = false]` as Confluent's does): a zero, empty or false "
                              "value is then written and a null is not (default false: a plain proto3 field)",
    "optional.for.proto2": "no effect (it changes only how records are read back; Confluent's default true)",
    "wrapper.for.nullables": "true writes a nullable scalar field, array item, map key or value as a google.protobuf "
                             "wrapper message (`Int32Value` for int8/16/32, `Int64Value`, `StringValue`, …; Connect's "
                             "Decimal, Date, Time, Timestamp keep their types), so a null differs from a zero "
                             "(default false)",
    "wrapper.for.raw.primitives": "no effect (pgcdc's records are structs, never raw primitives)",
    "skip.known.types": "only `true`, the default (well-known imports are not registered as references)",
    "reference.lookup.only": "no effect: with skip.known.types=true there are no references to look up",
    "object.additional.properties": "JsonSchemaConverter: false writes `\"additionalProperties\":false` in every "
                                    "object schema (default true)",
    "use.optional.for.nonrequired": "JsonSchemaConverter: no effect (reading only)",
    "json.fail.invalid.schema": "JsonSchemaConverter: only `false`, the default (with true Confluent's own fails "
                                "records holding a decimal, base64 against its `number` schema, or a NaN)",
    "json.indent.output": "JsonSchemaConverter: only `false`, the default (compact JSON)",
    "json.write.dates.iso8601": "JsonSchemaConverter: no effect (Connect values hold no Java dates by then)",
    "json.schema.spec.version": "JsonSchemaConverter: no effect (the schema comes from the Connect schema)",
    "json.oneof.for.nullables": "JsonSchemaConverter: no effect (as json.schema.spec.version)",
    "json.default.property.inclusion": "JsonSchemaConverter: not supported yet",
    "json.fail.unknown.properties": "JsonSchemaConverter: no effect (reading only)",
    "json.key.type": "JsonSchemaConverter: no effect (reading only)",
    "json.value.type": "JsonSchemaConverter: no effect (reading only)",
    _A + "url": "required; the registry's v2 or v3 API URL (or its root); pgcdc registers through its v3 API "
                "and looks schemas up through its Confluent-compatible API (`/apis/ccompat/v7`) under the same root",
    _A + "auto-register": "register the record's schema as a version of its artifact, its nested records "
                          "(`<topic>.Value`, the source block...) first as artifacts of their own that it "
                          "references, as Apicurio's serde does (default false: the schema must already be "
                          "registered, found by content with its references)",
    _A + "find-latest": "with auto-register=false: write with the artifact's latest version (default false)",
    _A + "use-id": "`contentId` (default) or `globalId` (read from the v3 API)",
    _A + "id-handler": "`io.apicurio.registry.serde.Default4ByteIdHandler` (default: magic byte, 4-byte id) or "
                       "`...Legacy8ByteIdHandler` (8-byte id, Apicurio 2.x's framing)",
    _A + "artifact-resolver-strategy": "`io.apicurio.registry.serde.strategy.TopicIdStrategy` (default: "
                                       "`<topic>-key`/`<topic>-value`) or `...SimpleTopicIdStrategy` (the topic)",
    _A + "headers.enabled": "the id in Kafka headers (`apicurio.<side>.contentId` or `.globalId`, 8 bytes, with "
                            "`apicurio.<side>.encoding: BINARY`) and the Avro binary alone as the record (default "
                            "false, as Apicurio 3.x; 2.x's default was true)",
    _A + "auth.username": "HTTP basic auth user (with auth.password); OAuth client options are refused",
    _A + "auth.password": "HTTP basic auth password (a secret)",
    _A + "artifact.artifact-id": "one artifact id for every record, instead of the strategy's",
    _A + "artifact.group-id": "only `default`",
    _A + "auto-register.if-exists": "only `FIND_OR_CREATE_VERSION`, the default",
    _A + "cache-latest": "no effect (a schema version is resolved once per process)",
    _A + "check-period-ms": "no effect (as cache-latest)",
    _A + "retry-count": "no effect: a registry that cannot be reached holds the stream and retries until it answers",
    _A + "retry-backoff-ms": "no effect (as retry-count)",
    _A + "avro.encoding": "only `BINARY`, the default",
    _A + "serde.validation-enabled": "no effect (pgcdc writes values of their own schema)",
}

_EXT_JSON = "io.apicurio.registry.utils.converter.ExtJsonConverter"
_NO_EFFECT = "no effect: ExtJsonConverter reads it but writes the content id in `schemaId` (as Apicurio 3.0.9's)"
# Where one class gives an option another meaning than MEANING's.
CLASS_MEANING: dict[tuple[str, str], str] = {
    (_EXT_JSON, _A + "url"): "required; the registry's v2 or v3 API URL (or its root); pgcdc talks to its v3 API "
                             "under the same root (a KCONNECT artifact has no Confluent-compatible form)",
    (_EXT_JSON, _A + "auto-register"): "register the record's schema (the Connect schema as JsonConverter's JSON, "
                                       "artifact type KCONNECT) as a version of its artifact (default false: the "
                                       "schema must already be registered, found by content)",
    (_EXT_JSON, _A + "use-id"): _NO_EFFECT,
    (_EXT_JSON, _A + "id-handler"): _NO_EFFECT,
    (_EXT_JSON, _A + "headers.enabled"): _NO_EFFECT + "; no Kafka headers are written",
    (_EXT_JSON, "schemas.enable"): "no effect: the payload is written without its schema (the registry holds it)",
    (_EXT_JSON, "replace.null.with.default"): "the payload's JsonConverter option (default true)",
}
