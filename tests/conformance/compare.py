"""Record-by-record comparison of pgcdc's output with Debezium's.

Both files are read with number literals kept as text, so `1.0E20` and `1e+20` differ as they would on the
wire. Masked before comparing: the envelope's processing timestamps (`ts_ms`/`ts_us`/`ts_ns` of the
payload, not of `source`) and the `__debezium.context.runId` header, which differ by nature.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


class Num(str):
    """A JSON number kept as its text."""


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line, parse_float=Num, parse_int=Num) for line in Path(path).read_text().split("\n")
            if line.strip()]


def mask(record: dict[str, Any], snapshot_fields: tuple[str, ...] = ()) -> dict[str, Any]:
    rec = json.loads(json.dumps(record))  # a deep copy (Num is a str: kept as text)
    value = rec.get("value")
    payload = value.get("payload", value) if isinstance(value, dict) else None
    if isinstance(payload, dict) and payload.get("op") == "r":
        for k in snapshot_fields:
            payload["source"][k] = "<masked>"
    if isinstance(payload, dict):
        for k in ("ts_ms", "ts_us", "ts_ns"):
            if k in payload and "op" in payload:
                payload[k] = "<masked>"
    if isinstance(payload, dict) and payload.get("status") == "END":
        # Debezium names message collections by a Java identity hash that changes every run.
        collections = payload.get("data_collections") or []
        for dc in collections:
            dc["data_collection"] = re.sub(r"@[0-9a-f]+$", "@<hash>", dc["data_collection"])
        if any(dc["data_collection"].endswith("@<hash>") for dc in collections):
            # That key's identity hash also decides its place in Debezium's HashMap: compare as a set.
            collections.sort(key=lambda dc: dc["data_collection"])
    for header in rec.get("headers", []):
        if header[0] == "__debezium.context.runId":
            header[1] = "<masked>"
    rec.pop("partition", None)
    return rec


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = []
        if list(ours) != list(theirs):
            out.append(f"{path or '/'}: keys {list(ours)} != {list(theirs)}")
        for k in theirs:
            if k in ours:
                out += differences(ours[k], theirs[k], f"{path}/{k}")
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [f"{path}: length {len(ours)} != {len(theirs)}: {ours!r} != {theirs!r}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{path}[{i}]")]
    if type(ours) is not type(theirs) or ours != theirs:
        return [f"{path}: {ours!r} != {theirs!r}"]
    return []


def compare(ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
            snapshot_fields: tuple[str, ...] = ()) -> list[str]:
    """Human-readable differences; empty when the outputs match record by record."""
    problems = []
    if len(ours) != len(theirs):
        problems.append(f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for d in differences(mask(a, snapshot_fields), mask(b, snapshot_fields)):
            problems.append(f"record {i} ({b.get('topic')}): {d}")
    return problems


# Each connector snapshots at its own slot's consistent point, so these fields differ by nature for `r` events.
SNAPSHOT_FIELDS = ("ts_ms", "ts_us", "ts_ns", "lsn", "sequence", "txId")


def assert_same(label: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], *,
                snapshot: bool = False) -> None:
    """Debezium emitted something and pgcdc emitted the same records; prints the counts for the run's log."""
    problems = compare(ours, theirs, snapshot_fields=SNAPSHOT_FIELDS if snapshot else ())
    print(f"{label}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, {len(problems)} differences")
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:40])
