"""PostgreSQL value conversion as data: (type, handling mode) -> converter, built once per relation.

A converter turns pgoutput's text form of one value into the Python object whose JSON is what Kafka Connect's
JsonConverter writes for Debezium's value (orjson.Fragment where the JSON must look like Java's output), and
carries the Connect schema of the field.
"""

from pgcdc.pgtypes.registry import Converter, Modes, converter_for

__all__ = ["Converter", "Modes", "converter_for"]
