"""CloudEvents records of pgcdc and Debezium compared (test_cloudevents_vs_debezium.py, and the unit tests on its
recordings): what is compared and what is masked is described there.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import fastavro

from pgcdc.converters.avro_schema import writer_schema
from pgcdc.converters.cloudevents import event_time
from tests.conformance.compare import SNAPSHOT_FIELDS, Num

MASKED_ATTRIBUTES = ("id", "time", *(f"iodebezium{f.replace('_', '')}" for f in SNAPSHOT_FIELDS))


class OurRegistry:
    def __init__(self, client: Any) -> None:
        self.client = client

    def __getitem__(self, schema_id: int) -> str:
        return str(self.client.get_schema(schema_id).schema_str)


def _avro(data: bytes, registry: Any) -> tuple[str, Any]:
    """(schema text, datum) of Confluent wire bytes; the bytes must be what the datum encodes to."""
    assert data[0] == 0, f"magic byte {data[0]}"
    text = registry[int.from_bytes(data[1:5], "big")]
    parsed = fastavro.parse_schema(writer_schema(text))
    datum = fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed, None)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    assert out.getvalue() == data[5:], "Avro bytes that are not what their datum encodes to"
    return text, datum


def normalized(data: str | None, options: dict[str, str], registry: Any, snapshot: bool) -> Any:
    """A record's value with registry ids replaced by schema texts and, in a snapshot, the slot-dependent
    attributes masked after checking `id` and `time` against the record's own attributes."""
    if data is None:
        return None
    raw = bytes.fromhex(data)
    if options.get("serializer.type") == "avro":
        text, event = _avro(raw, registry)
        event = {"schema": text, **event}
    else:
        event = json.loads(raw, parse_float=Num, parse_int=Num)
    if options.get("data.serializer.type") == "avro":
        data_bytes = event["data"] if isinstance(event["data"], bytes) else base64.b64decode(event["data"])
        # the data's schema text and Avro bytes (a datum can hold NaN, which equals nothing)
        event["data"] = (_avro(data_bytes, registry)[0], data_bytes[5:].hex())
        base, _, schema_id = event["dataschema"].rpartition("/")
        event["dataschema"] = (base, registry[int(schema_id)])
    if "iodebeziumname" in event:
        e = event
        assert e["id"] == f"name:{e['iodebeziumname']};lsn:{e['iodebeziumlsn'] or 'null'};txId:" \
                          f"{e['iodebeziumtxId'] or 'null'};sequence:{e['iodebeziumsequence'] or 'null'}", e["id"]
        assert e["time"] == event_time(int(e["iodebeziumtsms"])), e["time"]
        if snapshot and e.get("iodebeziumop") == "r":
            for k in MASKED_ATTRIBUTES:
                e[k] = "<masked>"
    elif snapshot:
        event["id"] = event["time"] = "<masked>"
    return event if (snapshot or options.get("serializer.type") == "avro" or
                     options.get("data.serializer.type") == "avro") else raw.decode()


def ce_differences(ours: list[Any], theirs: list[Any], options: dict[str, str], snapshot: bool) -> list[str]:
    problems = [] if len(ours) == len(theirs) else [f"record count {len(ours)} (pgcdc) != {len(theirs)} (Debezium)"]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        where = f"record {i} ({b['topic']})"
        if a["topic"] != b["topic"]:
            problems.append(f"{where}: topic {a['topic']} != {b['topic']}")
            continue
        for side in ("key", "value"):
            x = normalized(a[side], options, a["registry"], snapshot)
            y = normalized(b[side], options, b["registry"], snapshot)
            if x != y:
                problems.append(f"{where}: {side}: {first_difference(x, y)}")
    return problems


def assert_same_ce(label: str, ours: list[Any], theirs: list[Any], options: dict[str, str],
                   snapshot: bool = False) -> None:
    """pgcdc's records are Debezium's; each record: `topic`, `key`/`value` as hex, `registry` (id -> text)."""
    problems = ce_differences(ours, theirs, options, snapshot)
    events = sum(1 for r in theirs if r["value"] is not None)
    print(f"cloudevents {label}: {len(theirs)} Debezium records ({events} events), {len(ours)} pgcdc records, "
          f"{len(problems)} differences")
    assert events, "Debezium wrote no event"
    assert not problems, "\n".join(problems[:20])


def first_difference(x: Any, y: Any, path: str = "") -> str:
    """Where two normalized values first differ, and how (pgcdc's first)."""
    if isinstance(x, dict) and isinstance(y, dict):
        if list(x) != list(y):
            return f"{path or '/'}: keys {list(x)} != {list(y)}"
        return next((first_difference(x[k], y[k], f"{path}/{k}") for k in x if x[k] != y[k]), "")
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y):
        return next((first_difference(a, b, f"{path}/{i}") for i, (a, b) in enumerate(zip(x, y)) if a != b), "")
    if isinstance(x, str) and isinstance(y, str) and len(x) > 200:
        at = next((i for i, (a, b) in enumerate(zip(x, y)) if a != b), min(len(x), len(y)))
        return f"{path}: at {at}\n  ours   …{x[max(0, at - 100):at + 100]}\n  theirs …{y[max(0, at - 100):at + 100]}"
    return f"{path}: {x!r} != {y!r}"
