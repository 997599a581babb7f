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

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.file import FileSink
from pgcdc.sink.memory import MemorySink
from tests.conformance.compare import differences, load
from tests.conformance.oracle import read_records, start_oracle, stop_oracle
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
    "WAIT_BLOCKING",  # the blocking snapshot reads the current rows: the next change waits until it is done
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
        for image in (payload.get("after") or {}, payload.get("before") or {}):
            if UUID.match(str(image.get("id"))):
                image["id"] = UUID.sub(r"<uuid>-\1", image["id"])
                if image.get("data") is not None:  # the watermark's timestamps: their names only
                    image["data"] = sorted(json.loads(image["data"]))
    return rec


def run(pg: PostgresCluster, db: str, tmp_path: Path, debezium: bool,
        extra: dict[str, str] | None = None, case: tuple[str, list[str], dict[str, str], int] | None = None
        ) -> list[dict[str, Any]]:
    """The workload through Debezium or pgcdc; `extra`: more connector properties for both; `case`: another
    (setup, workload, properties, windows closed when done) than this module's."""
    setup, statements, base, windows = case or (SETUP, WORKLOAD, PROPS, 5)
    props = {**base, **(extra or {})}
    deletes = props.get("incremental.snapshot.watermarking.strategy", "").lower() == "insert_delete"
    pg.execute(setup, db)
    path = tmp_path / ("debezium.jsonl" if debezium else "pgcdc.jsonl")
    settle = 4.0

    def workload(snapshot_done: Any) -> None:
        for stmt in statements:
            if stmt == "WAIT":
                wait_for(snapshot_done, 120, "the incremental snapshot")
            elif stmt == "WAIT_BLOCKING":
                wait_for(lambda: path.exists() and re.search(r'"snapshot":\s*"last"', path.read_text()) is not None,
                         120, "the blocking snapshot")
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
        """The last window closed (at least `windows` windows) and nothing new for 3 s."""
        text = path.read_text() if path.exists() else ""
        n = text.count("\n")
        if n != seen["n"]:
            seen["n"], seen["since"] = n, time.monotonic()
        # A window closes with a close row, or (insert_delete) with its open row's delete.
        closes = (sum(1 for line in text.splitlines() if "dbz_signal" in line and re.search(r'"op":\s*"d"', line))
                  if deletes else text.count('"snapshot-window-close"'))
        return closes >= windows and time.monotonic() - seen["since"] > 3

    if debezium:
        oracle = start_oracle({"name": "oracle", "config": {
            **pg.connection_properties(db), **props, "slot.name": f"dbz_{db}", "publication.name": f"dbzpub_{db}"}},
            path)
        try:
            wait_for(lambda: slot_active(pg, f"dbz_{db}") or oracle.poll() is not None, 120, "Debezium to stream")
            assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
            workload(finished_and_quiet)
            stable()
        finally:
            stop_oracle(oracle, path)
    else:
        config = make_config(pg, db, **{**props, "name": "pgcdc", "slot.name": f"pgcdc_{db}",
                                        "publication.name": f"pgcdcpub_{db}"})
        with Running(config, sink=FileSink(str(path))) as r:
            inc = r.connector.capture.incremental  # type: ignore[union-attr]
            workload(lambda: finished_and_quiet() and not inc.running)
            stable()
    return load(path)


