"""`pgcdc run` as users run it: a config file, env overrides, the file sink, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson

from pgcdc.local import PostgresCluster
from pgcdc.offsets.file import decode
from tests.harness import wait_for


def test_run_properties_file_sink_file_offsets_filtered_publication(pg: PostgresCluster, dbname: str,
                                                                    tmp_path: Path) -> None:
    pg.execute("CREATE TABLE wanted (id int PRIMARY KEY); CREATE TABLE other (id int PRIMARY KEY)", dbname)
    out = tmp_path / "events.jsonl"
    offsets = tmp_path / "offsets.dat"
    props = tmp_path / "c.properties"
    conn = pg.connection_properties(dbname)
    conn.pop("database.password")
    props.write_text("\n".join(f"{k}={v}" for k, v in {
        **conn, "name": "cli", "topic.prefix": "cli", "snapshot.mode": "no_data", "sink.type": "file",
        "sink.file.path": str(out), "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(offsets), "publication.autocreate.mode": "filtered",
        "table.include.list": "public\\.wanted", "slot.name": f"s_{dbname}", "publication.name": f"p_{dbname}",
    }.items()))
    env = {**os.environ, "PGCDC_DATABASE_PASSWORD": pg.password}
    proc = subprocess.Popen([sys.executable, "-m", "pgcdc.cli", "run", "--config", str(props)], env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: pg.execute(f"SELECT active FROM pg_replication_slots WHERE slot_name = 's_{dbname}'")
                 == [(True,)], 60, "streaming")
        assert pg.execute(f"SELECT tablename FROM pg_publication_tables WHERE pubname = 'p_{dbname}'",
                          dbname) == [("wanted",)]
        pg.execute("INSERT INTO other VALUES (1); INSERT INTO wanted VALUES (2)", dbname)
        wait_for(lambda: out.exists() and out.read_bytes().count(b"\n") >= 1, 30, "an event in the file")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    (line,) = out.read_bytes().splitlines()
    rec = orjson.loads(line)
    assert rec["topic"] == "cli.public.wanted" and rec["value"]["payload"]["after"] == {"id": 2}
    stored = orjson.loads(decode(offsets.read_bytes())[b'["cli",{"server":"cli"}]'])
    assert stored["messageType"] == "COMMIT" and stored["lsn"] == stored["lsn_commit"] == stored["lsn_proc"] > 0
    assert pg.password not in err
