"""replica.identity.autoset.values and xmin.fetch.interval.ms through the real Debezium 3.6 and pgcdc.

replica.identity.autoset.values changes the tables themselves, so the two connectors cannot share a run: Debezium
runs alone first, the tables' identities are put back, then pgcdc runs alone with the same workload. Their records
are compared with the source position fields (lsn, txId, sequence, commit time) masked, as they come from
different transactions; the identities each run left in pg_class are compared too.

xmin.fetch.interval.ms: the two connectors run side by side, each with its own slot, so `source.xmin` (each
slot's catalog_xmin, which moves on as the slot confirms) is compared with what PostgreSQL reports for each
connector's own slot before and after the workload, and every other field record by record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


from pgcdc.local import PostgresCluster
from pgcdc.offsets.file import decode
from pgcdc.sink.file import FileSink
from tests.conformance.compare import assert_same, differences, load
from tests.conformance.oracle import start_oracle, stop_oracle
from tests.conformance.test_debezium_streaming import lines, run_workload, slot_active
from tests.harness import Running, make_config, wait_for

POSITION = ("lsn", "txId", "sequence", "ts_ms", "ts_us", "ts_ns", "xmin")

RESET = (
    "ALTER TABLE t1 REPLICA IDENTITY DEFAULT; ALTER TABLE t2 REPLICA IDENTITY FULL;"
    "ALTER TABLE t3 REPLICA IDENTITY DEFAULT; ALTER TABLE t4 REPLICA IDENTITY DEFAULT;"
    "ALTER TABLE t5 REPLICA IDENTITY DEFAULT; ALTER TABLE t6 REPLICA IDENTITY DEFAULT;"
    "ALTER TABLE t7 REPLICA IDENTITY DEFAULT; ALTER TABLE n1 REPLICA IDENTITY DEFAULT"
)
SETUP = (
    "CREATE TABLE t1 (id int PRIMARY KEY, v text, w int); CREATE TABLE t2 (id int PRIMARY KEY, v text, w int);"
    "CREATE TABLE t3 (id int PRIMARY KEY, v text NOT NULL, w int); CREATE UNIQUE INDEX t3_idx ON t3 (v);"
    "CREATE TABLE t4 (id int PRIMARY KEY, v text, w int); CREATE TABLE t5 (id int PRIMARY KEY, v text, w int);"
    "CREATE TABLE t6 (id int PRIMARY KEY, v text, w int); CREATE TABLE t7 (id int PRIMARY KEY, v text, w int);"
    "CREATE TABLE n1 (id int PRIMARY KEY, v text);" + RESET
)
TABLES = ("t1", "t2", "t3", "t4", "t5", "t6", "t7")
WORKLOAD = [
    *(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2)" for t in TABLES),
    *(f"UPDATE {t} SET w = 10 WHERE id = 1" for t in TABLES),
    *(f"DELETE FROM {t} WHERE id = 2" for t in TABLES),
    "INSERT INTO n1 VALUES (1, 'x')",
]
# t1 FULL; t2 back to DEFAULT by a regex; t3 a named index (not the primary key's); t4 two entries match (an
# error, left alone); t5 an index that does not exist (an error, left alone); t6 left alone too: Debezium's
# connection stays in the failed ALTER's aborted transaction; t7 matched by nothing; n1 NOTHING (inserts only:
# PostgreSQL refuses updates without an identity).
AUTOSET = ("public.t1:FULL,public\\.t2.*:DEFAULT,public.t3:INDEX t3_idx,public\\.t4:FULL,public\\.t[4]:NOTHING,"
           "public.t5:INDEX no_such_index,PUBLIC.T6:FULL,public.n1:NOTHING")


def identities(pg: PostgresCluster, dbname: str) -> dict[str, str]:
    rows = pg.execute("SELECT relname, relreplident::text FROM pg_class WHERE relname IN "
                      "('t1','t2','t3','t4','t5','t6','t7','n1') ORDER BY 1", dbname)
    return {str(r[0]): str(r[1]) for r in rows}


def masked(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for rec in records:
        value = rec.get("value")
        payload = value.get("payload", value) if isinstance(value, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("source"), dict):
            for k in POSITION:
                if k in payload["source"]:
                    payload["source"][k] = "<masked>"
    return records


def run_apart(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, reset: str, props: dict[str, str],
              workload: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str],
                                            dict[str, str]]:
    """Debezium alone, then (after `reset`) pgcdc alone: (ours, theirs, identities after ours, after theirs)."""
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "no_data", **props}
    oracle = start_oracle({"name": "oracle", "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}"}}, theirs_path)
    try:
        # The slot is active from its creation on; the identities are set when streaming starts, just before
        # Debezium logs "Processing messages".
        jvm_log = tmp_path / "debezium.jvm.log"
        streaming = lambda: jvm_log.exists() and "Processing messages" in jvm_log.read_text()  # noqa: E731
        wait_for(lambda: oracle.poll() is not None or streaming(), 120, "Debezium to stream")
        assert oracle.poll() is None, jvm_log.read_text()[-3000:]
        run_workload(pg, dbname, workload, lambda: lines(theirs_path), lambda: 10**9)
    finally:
        stop_oracle(oracle, theirs_path)
    after_theirs = identities(pg, dbname)
    pg.execute(reset, dbname)
    pg.execute("TRUNCATE " + ", ".join((*TABLES, "n1")), dbname)
    sink = FileSink(str(ours_path))
    config = make_config(pg, dbname, **{**common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                        "publication.name": f"pgcdcpub_{dbname}"})
    n = lines(theirs_path)
    with Running(config, sink=sink):
        run_workload(pg, dbname, workload, lambda: n, lambda: lines(ours_path))
    return masked(load(ours_path)), masked(load(theirs_path)), identities(pg, dbname), after_theirs


def test_replica_identity_autoset_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs, ident_ours, ident_theirs = run_apart(
        pg, dbname, tmp_path, SETUP, RESET, {"replica.identity.autoset.values": AUTOSET}, WORKLOAD)
    assert ident_theirs == {"n1": "n", "t1": "f", "t2": "d", "t3": "i", "t4": "d", "t5": "d", "t6": "d", "t7": "d"}
    assert ident_ours == ident_theirs
    assert_same("replica.identity.autoset.values", ours, theirs)
    assert len(theirs) == 7 * 5 + 1  # 2 inserts, an update, a delete and its tombstone per table; n1's insert
    full_before = [r["value"]["payload"]["before"] for r in theirs
                   if r["topic"] == "dbserver1.public.t1" and r["value"] and r["value"]["payload"]["op"] == "u"]
    assert full_before == [{"id": "1", "v": "a", "w": "1"}]


def test_lower_case_identity_fails_every_table_as_debezium(pg: PostgresCluster, dbname: str,
                                                           tmp_path: Path) -> None:
    """`full` passes the property's check, but Debezium's enum lookup is case-sensitive: no table changes."""
    ours, theirs, ident_ours, ident_theirs = run_apart(
        pg, dbname, tmp_path, SETUP, RESET, {"replica.identity.autoset.values": "public.t1:full,public.t6:FULL"},
        WORKLOAD)
    assert ident_theirs["t1"] == ident_theirs["t6"] == "d"
    assert ident_ours == ident_theirs
    assert_same("replica.identity.autoset.values lower case", ours, theirs)


def test_case_insensitive_names_and_primary_key_index_as_debezium(pg: PostgresCluster, dbname: str,
                                                                   tmp_path: Path) -> None:
    ours, theirs, ident_ours, ident_theirs = run_apart(
        pg, dbname, tmp_path, SETUP, RESET,
        {"replica.identity.autoset.values": "PUBLIC.T6:FULL,public.t7:INDEX t7_pkey"}, WORKLOAD)
    assert (ident_theirs["t6"], ident_theirs["t7"]) == ("f", "i")
    assert ident_ours == ident_theirs
    assert_same("replica.identity.autoset.values names", ours, theirs)
    assert len(theirs) == 7 * 5 + 1


XMIN_SETUP = ("CREATE TABLE x (id int PRIMARY KEY, v text); INSERT INTO x VALUES (1, 'a'), (2, 'b');"
              "CREATE TABLE y (id int PRIMARY KEY)")
XMIN_WORKLOAD = [
    "INSERT INTO x VALUES (3, 'c')",
    "BEGIN; UPDATE x SET v = 'z' WHERE id = 1; INSERT INTO y VALUES (1); COMMIT",
    "SELECT pg_logical_emit_message(true, 'px', 'hello')",
    "DELETE FROM x WHERE id = 2",
    "INSERT INTO y SELECT generate_series(2, 40)",
]


def catalog_xmin(pg: PostgresCluster, slot: str) -> int:
    return int(pg.execute(f"SELECT catalog_xmin::text FROM pg_replication_slots WHERE slot_name = '{slot}'")[0][0])


def split_xmin(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[str, Any]]]:
    """The records with source.xmin masked, and (op, xmin) of each record that has a source block."""
    seen = []
    for rec in records:
        value = rec.get("value")
        payload = value.get("payload", value) if isinstance(value, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("source"), dict):
            seen.append((payload.get("op"), payload["source"]["xmin"]))
            payload["source"]["xmin"] = "<masked>"
    return records, seen


def run_side_by_side(pg: PostgresCluster, dbname: str, tmp_path: Path, setup: str, props: dict[str, str],
                     workload: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """run_both with a snapshot, also giving each slot's catalog_xmin once both stream, before the workload."""
    pg.execute(setup, dbname)
    theirs_path, ours_path = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "initial", **props}
    oracle = start_oracle({"name": "oracle", "config": {
        **pg.connection_properties(dbname), **common, "slot.name": f"dbz_{dbname}",
        "publication.name": f"dbzpub_{dbname}", "offset.storage.file.filename": str(tmp_path / "dbz.offsets")}},
        theirs_path)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        assert oracle.poll() is None, (tmp_path / "debezium.jvm.log").read_text()[-3000:]
        config = make_config(pg, dbname, **{**common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                            "publication.name": f"pgcdcpub_{dbname}", "offset.storage": "file",
                                            "offset.storage.file.filename": str(tmp_path / "pgcdc.offsets")})
        with Running(config, sink=FileSink(str(ours_path))):
            before = {s: catalog_xmin(pg, s) for s in (f"dbz_{dbname}", f"pgcdc_{dbname}")}
            run_workload(pg, dbname, workload, lambda: lines(theirs_path), lambda: lines(ours_path))
    finally:
        stop_oracle(oracle, theirs_path)
    return load(ours_path), load(theirs_path), before


