"""Incremental and blocking snapshots and signals through the real Debezium 3.6 and through pgcdc: the same
records.

Each connector has its own copy of the database (both write watermark rows into their signal table, which
the other would otherwise see), so LSNs, transaction ids, the database name and times differ by nature and
are masked; so are the watermark rows' random ids and timestamps. Everything else is compared record by
record: which records, in which order (signal rows, window open, the chunk's `r` records, window close),
their keys, values, `source.snapshot: incremental`, null `lsn`/`txId` on `r` records, headers; a blocking
snapshot's records (initial-snapshot markers) between the signal row and the next change.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from pgcdc.local import PostgresCluster
from pgcdc.sink.file import FileSink
from tests.conformance.compare import differences, load
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import lines, slot_active
from tests.harness import Running, make_config, wait_for

SETUP = (
    "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 5) g;"
    "CREATE TABLE c2 (a int, b text, v int, PRIMARY KEY (a, b)); INSERT INTO c2 VALUES (1, 'x', 1), (1, 'y', 2),"
    " (2, 'a', 3);"
    "CREATE TABLE empty_t (id int PRIMARY KEY);"
    "CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
)
PROPS = {"topic.prefix": "dbserver1", "snapshot.mode": "no_data", "signal.data.collection": "public.dbz_signal",
         "incremental.snapshot.chunk.size": "2", "table.include.list": "public.t,public.c2,public.empty_t"}
WORKLOAD = [
    "INSERT INTO dbz_signal VALUES ('blk', 'execute-snapshot', '{\"data-collections\": [\"public.c2\","
    " \"public.t\"], \"type\": \"blocking\", \"additional-conditions\": [{\"data-collection\": \"public.c2\","
    " \"filter\": \"SELECT * FROM public.c2 WHERE v > 1\"}]}')",
    "INSERT INTO t VALUES (100, 'stream')",
    "INSERT INTO dbz_signal VALUES ('sig1', 'execute-snapshot', "
    "'{\"data-collections\": [\"public.t\", \"public.empty_t\", \"public.c2\"], \"type\": \"incremental\"}')",
    "WAIT",
    "INSERT INTO dbz_signal VALUES ('sig2', 'log', '{\"message\": \"hello\"}')",
    "INSERT INTO t VALUES (101, 'after')",
]
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-(open|close)$")


def mask(record: dict[str, Any]) -> dict[str, Any]:
    rec = json.loads(json.dumps(record))
    rec.pop("partition", None)
    for header in rec.get("headers", []):
        if header[0] == "__debezium.context.runId":
            header[1] = "<masked>"
    key = rec.get("key")
    if isinstance(key, dict) and isinstance(key.get("payload"), dict) and UUID.match(str(key["payload"].get("id"))):
        key["payload"]["id"] = UUID.sub(r"<uuid>-\1", key["payload"]["id"])
    value = rec.get("value")
    payload = value.get("payload") if isinstance(value, dict) else None
    if isinstance(payload, dict):
        for k in ("ts_ms", "ts_us", "ts_ns"):
            payload[k] = "<masked>"
        source = payload.get("source") or {}
        for k in ("ts_ms", "ts_us", "ts_ns", "lsn", "txId", "sequence", "db"):
            if source.get(k) is not None:  # null stays null: `r` records carry no lsn or txId
                source[k] = "<masked>"
        after = payload.get("after") or {}
        if UUID.match(str(after.get("id"))):
            after["id"] = UUID.sub(r"<uuid>-\1", after["id"])
            after["data"] = sorted(json.loads(after["data"]))  # the watermark's timestamps: their names only
    return rec


def run(pg: PostgresCluster, db: str, tmp_path: Path, debezium: bool) -> list[dict[str, Any]]:
    pg.execute(SETUP, db)
    path = tmp_path / ("debezium.jsonl" if debezium else "pgcdc.jsonl")
    settle = 4.0

    def workload(snapshot_done: Any) -> None:
        for stmt in WORKLOAD:
            if stmt == "WAIT":
                wait_for(snapshot_done, 120, "the incremental snapshot")
            else:
                pg.execute(stmt, db)
                time.sleep(0.5)

    def stable() -> None:
        last, since = -1, time.monotonic()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            n = lines(path)
            if n != last:
                last, since = n, time.monotonic()
            elif n and time.monotonic() - since > settle:
                return
            time.sleep(0.2)

    seen = {"n": -1, "since": time.monotonic()}

    def finished_and_quiet() -> bool:
        """The last window closed (at least 5 windows) and nothing new for 3 s."""
        text = path.read_text() if path.exists() else ""
        n = text.count("\n")
        if n != seen["n"]:
            seen["n"], seen["since"] = n, time.monotonic()
        return text.count('"snapshot-window-close"') >= 5 and time.monotonic() - seen["since"] > 3

    if debezium:
        oracle = start_oracle({"name": "oracle", "config": {
            **pg.connection_properties(db), **PROPS, "slot.name": f"dbz_{db}", "publication.name": f"dbzpub_{db}"}},
            path)
        try:
            wait_for(lambda: slot_active(pg, f"dbz_{db}") or oracle.poll() is not None, 120, "Debezium to stream")
            assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
            workload(finished_and_quiet)
            stable()
        finally:
            stop_oracle(oracle, path)
    else:
        config = make_config(pg, db, **{**PROPS, "name": "pgcdc", "slot.name": f"pgcdc_{db}",
                                        "publication.name": f"pgcdcpub_{db}"})
        with Running(config, sink=FileSink(str(path))) as r:
            inc = r.connector.capture.incremental  # type: ignore[union-attr]
            workload(lambda: finished_and_quiet() and not inc.running)
            stable()
    return load(path)


def test_incremental_snapshot_records_match_debezium(pg: PostgresCluster, tmp_path: Path) -> None:
    dbs = []
    for who in ("dbz", "ours"):
        name = f"inc_{who}_{time.time_ns() % 10**8}"
        pg.create_database(name)
        dbs.append(name)
    try:
        theirs = run(pg, dbs[0], tmp_path, debezium=True)
        ours = run(pg, dbs[1], tmp_path, debezium=False)
    finally:
        for name in dbs:
            pg.execute(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                       f"WHERE database = '{name}' AND NOT active")
            pg.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    theirs = [r for r in theirs if not r["topic"].startswith("__debezium-heartbeat")]
    shape = [(r["topic"].split(".")[-1], (r["value"] or {}).get("payload", {}).get("op")) for r in theirs]
    print("Debezium:", shape)
    assert ("t", "r") in shape and ("c2", "r") in shape, "Debezium emitted no incremental snapshot records"
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        problems += [f"record {i} ({b['topic']}): {d}" for d in differences(mask(a), mask(b))]
    # Within each connector, the `r` records of a window carry the sequence of the window's close row.
    for records in (ours, theirs):
        pending: list[str] = []
        for r in records:
            p = (r["value"] or {}).get("payload") or {}
            if p.get("op") == "r" and p["source"]["snapshot"] == "incremental":
                pending.append(p["source"]["sequence"])
            elif (p.get("after") or {}).get("type") == "snapshot-window-close":
                assert set(pending) <= {p["source"]["sequence"]}
                pending = []
    print(f"incremental: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert not problems, "\n".join(problems[:40])
