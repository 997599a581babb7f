"""The examples in examples/ run as documented, against a real PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from pgcdc.local import PostgresCluster

ROOT = Path(__file__).resolve().parents[2]


def test_order_service_integration_tests_pass(pg: PostgresCluster, dbname: str) -> None:
    url = f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{dbname}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "examples/order_service", f"--pgcdc-postgres={url}",
                           "-p", "no:cacheprovider", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "3 passed" in proc.stdout


def test_embedded_consumer_mirrors_tables_into_sqlite(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute("CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(8,2)); "
               "INSERT INTO items SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 50) g", dbname)
    mirror = tmp_path / "mirror.db"
    cmd = [sys.executable, "examples/embedded_consumer.py", "--dsn", pg.dsn(dbname), "--sqlite", str(mirror),
           "--idle-exit", "3"]
    first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "applied 50 events" in first.stdout  # the initial snapshot
    pg.execute("UPDATE items SET price = 0 WHERE id <= 10; DELETE FROM items WHERE id > 40; "
               "INSERT INTO items VALUES (51, 'new', 9.99)", dbname)
    second = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "applied 31 events" in second.stdout  # 10 updates + 10 deletes + 10 tombstones + 1 insert, once
    with sqlite3.connect(mirror) as db:
        got = {json.loads(k)["id"]: json.loads(r) for k, r in db.execute("SELECT key, row FROM public_items")}
    want = {i: {"id": i, "name": n, "price": str(p)} for i, n, p in
            pg.execute("SELECT id, name, price FROM items", dbname)}
    assert got == want