def test_xmin_fetch_interval_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    ours, theirs, slots = run_side_by_side(pg, dbname, tmp_path, XMIN_SETUP, {"xmin.fetch.interval.ms": "200"},
                                           XMIN_WORKLOAD)
    after = {s: catalog_xmin(pg, s) for s in (f"dbz_{dbname}", f"pgcdc_{dbname}")}
    ours, ours_xmin = split_xmin(ours)
    theirs, theirs_xmin = split_xmin(theirs)
    assert_same("xmin.fetch.interval.ms", ours, theirs, snapshot=True)
    assert len(theirs) == 2 + 1 + 2 + 1 + 2 + 39
    assert [op for op, _ in ours_xmin] == [op for op, _ in theirs_xmin]
    for label, seen, slot in (("Debezium", theirs_xmin, f"dbz_{dbname}"), ("pgcdc", ours_xmin, f"pgcdc_{dbname}")):
        assert [x for op, x in seen if op == "r"] == [None, None], label  # the snapshot's records have none
        streamed = [int(x) for op, x in seen if op != "r"]
        assert len(streamed) == len(seen) - 2 and all(isinstance(x, str) for op, x in seen if op != "r"), label
        assert all(slots[slot] <= x <= after[slot] for x in streamed), (label, slots[slot], streamed, after[slot])
    # The stored offsets carry the xmin too, in the place Debezium's HashMap gives it.
    dbz_offset, our_offset = (json.loads(next(iter(decode((tmp_path / f).read_bytes()).values())))
                              for f in ("dbz.offsets", "pgcdc.offsets"))
    assert "xmin" in dbz_offset and "xmin" in our_offset
    assert list(our_offset) == [k for k in dbz_offset if k in our_offset]
    assert slots[f"pgcdc_{dbname}"] <= our_offset["xmin"] <= after[f"pgcdc_{dbname}"]


