"""An embedded consumer: change events of a PostgreSQL database kept as current-state tables in SQLite.

    python examples/embedded_consumer.py --dsn "host=... dbname=shop user=... password=..." --sqlite mirror.db

Each event is applied to SQLite and committed there first; only then is it committed to pgcdc, so the offset
(and the replication slot) never move past what SQLite holds. A crash replays at most the last uncommitted
events, which the upsert/delete below applies idempotently.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from typing import Any

from psycopg.conninfo import conninfo_to_dict

from pgcdc.embed import Engine, Event


def properties(dsn: str, name: str, offsets_file: str) -> dict[str, str]:
    info = conninfo_to_dict(dsn)
    return {
        "name": name, "topic.prefix": name,
        "database.hostname": str(info.get("host", "127.0.0.1")), "database.port": str(info.get("port", 5432)),
        "database.user": str(info.get("user", "postgres")), "database.password": str(info.get("password", "")),
        "database.dbname": str(info.get("dbname", "postgres")),
        "slot.name": f"{name}_slot", "publication.name": f"{name}_pub",
        "snapshot.mode": "initial", "decimal.handling.mode": "string",
        # Where the position lives between runs (Kafka Connect's file format, readable by Debezium too).
        "offset.storage": "file", "offset.storage.file.filename": offsets_file,
    }


def apply(db: sqlite3.Connection, event: Event) -> None:
    if event.kind != "change" or event.op == "t":
        return  # tombstones follow deletes; truncates are skipped by default
    table = f"{event.schema}_{event.table}"
    db.execute(f'CREATE TABLE IF NOT EXISTS "{table}" (key TEXT PRIMARY KEY, row TEXT NOT NULL)')
    key = json.dumps(event.key_values, sort_keys=True, default=str)
    if event.op == "d":
        db.execute(f'DELETE FROM "{table}" WHERE key = ?', (key,))
    else:
        row: dict[str, Any] = event.after or {}
        db.execute(f'INSERT INTO "{table}" VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET row = excluded.row',
                   (key, json.dumps(row, sort_keys=True, default=str)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--sqlite", required=True)
    parser.add_argument("--name", default="mirror")
    parser.add_argument("--idle-exit", type=float, default=None,
                        help="stop after this many seconds without events (default: run until interrupted)")
    args = parser.parse_args(argv)
    db = sqlite3.connect(args.sqlite)
    applied = 0
    with Engine(properties(args.dsn, args.name, args.sqlite + ".offsets")) as engine:
        for event in engine.events(timeout=args.idle_exit):
            apply(db, event)
            db.commit()
            event.commit()
            applied += 1
    print(f"applied {applied} events")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
