"""Kafka Connect's ByteArrayConverter: a value whose Connect schema is bytes passes through as its bytes; any
other value stops the connector, as Connect's DataException stops its task."""

from __future__ import annotations

import base64
from typing import Any

from pgcdc.converters.settings import ConverterSpec
from pgcdc.errors import ConversionError

_CONNECT_CLASS = {"struct": "org.apache.kafka.connect.data.Struct", "string": "java.lang.String",
                  "array": "java.util.ArrayList", "map": "java.util.HashMap", "boolean": "java.lang.Boolean",
                  "int8": "java.lang.Byte", "int16": "java.lang.Short", "int32": "java.lang.Integer",
                  "int64": "java.lang.Long", "float": "java.lang.Float", "double": "java.lang.Double"}


class ByteArrayConverter:
    def __init__(self, spec: ConverterSpec) -> None:
        self.is_key = spec.is_key
        self.side = spec.side

    def prepare(self, schema: dict[str, Any] | None) -> Any:
        if schema is None or schema["type"] == "bytes":
            b64 = base64.b64decode
            return lambda topic, value: None if value is None else b64(value)
        cls = _CONNECT_CLASS.get(schema["type"], schema["type"])
        side = self.side

        def refuse(topic: str, value: Any) -> bytes | None:
            if value is None:
                return None
            raise ConversionError(f"{side}.converter: ByteArrayConverter is not compatible with objects of type "
                                  f"class {cls} (topic {topic}, schema {schema.get('name') or schema['type']})")
        return refuse

    def close(self) -> None:
        pass