def test_xmin_in_incremental_and_blocking_snapshots_matches_debezium(pg: PostgresCluster, tmp_path: Path) -> None:
    """The incremental-snapshot scenario of test_incremental_vs_debezium.py with xmin.fetch.interval.ms: which
    records carry an xmin (an integer) and which carry none, record by record."""
    from tests.conformance import test_incremental_vs_debezium as inc

    ours, theirs = inc.run_both(pg, tmp_path, {"xmin.fetch.interval.ms": "100"}, prefix="incx")

    def shape(records: list[dict[str, Any]]) -> list[tuple[str, Any, Any, str]]:
        out = []
        for r in records:
            p = (r["value"] or {}).get("payload") or {}
            if isinstance(p.get("source"), dict):
                x = p["source"]["xmin"]
                out.append((r["topic"], p.get("op"), p["source"]["snapshot"],
                            "null" if x is None else "int" if str(x).isdigit() else repr(x)))
        return out

    print("Debezium:", shape(theirs))
    assert any(s[1] == "r" and s[2] == "incremental" for s in shape(theirs))
    assert shape(ours) == shape(theirs)
    problems = [f"record {i} ({b['topic']}): {d}" for i, (a, b) in enumerate(zip(ours, theirs))
                for d in differences(inc.mask(split_xmin([a])[0][0]), inc.mask(split_xmin([b])[0][0]))]
    assert len(ours) == len(theirs) and not problems, "\n".join(problems[:40])
