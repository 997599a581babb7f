"""Connect JSON -> Python values for the embedding API, on every record of the Debezium golden captures.

Each decoded value is encoded back the way Debezium encodes it and must give the original JSON value: the
typed view loses nothing.
"""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest

from pgcdc.embed import Event

GOLDEN = sorted((Path(__file__).parent.parent / "data" / "debezium").rglob("*.jsonl"))
EPOCH = dt.datetime(1970, 1, 1)


def _unscaled(d: Decimal, scale: int) -> str:
    t = d.as_tuple()
    assert -t.exponent == scale, (d, scale)  # the decoded value keeps Debezium's scale
    n = int("".join(map(str, t.digits))) * (-1 if t.sign else 1)
    # Java's BigInteger.toByteArray(): minimal two's complement (-2^63 takes 8 bytes, not 9).
    return base64.b64encode(n.to_bytes((n + (n < 0)).bit_length() // 8 + 1, "big", signed=True)).decode()


def encode_back(schema: dict[str, Any], value: Any) -> Any:
    """Debezium's JSON encoding of a Python value of `schema` (the inverse of the decoder)."""
    name, kind = schema.get("name"), schema.get("type")
    if value is None:
        return None
    if name in PY_TYPES and not isinstance(value, PY_TYPES[name]):
        return value  # kept as its JSON value: out of Python's range (infinity, BC, 24:00)
    if name == "org.apache.kafka.connect.data.Decimal":
        return _unscaled(value, int(schema["parameters"]["scale"]))
    if name == "io.debezium.data.VariableScaleDecimal":
        scale = -value.as_tuple().exponent
        return {"scale": scale, "value": _unscaled(value, scale)}
    if name in ("io.debezium.time.Date", "org.apache.kafka.connect.data.Date"):
        return (value - EPOCH.date()).days
    if name in ("io.debezium.time.MicroTimestamp",):
        return (value - EPOCH) // dt.timedelta(microseconds=1)
    if name in ("io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp"):
        return (value - EPOCH) // dt.timedelta(milliseconds=1)
    if name == "io.debezium.time.MicroTime":
        return (dt.datetime.combine(EPOCH.date(), value) - EPOCH) // dt.timedelta(microseconds=1)
    if name in ("io.debezium.time.Time", "org.apache.kafka.connect.data.Time"):
        return (dt.datetime.combine(EPOCH.date(), value) - EPOCH) // dt.timedelta(milliseconds=1)
    if name == "io.debezium.time.MicroDuration":
        return value // dt.timedelta(microseconds=1)
    if name == "io.debezium.data.Uuid":
        return str(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "array":
        return [encode_back(schema["items"], v) for v in value]
    if kind == "map":
        return {k: encode_back(schema["values"], v) for k, v in value.items()}
    if kind == "struct":
        return {f["field"]: encode_back(f, value.get(f["field"])) for f in schema["fields"]}
    return value


def check(schema: dict[str, Any], value: Any, raw: Any) -> None:
    """The decoded value is the JSON value: encoded back it equals it (zoned times compare as instants)."""
    if raw is None:
        assert value is None
    elif schema.get("name") == "io.debezium.time.ZonedTimestamp" and isinstance(value, dt.datetime):
        assert value.tzinfo is not None and value == dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    elif schema.get("name") == "io.debezium.time.ZonedTime" and isinstance(value, dt.time):
        assert value.tzinfo is not None and value == dt.time.fromisoformat(raw.replace("Z", "+00:00"))
    elif schema.get("type") == "array":
        assert len(value) == len(raw)
        for v, r in zip(value, raw):
            check(schema["items"], v, r)
    else:
        assert encode_back(schema, value) == raw, (schema, value, raw)


PY_TYPES = {
    "org.apache.kafka.connect.data.Decimal": Decimal, "io.debezium.data.VariableScaleDecimal": Decimal,
    "io.debezium.time.Date": dt.date, "io.debezium.time.MicroTimestamp": dt.datetime,
    "io.debezium.time.Timestamp": dt.datetime, "io.debezium.time.ZonedTimestamp": dt.datetime,
    "io.debezium.time.MicroTime": dt.time, "io.debezium.data.Uuid": uuid.UUID,
    "io.debezium.time.MicroDuration": dt.timedelta, "io.debezium.time.Time": dt.time,
    "org.apache.kafka.connect.data.Time": dt.time, "org.apache.kafka.connect.data.Date": dt.date,
    "org.apache.kafka.connect.data.Timestamp": dt.datetime,
}


def change_records() -> list[Any]:
    out = []
    for path in GOLDEN:
        for n, line in enumerate(filter(None, path.read_text().split("\n"))):  # not splitlines: U+2028 in values
            rec = orjson.loads(line)
            v = rec["value"]
            if isinstance(v, dict) and "schema" in v and v["payload"].get("op") in ("c", "u", "d", "r"):
                out.append(pytest.param(rec, id=f"{path.stem}:{n}"))
    return out


@pytest.mark.parametrize("rec", change_records())
def test_typed_rows_round_trip_to_debezium_json(rec: dict[str, Any]) -> None:
    key = orjson.dumps(rec["key"]) if rec["key"] is not None else None  # None: a table without a key
    event = Event(None, 1, "change", rec["topic"], key, orjson.dumps(rec["value"]), [], None)
    fields = {f["field"]: f for f in rec["value"]["schema"]["fields"]}
    for side in ("before", "after"):
        row, raw = getattr(event, side), rec["value"]["payload"][side]
        if raw is None:
            assert row is None
            continue
        assert list(row) == list(raw)
        for col in fields[side]["fields"]:
            value = row[col["field"]]
            if value is not None and raw[col["field"]] == value and col.get("name") in PY_TYPES:
                continue  # a value kept as JSON: out of Python's range (infinity encodings, 24:00)
            expected = PY_TYPES.get(col.get("name"))
            if value is not None and expected is not None:
                assert isinstance(value, expected), (col, value)
            check(col, value, raw[col["field"]])
    assert event.op == rec["value"]["payload"]["op"]
    assert event.key_values == (rec["key"]["payload"] if rec["key"] is not None else None)


def test_golden_captures_are_present() -> None:
    assert len(change_records()) > 50
