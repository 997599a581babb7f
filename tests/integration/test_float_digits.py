"""Every digit of real and double precision values, snapshotted and streamed, on whichever PostgreSQL major the
tier runs: before 12 the server prints 15 and 6 significant digits unless asked for more (extra_float_digits),
which lost precision (0.30000000000000004 became 0.3) and turned the largest double into an invalid JSON
number, `-Infinity`. Column values, array elements, points and column defaults; exact values compared."""

from __future__ import annotations

import base64
import struct
from typing import Any

from pgcdc.local import PostgresCluster
from pgcdc.pgtypes.java_float import float32_text, to_float32
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_records

DOUBLES = [0.1 + 0.2, 1e23, -1.7976931348623157e308, 5e-324, 2 / 3, -123.456, 1e-7]
REALS = [0.1, 3.4028234663852886e38, 1.401298464324817e-45, 16777217.0, 2 / 3, -0.0]


def _real(v: float) -> float:
    """The value of Float.toString's text of the real nearest v (what a JSON reader gets back)."""
    return float(float32_text(to_float32(v)))


def _rows(first: int) -> list[str]:
    rows = []
    for i, (d, r) in enumerate(zip(DOUBLES, REALS + REALS[:1], strict=False)):
        rows.append(f"({first + i}, '{d!r}', '{r!r}', '{{{','.join(map(repr, DOUBLES))}}}', "
                    f"'{{{','.join(map(repr, REALS))}}}', '({d!r},{-d!r})')")
    return rows


def _check(records: list[dict[str, Any]], first: int) -> None:
    for i, record in enumerate(records):
        after = payload(record)["after"]
        d, r = DOUBLES[i], (REALS + REALS[:1])[i]
        assert after["id"] == first + i
        assert after["d"] == d, (after["d"], d)
        assert after["r"] == _real(r) and str(after["r"]) == str(_real(r)), (after["r"], r)
        assert after["ad"] == DOUBLES
        assert [str(x) for x in after["ar"]] == [str(_real(x)) for x in REALS]
        # a point: Debezium's io.debezium.data.geometry.Point, x and y beside their WKB
        assert (after["p"]["x"], after["p"]["y"]) == (d, -d)
        assert base64.b64decode(after["p"]["wkb"]) == struct.pack("<BIdd", 1, 1, d, -d)


def test_float_digits_snapshot_and_streaming(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE TABLE fl (id int PRIMARY KEY, d float8 DEFAULT 0.30000000000000004, "
               "r real DEFAULT 0.1, ad float8[], ar real[], p point)", dbname)
    pg.execute(f"INSERT INTO fl VALUES {', '.join(_rows(1))}", dbname)
    sink = MemorySink()
    n = len(DOUBLES)
    with Running(make_config(pg, dbname, **{"snapshot.mode": "initial"}), sink=sink):
        wait_records(sink, n)
        pg.execute(f"INSERT INTO fl VALUES {', '.join(_rows(100))}", dbname)
        records = wait_records(sink, 2 * n)
    snapshot, streamed = records[:n], records[n:2 * n]
    assert [payload(r)["op"] for r in records] == ["r"] * n + ["c"] * n
    _check(snapshot, 1)
    _check(streamed, 100)
    fields = {f["field"]: f for f in records[0]["value"]["schema"]["fields"][1]["fields"]}
    assert fields["d"]["default"] == 0.1 + 0.2
    assert fields["r"]["default"] == _real(0.1)
