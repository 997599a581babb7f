"""Column filters and privacy settings, and message prefix filters, compared with the real Debezium 3.x."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import assert_same
from tests.conformance.test_debezium_streaming import run_both

SETUP = (
    "CREATE TABLE f (id int PRIMARY KEY, name text, email varchar(80), secret text, note varchar(50),"
    " amount numeric(10,2), code char(6), title text NOT NULL DEFAULT 'none');"
    "CREATE TABLE g (id int PRIMARY KEY, keep int, drop_me int);"
    "ALTER TABLE g REPLICA IDENTITY FULL"
)
WORKLOAD = [
    "INSERT INTO f VALUES (1, 'Ada Lovelace', 'ada@example.com', 's3cret', 'a rather long note', 12.5,"
    " 'ABCDEF', 'Countess'), (2, NULL, NULL, NULL, NULL, NULL, NULL, 'x'), (3, '', 'é✓', 'x', 'short', 1, 'ab',"
    " 'ünïcode title')",
    "UPDATE f SET name = 'Ada King', note = 'tiny' WHERE id = 1",
    "DELETE FROM f WHERE id = 2",
    "INSERT INTO g VALUES (1, 10, 100)",
    "UPDATE g SET keep = 11, drop_me = 101 WHERE id = 1",
    "DELETE FROM g WHERE id = 1",
    "SELECT pg_logical_emit_message(true, 'skip.me', 'hidden')",
    "SELECT pg_logical_emit_message(false, 'keep.me', 'shown')",
    "SELECT pg_logical_emit_message(true, 'other', 'also')",
]

SCENARIOS = {
    "exclude_mask_hash_truncate": {
        "column.exclude.list": "public.f.secret,public.g.drop_me",
        "column.mask.with.8.chars": "public.f.name",
        "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "public.f.email",
        "column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K": "public.f.title",
        "column.truncate.to.5.chars": "public.f.note,public.f.code",
        "message.prefix.exclude.list": "skip\\..*",
    },
    # A comma after a backslash belongs to the regular expression (Debezium's Strings.RegExSplitter).
    "escaped_commas": {
        "table.include.list": "public\\.(f|h){1\\,1}, public\\.x",
        "column.include.list": "public\\.f\\.(id|na[m]{1\\,1}e|email|note)",
        "column.mask.with.8.chars": "public\\.f\\.(email|not[e]{1\\,2})",
        "message.prefix.include.list": "kee[p]{1\\,1}.*",
    },
    "include_and_md5": {
        "column.include.list": "public\\.f\\.(id|name|amount|code),public.g.id,public.g.keep",
        "column.mask.hash.MD5.with.salt.pepper": "public.f.name,public.f.code",
        "message.prefix.include.list": "keep.*,other",
    },
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_filters_match_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, scenario: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, SCENARIOS[scenario], WORKLOAD)
    assert_same(scenario, ours, theirs)


def test_filtered_snapshot_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path) -> None:
    pg.execute(SETUP, dbname)
    pg.execute(WORKLOAD[0], dbname)
    ours, theirs = run_both(pg, dbname, tmp_path, "SELECT 1", SCENARIOS["exclude_mask_hash_truncate"], [],
                            snapshot=True)
    assert_same("filtered snapshot", ours, theirs, snapshot=True)
