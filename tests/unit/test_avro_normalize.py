"""normalize.schemas=true: pgcdc's normalized schema text against Confluent 7.0.16's own AvroSchema.normalize(),
recorded from the JVM for every Avro schema of the recorded Debezium records and for special values
(tests/data/avro_normalize/record.py; NaN and infinite defaults are compared under Debezium instead)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from pgcdc.converters.avro_normalize import normalized_schema_text

PAIRS = json.loads(gzip.decompress((Path(__file__).parents[1] / "data" / "avro_normalize" /
                                    "normalized.json.gz").read_bytes()))


def test_every_recorded_schema_normalizes_as_confluent_does() -> None:
    assert len(PAIRS) > 250
    differ = [text for text, java in PAIRS if normalized_schema_text(text) != java]
    assert not differ, differ[:2]


def test_the_changes_normalizing_makes() -> None:
    """What the recorded pairs show, spelled out: properties sorted (a decimal's logical properties first, its
    scale among the others when 0), numbers keeping Java's text; a NaN default stays (measured under Debezium)."""
    text = ('{"type":"record","name":"V","fields":[{"name":"n","type":["null",{"type":"bytes","scale":0,'
            '"precision":5,"connect.version":1,"connect.parameters":{"scale":"0","connect.decimal.precision":"5"},'
            '"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null},'
            '{"name":"f","type":[{"type":"double","connect.default":"NaN"},"null"],"default":"NaN"},'
            '{"name":"g","type":{"type":"double","connect.default":1.0E20},"default":1.0E20}],"connect.name":"V"}')
    assert normalized_schema_text(text) == (
        '{"type":"record","name":"V","fields":[{"name":"n","type":["null",{"type":"bytes","logicalType":"decimal",'
        '"precision":5,"connect.name":"org.apache.kafka.connect.data.Decimal","connect.parameters":'
        '{"connect.decimal.precision":"5","scale":"0"},"connect.version":1,"scale":0}],"default":null},'
        '{"name":"f","type":[{"type":"double","connect.default":"NaN"},"null"],"default":"NaN"},'
        '{"name":"g","type":{"type":"double","connect.default":1.0E20},"default":1.0E20}],"connect.name":"V"}')