def run_both(pg: PostgresCluster, tmp_path: Path, extra: dict[str, str] | None = None, prefix: str = "inc",
             case: tuple[str, list[str], dict[str, str], int] | None = None
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pgcdc's records, Debezium's without heartbeats) of the workload, each in a database of its own."""
    dbs = []
    for who in ("dbz", "ours"):
        name = f"{prefix}_{who}_{time.time_ns() % 10**8}"
        pg.create_database(name)
        dbs.append(name)
    try:
        theirs = run(pg, dbs[0], tmp_path, debezium=True, extra=extra, case=case)
        ours = run(pg, dbs[1], tmp_path, debezium=False, extra=extra, case=case)
    finally:
        for name in dbs:
            pg.execute(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                       f"WHERE database = '{name}' AND NOT active")
            pg.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return ours, [r for r in theirs if not r["topic"].startswith("__debezium-heartbeat")]


@pytest.mark.parametrize("strategy", ["insert_insert", "insert_delete"])
def test_incremental_snapshot_records_match_debezium(pg: PostgresCluster, tmp_path: Path, strategy: str) -> None:
    ours, theirs = run_both(pg, tmp_path, {"incremental.snapshot.watermarking.strategy": strategy})
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
    if strategy == "insert_delete":  # each window ends with its open row's delete: no close rows
        signals = [(r["value"] or {}).get("payload", {}) for r in theirs if r["topic"].endswith("dbz_signal")]
        assert not any((p.get("after") or {}).get("type") == "snapshot-window-close" for p in signals)
        assert sum(1 for p in signals if p.get("op") == "d") >= 5
    print(f"incremental ({strategy}): {len(theirs)} Debezium records, {len(ours)} pgcdc records, "
          f"{len(problems)} differences")
    assert not problems, "\n".join(problems[:40])


def r_keys(records: list[dict[str, Any]], topic: str) -> list[tuple[Any, ...]]:
    return [(int(p["after"]["a"]), str(p["after"]["b"])) for r in records if r["topic"] == topic and r["value"]
            for p in [r["value"]["payload"]] if p["op"] == "r"]


INTEROP_SETUP = ("CREATE TABLE c2 (a bigint, b text, v int, PRIMARY KEY (a, b));"
                 "INSERT INTO c2 SELECT g / 10, 'k' || g, g FROM generate_series(1, 3000) g;" + SETUP.split(";")[-1])


def interop_props(pg: PostgresCluster, db: str, offsets: Path) -> dict[str, str]:
    return {**pg.connection_properties(db), "name": "interop", "topic.prefix": "dbserver1",
            "snapshot.mode": "no_data", "slot.name": f"s_{db}", "publication.name": f"p_{db}",
            "signal.data.collection": "public.dbz_signal", "incremental.snapshot.chunk.size": "50",
            "offset.storage.file.filename": str(offsets)}


def oracle_config(props: dict[str, str]) -> dict[str, Any]:
    return {"name": "interop", "config": {
        **props, "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.flush.interval.ms": "100"}}


def test_debezium_continues_a_pgcdc_incremental_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """pgcdc's offset carries Debezium's serialized keys: Debezium goes on after the last key pgcdc emitted."""
    pg.execute(INTEROP_SETUP, dbname)
    props = interop_props(pg, dbname, tmp_path / "offsets.dat")
    sink = FileSink(str(tmp_path / "pgcdc.jsonl"))
    with Running(make_config(pg, dbname, **{**props, "offset.storage": "file"}), sink=sink) as r:
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        pg.execute("INSERT INTO dbz_signal VALUES ('go', 'execute-snapshot', "
                   "'{\"data-collections\": [\"public.c2\"]}')", dbname)
        wait_for(lambda: inc.rows >= 500, 60, "500 snapshot rows")
        pg.execute("INSERT INTO dbz_signal VALUES ('p', 'pause-snapshot', NULL)", dbname)
        wait_for(lambda: inc.paused and inc.window is None, 30, "the pause")
        pg.execute("INSERT INTO dbz_signal VALUES ('marker', 'log', '{\"message\": \"x\"}')", dbname)
        wait_for(lambda: b'"marker"' in (tmp_path / "pgcdc.jsonl").read_bytes(), 30, "the marker")
        time.sleep(0.5)  # an offset flush after the marker's commit
    ours = r_keys(load(tmp_path / "pgcdc.jsonl"), "dbserver1.public.c2")
    out = tmp_path / "dbz.jsonl"
    proc = start_oracle(oracle_config(props), out)
    try:
        # Polled while the engine writes: read_records leaves out a record still being written.
        wait_for(lambda: lines(out) and b"snapshot-window-close" in out.read_bytes() and not proc.poll()
                 and '"r"' in out.read_text()
                 and len(r_keys(read_records(out), "dbserver1.public.c2")) >= 3000 - len(ours),
                 180, "Debezium to finish the snapshot")
    finally:
        stop_oracle(proc, out)
    theirs = r_keys(load(out), "dbserver1.public.c2")
    print(f"pgcdc emitted {len(ours)} rows up to {ours[-1]}; Debezium went on from {theirs[0]} with {len(theirs)}")
    expected = sorted(pg.execute("SELECT a, b FROM c2", dbname))
    assert sorted(ours + theirs) == expected  # every row once: Debezium started after pgcdc's last key


def test_pgcdc_continues_a_debezium_incremental_snapshot(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    """A Debezium offset mid-snapshot: pgcdc reads its serialized key and goes on from there."""
    pg.execute(INTEROP_SETUP, dbname)
    props = interop_props(pg, dbname, tmp_path / "offsets.dat")
    out = tmp_path / "dbz.jsonl"
    proc = start_oracle(oracle_config(props), out)
    try:
        wait_for(lambda: pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = 's_{dbname}'")
                 == [(True,)] or proc.poll() is not None, 120, "Debezium to stream")
        pg.execute("INSERT INTO dbz_signal VALUES ('go', 'execute-snapshot', "
                   "'{\"data-collections\": [\"public.c2\"]}')", dbname)
        wait_for(lambda: len(r_keys(read_records(out), "dbserver1.public.c2")) >= 300, 120, "Debezium's first rows")
    finally:
        stop_oracle(proc, out)
    theirs = r_keys(load(out), "dbserver1.public.c2")
    sink = MemorySink()
    with Running(make_config(pg, dbname, **{**props, "offset.storage": "file", "sink.type": "file"}), sink=sink) as r:
        inc = r.connector.capture.incremental  # type: ignore[union-attr]
        started_at = inc.key
        wait_for(lambda: inc.rows > 0 and not inc.running, 120, "pgcdc to finish the snapshot")
    ours = [tuple(p["after"][k] for k in ("a", "b")) for rec in sink.records
            if rec["topic"] == "dbserver1.public.c2" and rec["value"]
            for p in [rec["value"]["payload"]] if p["op"] == "r"]
    print(f"Debezium emitted {len(theirs)} rows up to {theirs[-1]}; pgcdc went on after {started_at} "
          f"with {len(ours)}")
    assert started_at is not None, "pgcdc did not read Debezium's key"
    expected = sorted(pg.execute("SELECT a, b FROM c2", dbname))
    assert set(ours + theirs) == set(expected)
    assert len(ours) < len(expected)  # not read again from the start
