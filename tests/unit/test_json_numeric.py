"""JsonConverter's decimal.format=NUMERIC: BigDecimal.toString's text, decimals at any depth, schema defaults."""

from __future__ import annotations

import base64

import orjson
import pytest

from pgcdc.config import build_config
from pgcdc.converters.json_numeric import big_decimal_text, decimal_fixer, numeric_schema
from pgcdc.converters.sink import make_converters
from pgcdc.errors import ConfigError

# (unscaled, scale) -> new BigDecimal(BigInteger.valueOf(unscaled), scale).toString(), printed by JDK 17.
JAVA = [
    (150, 2, "1.50"), (-1, 2, "-0.01"), (0, 10, "0E-10"), (0, 0, "0"), (123, 10, "1.23E-8"), (5, 6, "0.000005"),
    (5, 7, "5E-7"), (-5, 7, "-5E-7"), (123456789, 3, "123456.789"), (1, -3, "1E+3"), (12, -1, "1.2E+2"),
    (0, -2, "0E+2"), (1000000, 6, "1.000000"), (1, 6, "0.000001"), (10, 7, "0.0000010"),
    (-123456789012345678901234567890123456789012, 20, "-1234567890123456789012.34567890123456789012"),
]
DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _b64(unscaled: int) -> str:
    return base64.b64encode(unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)).decode()


def _dec(scale: int, **extra: object) -> dict[str, object]:
    return {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": str(scale)}, **extra}


@pytest.mark.parametrize("unscaled, scale, text", JAVA)
def test_text_is_java_big_decimal_to_string(unscaled: int, scale: int, text: str) -> None:
    assert big_decimal_text(unscaled, scale) == text
    fix = decimal_fixer(_dec(scale))
    assert fix is not None
    assert orjson.dumps(fix(_b64(unscaled))).decode() == text


SCHEMA = {"type": "struct", "fields": [
    {"field": "id", "type": "int32"},
    {**_dec(2, optional=True, default=_b64(150)), "field": "d"},
    {"field": "arr", "type": "array", "optional": True, "items": _dec(3)},
    {"field": "m", "type": "map", "optional": True, "keys": {"type": "string"}, "values": _dec(1)},
    {"field": "km", "type": "map", "optional": True, "keys": _dec(0), "values": {"type": "string"}},
    {"field": "vs", "type": "struct", "optional": True, "name": "io.debezium.data.VariableScaleDecimal",
     "fields": [{"field": "scale", "type": "int32"}, {"field": "value", "type": "bytes"}]},
]}


def test_decimals_at_any_depth_become_numbers_and_nothing_else_changes() -> None:
    fix = decimal_fixer(SCHEMA)
    assert fix is not None
    value = {"id": 1, "d": _b64(-1), "arr": [_b64(1), None, _b64(-1234)], "m": {"a": _b64(5)},
             "km": [[_b64(42), "x"]], "vs": {"scale": 2, "value": _b64(150)}}
    text = orjson.dumps(fix(value)).decode()
    # VariableScaleDecimal's `value` is plain bytes, not the Decimal logical type: it stays base64.
    assert text == ('{"id":1,"d":-0.01,"arr":[0.001,null,-1.234],"m":{"a":0.5},"km":[[42,"x"]],'
                    f'"vs":{{"scale":2,"value":"{_b64(150)}"}}}}')
    assert orjson.dumps(fix({"id": 2, "d": None, "arr": None, "m": None, "km": None, "vs": None})) == \
        b'{"id":2,"d":null,"arr":null,"m":null,"km":null,"vs":null}'


def test_schema_defaults_become_numbers_in_a_copy() -> None:
    out = numeric_schema(SCHEMA)
    assert out is not SCHEMA and SCHEMA["fields"][1]["default"] == _b64(150)  # type: ignore[index]
    assert orjson.dumps(out["fields"][1]["default"]) == b"1.50"
    plain = {"type": "struct", "fields": [{"field": "id", "type": "int32", "default": 3}]}
    assert numeric_schema(plain) is plain
    assert decimal_fixer(plain) is None


def _config(**props: str) -> object:
    return build_config({"name": "n", "topic.prefix": "p", "database.hostname": "h", "database.user": "u",
                         "database.dbname": "d", "bootstrap.servers": "b:9", **props})


def test_numeric_makes_the_envelope_keep_the_schema_and_the_converter_drop_it() -> None:
    config = _config(**{"value.converter.decimal.format": "numeric", "value.converter.schemas.enable": "false"})
    assert config.value_converter_schemas_enable is True  # type: ignore[attr-defined]
    assert config.key_converter_schemas_enable is True  # type: ignore[attr-defined]
    key, value, header = make_converters(config, lambda: False)
    assert key is None and header is None and value is not None
    schema = {"type": "struct", "fields": [{**_dec(2), "field": "d"}]}
    assert value.prepare(schema)("t", {"d": _b64(150)}) == b'{"d":1.50}'
    base = _config(**{"value.converter.decimal.format": "BASE64"})
    assert make_converters(base, lambda: False) == (None, None, None)


def test_engine_prefix_reaches_key_value_and_header() -> None:
    config = _config(**{"converter.decimal.format": "NUMERIC", "converter.schemas.enable": "false"})
    key, value, header = make_converters(config, lambda: False)
    assert key is not None and value is not None and header is not None
    assert config.header_schemas is True  # type: ignore[attr-defined]
    schema = {"type": "struct", "fields": [{**_dec(0), "field": "k"}]}
    assert header.prepare(schema)("t", {"k": _b64(-3)}) == b'{"k":-3}'


@pytest.mark.parametrize("prop, cls", [
    ("value.converter.decimal.format", "io.confluent.connect.json.JsonSchemaConverter"),
    ("value.converter.decimal.format", "io.apicurio.registry.utils.converter.ExtJsonConverter")])
def test_converters_writing_the_payload_as_it_is_refuse_numeric(prop: str, cls: str) -> None:
    with pytest.raises(ConfigError, match=f"{prop}: NUMERIC is not supported yet by {cls.rsplit('.', 1)[1]}"):
        url = "apicurio.registry.url" if "apicurio" in cls else "schema.registry.url"
        _config(**{"value.converter": cls, prop: "NUMERIC", f"value.converter.{url}": "http://r"})
