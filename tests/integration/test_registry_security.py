"""TLS and bearer auth to a real schema registry: Apicurio Registry serving HTTPS only, with every path behind
Quarkus OIDC bearer auth (tokens signed here, verified by the registry against the JSON Web Key Set published on
a local HTTP server). Truststores as Kafka Connect users have them (PKCS12 made by openssl, JKS made by keytool,
PEM text); a wrong CA, a JKS store or a refused token each end the start with one line naming the setting,
before any slot or publication exists."""

from __future__ import annotations

import base64
import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pgcdc.errors import ConfigError
from pgcdc.local import ApicurioRegistry, KafkaBroker, PostgresCluster
from pgcdc.runner import Connector
from tests.harness import Running, wait_for
from tests.integration.test_avro_kafka import read_raw
from tests.integration.test_schema_registry import avro_config, decode
from tests.integration.test_tls import Certs, make_certs, openssl


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Issuer:
    """An RSA key, its JSON Web Key Set served over HTTP, and tokens signed with it (RS256)."""

    key: rsa.RSAPrivateKey
    jwks_url: str

    def token(self, subject: str = "pgcdc", lifetime_s: int = 3600) -> str:
        now = int(time.time())
        header = _b64(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
        claims = _b64(json.dumps({"sub": subject, "iat": now, "exp": now + lifetime_s}).encode())
        signature = self.key.sign(f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{claims}.{_b64(signature)}"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    jwks = json.dumps({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256",
                                 "n": _b64(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                                 "e": _b64(numbers.e.to_bytes(3, "big"))}]}).encode()

    class Keys(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(jwks)))
            self.end_headers()
            self.wfile.write(jwks)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Issuer(key, f"http://127.0.0.1:{server.server_port}/realm/certs")
    server.shutdown()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    folder = tmp_path_factory.mktemp("registry-certs")
    certs = make_certs(folder)
    openssl("pkcs12", "-export", "-nokeys", "-in", "ca.crt", "-out", "trust.p12", "-passout", "pass:trust-pw",
            cwd=folder)
    openssl("pkcs12", "-export", "-nokeys", "-in", "other-ca.crt", "-out", "other.p12", "-passout", "pass:pw",
            cwd=folder)
    proc = subprocess.run(["keytool", "-importcert", "-noprompt", "-storetype", "JKS", "-keystore", "trust.jks",
                           "-storepass", "trust-pw", "-file", "ca.crt", "-alias", "ca"], cwd=folder,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return certs


@pytest.fixture(scope="module")
def secure_registry(certs: Certs, issuer: Issuer) -> Iterator[ApicurioRegistry]:
    with ApicurioRegistry(tls=(certs.path("server.crt"), certs.path("server.key")),
                          jwks_url=issuer.jwks_url) as reg:
        yield reg


def _no_slot(pg: PostgresCluster, dbname: str) -> bool:
    return pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = 'slot_{dbname}'") == [] and \
        pg.execute("SELECT 1 FROM pg_publication", dbname) == []


def test_tls_and_bearer_token(pg: PostgresCluster, dbname: str, broker: KafkaBroker, certs: Certs,
                              issuer: Issuer, secure_registry: ApicurioRegistry) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY, v text)", dbname)
    topic = f"{dbname}.public.t"
    assert secure_registry.url.startswith("https://127.0.0.1:")
    token = issuer.token()
    config = avro_config(pg, dbname, broker, secure_registry.url, **{
        "converter.bearer.auth.credentials.source": "STATIC_TOKEN", "converter.bearer.auth.token": token,
        "converter.schema.registry.ssl.truststore.location": str(certs.path("trust.p12")),
        "converter.schema.registry.ssl.truststore.password": "trust-pw",
        "converter.schema.registry.ssl.truststore.type": "PKCS12"})
    with Running(config):
        pg.execute("INSERT INTO t VALUES (1, 'a')", dbname)
        wait_for(lambda: len(read_raw(broker.bootstrap_servers, topic, 5, to_end=False)) >= 1, 90, "1 record")
    decoded = decode(secure_registry.url, topic, read_raw(broker.bootstrap_servers, topic), {
        "ssl.ca.location": str(certs.ca), "bearer.auth.credentials.source": "STATIC_TOKEN",
        "bearer.auth.token": token, "bearer.auth.logical.cluster": ""})
    assert [d[1]["after"] for d in decoded] == [{"id": 1, "v": "a"}]


def test_pem_truststore_text_is_accepted(pg: PostgresCluster, dbname: str, broker: KafkaBroker, certs: Certs,
                                         issuer: Issuer, secure_registry: ApicurioRegistry) -> None:
    config = avro_config(pg, dbname, broker, secure_registry.url, **{
        "converter.bearer.auth.credentials.source": "STATIC_TOKEN", "converter.bearer.auth.token": issuer.token(),
        "converter.schema.registry.ssl.truststore.type": "PEM",
        "converter.schema.registry.ssl.truststore.certificates": certs.ca.read_text()})
    connector = Connector(config)  # the start-up probe reached the registry over TLS with the token
    for converter in connector.converters[:2]:  # key and value; no header converter
        assert converter is not None
        converter.close()


@pytest.mark.parametrize("case", ["wrong CA", "JKS store", "token of another key", "expired token", "no token"])
def test_refused_at_start_with_one_line_and_nothing_created(pg: PostgresCluster, dbname: str,
                                                            broker: KafkaBroker, certs: Certs, issuer: Issuer,
                                                            secure_registry: ApicurioRegistry, case: str) -> None:
    trust = {"converter.schema.registry.ssl.truststore.location": str(certs.path("trust.p12")),
             "converter.schema.registry.ssl.truststore.password": "trust-pw"}
    bearer = {"converter.bearer.auth.credentials.source": "STATIC_TOKEN", "converter.bearer.auth.token": issuer.token()}
    other_key = Issuer(rsa.generate_private_key(public_exponent=65537, key_size=2048), issuer.jwks_url)
    props, expected = {
        "wrong CA": ({**bearer, "converter.schema.registry.ssl.truststore.location": str(certs.path("other.p12")),
                      "converter.schema.registry.ssl.truststore.password": "pw"},
                     "key.converter.schema.registry.ssl.truststore.location: TLS with the schema registry at "),
        "JKS store": ({**bearer, "converter.schema.registry.ssl.truststore.location": str(certs.path("trust.jks")),
                       "converter.schema.registry.ssl.truststore.password": "trust-pw"},
                      "is a JKS store, which pgcdc cannot read without a JVM; convert it with `keytool "),
        "token of another key": ({**trust, **bearer, "converter.bearer.auth.token": other_key.token()},
                                 "key.converter.bearer.auth.token: the schema registry at "),
        "expired token": ({**trust, **bearer, "converter.bearer.auth.token": issuer.token(lifetime_s=-600)},
                          "key.converter.bearer.auth.token: the schema registry at "),
        "no token": (trust, "key.converter.schema.registry.url: the schema registry at "),  # asks for credentials
    }[case]
    config = avro_config(pg, dbname, broker, secure_registry.url, **props)
    with pytest.raises(ConfigError) as failed:
        Connector(config).run()
    message = str(failed.value)
    assert expected in message and "\n" not in message, message
    if case.endswith(" token") and case != "no token":
        assert "refused the credentials (HTTP 401)" in message, message
    if case == "no token":
        assert "asks for credentials (HTTP 401)" in message, message
    assert _no_slot(pg, dbname)
