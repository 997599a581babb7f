"""Both connectors' records through converters other than JsonConverter, as raw bytes (helpers of the
converter conformance tests).

The oracle converts each SourceRecord in the JVM with the converter classes a Kafka Connect worker would
instantiate (oracle.py, `"converters"`); pgcdc converts its records with its own converters behind its
ConvertingSink. Each side's lines: `{"topic", "key", "value", "key_error", "value_error", "headers":
[[name, hex, error], ...]}`, bytes as hex.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pgcdc.converters.sink import ConvertingSink, make_converters
from pgcdc.errors import PgcdcError
from pgcdc.local import PostgresCluster
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import run_workload, slot_active
from tests.harness import Running, make_config, wait_for


class RawSink:
    """Records as JSON lines with key, value and header values as hex."""

    def __init__(self, path: Path) -> None:
        self.out = open(path, "w")

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: Any = None,
             partition: int | None = None) -> None:
        self.out.write(json.dumps({
            "topic": topic, "key": key.hex() if key is not None else None,
            "value": value.hex() if value is not None else None,
            "headers": [[n, None if v is None else v.hex(), None] for n, v in headers or ()]}) + "\n")
        self.out.flush()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.out.close()


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().split("\n")[:-1]
            if line.strip() and '"topic": "__debezium-heartbeat' not in line]


def converter_props(sides: dict[str, dict[str, str]]) -> dict[str, str]:
    """The connector properties naming the same converters: `<side>.converter` and `<side>.converter.<opt>`."""
    props = {}
    for side, opts in sides.items():
        for k, v in opts.items():
            props[f"{side}.converter" if k == "class" else f"{side}.converter.{k}"] = v
    return props


RECORDED = Path(__file__).resolve().parents[1] / "data" / "converters"


def run_both_converted(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                       workload: list[str], sides: dict[str, dict[str, str]], snapshot: bool = False,
                       pgcdc_fails: bool = False, record_as: str | None = None
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """(pgcdc's lines, Debezium's lines, pgcdc's error line if it stopped). With PGCDC_RECORD_CONVERTERS=1 and
    `record_as`, Debezium's lines (with each side's JsonConverter form, the unit tests' input) and the sides are
    kept in tests/data/converters/<record_as>.*."""
    record = bool(os.environ.get("PGCDC_RECORD_CONVERTERS")) and record_as is not None
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial" if snapshot else "no_data", **props}
    oracle = start_oracle({"name": "oracle", "converters": {**sides, "record_json": record}, "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    error = None
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{
            **common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}", "publication.name": f"pgcdcpub_{dbname}",
            **converter_props(sides)})
        key_conv, value_conv, header_conv = make_converters(config, lambda: False)
        sink = ConvertingSink(RawSink(ours_path), key_conv, value_conv, header_conv)
        running = Running(config, sink=sink)
        running.__enter__()
        try:
            run_workload(pg, dbname, workload, lambda: len(lines(theirs_path)), lambda: len(lines(ours_path)),
                         lambda: running.error is not None)
        finally:
            try:
                running.stop()
            except PgcdcError as exc:
                if not pgcdc_fails:
                    raise
                error = str(exc)
    finally:
        stop_oracle(oracle, theirs_path)
    if record:
        RECORDED.mkdir(exist_ok=True)
        shutil.copy(theirs_path, RECORDED / f"{record_as}.jsonl")
        (RECORDED / f"{record_as}.sides.json").write_text(json.dumps(sides, indent=1) + "\n")
    return lines(ours_path), lines(theirs_path), error
