"""The schema registry client's settings from Confluent's converter options (pgcdc/converters/registry.py):
what each maps to, and the one-line refusals, with no registry needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.converters.registry import client_conf
from pgcdc.converters.settings import converter_specs
from pgcdc.errors import ConfigError

AVRO = "io.confluent.connect.avro.AvroConverter"


def _value_spec(**options: str) -> object:
    props = {"value.converter.schema.registry.url": "https://registry.test:8081",
             **{f"value.converter.{k}": v for k, v in options.items()}}
    return converter_specs({"value": AVRO}, props)["value"]


def test_bearer_static_token_and_timeouts() -> None:
    conf = client_conf(_value_spec(**{"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": "t0k",
                                      "http.connect.timeout.ms": "2000", "http.read.timeout.ms": "30000"}))
    assert conf == {"url": "https://registry.test:8081", "bearer.auth.credentials.source": "STATIC_TOKEN",
                    "bearer.auth.token": "t0k", "bearer.auth.logical.cluster": "", "timeout": 30.0}


def test_pem_keystore_text_goes_to_private_files() -> None:
    conf = client_conf(_value_spec(**{"schema.registry.ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----",
                                      "schema.registry.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----",
                                      "schema.registry.ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----x"}))
    for option in ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location"):
        path = Path(conf[option])
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert Path(conf["ssl.ca.location"]).read_text() == "-----BEGIN CERTIFICATE-----x"


@pytest.mark.parametrize(("options", "message"), [
    ({"bearer.auth.credentials.source": "SASL_OAUTHBEARER_INHERIT"},
     "value.converter.bearer.auth.credentials.source: only static_token is supported yet"),
    ({"bearer.auth.credentials.source": "STATIC_TOKEN"},
     "value.converter.bearer.auth.token: required with bearer.auth.credentials.source=STATIC_TOKEN"),
    ({"schema.registry.ssl.endpoint.identification.algorithm": ""},
     "value.converter.schema.registry.ssl.endpoint.identification.algorithm: only https is supported yet"),
    ({"schema.registry.ssl.truststore.type": "BCFKS"},
     "value.converter.schema.registry.ssl.truststore.type: only jks or pkcs12 or pem is supported yet"),
    ({"schema.registry.ssl.truststore.location": "/nonexistent/trust.p12"},
     "value.converter.schema.registry.ssl.truststore.location: cannot read /nonexistent/trust.p12"),
    ({"schema.registry.ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
     "value.converter.schema.registry.ssl.cipher.suites: is not supported yet by " + AVRO),
])
def test_refusals_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as failed:
        client_conf(_value_spec(**options))  # type: ignore[arg-type]
    assert str(failed.value).startswith(message), str(failed.value)


def test_a_truststore_that_is_not_pkcs12_with_that_password(tmp_path: Path) -> None:
    store = tmp_path / "trust.p12"
    store.write_bytes(b"\x30\x82garbage")
    with pytest.raises(ConfigError, match=r"^value.converter.schema.registry.ssl.truststore.location: cannot open "
                                          r".*trust.p12 as PKCS12 with the configured password"):
        client_conf(_value_spec(**{"schema.registry.ssl.truststore.location": str(store),  # type: ignore[arg-type]
                                   "schema.registry.ssl.truststore.password": "pw"}))
