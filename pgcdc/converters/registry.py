"""The schema registry client a converter side uses, made from the options Confluent's converters read.

confluent-kafka's `SchemaRegistryClient` does the HTTP; this module maps Confluent's Java client settings onto
it:
- `schema.registry.url` (several, comma-separated; `mock://` is confluent-kafka's in-memory registry);
- basic auth: user info in the URL, or `basic.auth.credentials.source=USER_INFO` with `basic.auth.user.info`;
- bearer auth: `bearer.auth.credentials.source=STATIC_TOKEN` with `bearer.auth.token` (the only source of the
  7.x Java client besides SASL_OAUTHBEARER_INHERIT, which needs Kafka's OAuth login and is refused);
- TLS: `schema.registry.ssl.truststore.*` / `keystore.*` as PKCS12 or PEM files, or PEM text
  (`truststore.certificates`, `keystore.certificate.chain` + `keystore.key`). Python's TLS reads PEM only, so
  a PKCS12 store is converted (by `cryptography`) into PEM files in a private temporary folder, removed when
  the process ends. A JKS store cannot be read without a JVM: refused with the keytool line that converts it.

`probe()` asks the registry once at start-up, before anything is created: refused credentials or a failed TLS
handshake end pgcdc with one line naming the setting; an unreachable registry is only logged, since a registry
that is down holds the stream until it is back.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import ssl
import tempfile
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from pgcdc.converters.settings import ConverterSpec
from pgcdc.errors import ConfigError

log = logging.getLogger(__name__)

SSL = "schema.registry.ssl."
_JKS_MAGIC = b"\xfe\xed\xfe\xed"


def registry_client(spec: ConverterSpec) -> Any:
    """confluent-kafka's client for one side's converter. Raises ConfigError naming the option."""
    return SchemaRegistryClient.new_client(client_conf(spec))


def client_conf(spec: ConverterSpec) -> dict[str, Any]:
    prefix = f"{spec.side}.converter."
    conf: dict[str, Any] = {"url": spec.get("schema.registry.url")}
    user_info = spec.get("basic.auth.user.info") or spec.get("schema.registry.basic.auth.user.info")
    if spec.get("basic.auth.credentials.source", "url") == "user_info" and user_info:
        conf["basic.auth.user.info"] = user_info
    source = spec.get("bearer.auth.credentials.source")
    if source is not None:
        token = spec.get("bearer.auth.token")
        if not token:
            raise ConfigError(f"{prefix}bearer.auth.token: required with bearer.auth.credentials.source=STATIC_TOKEN")
        # confluent-kafka sends the logical cluster as `target-sr-cluster` and needs one; Confluent's 7.x Java
        # client sends no such header, and registries other than Confluent Cloud ignore it.
        conf |= {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": token,
                 "bearer.auth.logical.cluster": spec.get("bearer.auth.logical.cluster", "")}
        if spec.get("bearer.auth.identity.pool.id"):
            conf["bearer.auth.identity.pool.id"] = spec.get("bearer.auth.identity.pool.id")
    timeouts = [ms for ms in (spec.get("http.connect.timeout.ms"), spec.get("http.read.timeout.ms")) if ms]
    if timeouts:
        conf["timeout"] = max(timeouts) / 1000
    conf |= _tls(spec, prefix)
    return conf


def _tls(spec: ConverterSpec, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder: Path | None = None

    def write(name: str, data: bytes) -> str:
        nonlocal folder
        if folder is None:
            folder = _private_folder()
        path = folder / name
        path.write_bytes(data)
        path.chmod(0o600)
        return str(path)

    pem_trust = spec.get(SSL + "truststore.certificates")
    location = spec.get(SSL + "truststore.location")
    if pem_trust:
        out["ssl.ca.location"] = write("ca.pem", pem_trust.encode())
    elif location:
        option = f"{prefix}{SSL}truststore.location"
        kind = _store_type(spec, "truststore", location, option)
        if kind == "PEM":
            out["ssl.ca.location"] = location
        else:
            _key, cert, extra = _read_pkcs12(location, spec.get(SSL + "truststore.password"), option)
            certs = [c for c in (cert, *extra) if c is not None]
            if not certs:
                raise ConfigError(f"{option}: {location} holds no certificate")
            out["ssl.ca.location"] = write("ca.pem", b"".join(_pem(c) for c in certs))
    chain, key = spec.get(SSL + "keystore.certificate.chain"), spec.get(SSL + "keystore.key")
    location = spec.get(SSL + "keystore.location")
    if chain and key:
        out["ssl.certificate.location"] = write("client.pem", chain.encode())
        out["ssl.key.location"] = write("client.key", key.encode())
        if spec.get(SSL + "key.password"):
            out["ssl.key.password"] = spec.get(SSL + "key.password")
    elif location:
        option = f"{prefix}{SSL}keystore.location"
        kind = _store_type(spec, "keystore", location, option)
        if kind == "PEM":  # one file with the certificate chain and the private key
            out["ssl.certificate.location"] = location
            if spec.get(SSL + "key.password"):
                out["ssl.key.password"] = spec.get(SSL + "key.password")
        else:
            pkey, cert, extra = _read_pkcs12(location, spec.get(SSL + "keystore.password"), option)
            if pkey is None or cert is None:
                raise ConfigError(f"{option}: {location} holds no private key with its certificate")
            out["ssl.certificate.location"] = write("client.pem", b"".join(_pem(c) for c in (cert, *extra)))
            out["ssl.key.location"] = write("client.key", pkey.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return out


def _store_type(spec: ConverterSpec, store: str, location: str, option: str) -> str:
    """PKCS12 or PEM, from `<store>.type` and the file itself (Java 9+ reads a PKCS12 file declared JKS)."""
    try:
        head = Path(location).read_bytes()[:4]
    except OSError as exc:
        raise ConfigError(f"{option}: cannot read {location}: {exc.strerror}") from None
    if head == _JKS_MAGIC:
        raise ConfigError(f"{option}: {location} is a JKS store, which pgcdc cannot read without a JVM; convert it "
                          f"with `keytool -importkeystore -srckeystore {location} -destkeystore <file>.p12 "
                          f"-deststoretype PKCS12` and set {store}.type=PKCS12")
    declared = str(spec.get(SSL + f"{store}.type", "JKS")).upper()
    if declared == "PEM" or head.startswith(b"-----"):
        return "PEM"
    return "PKCS12"


def _read_pkcs12(location: str, password: str | None, option: str) -> Any:
    try:
        return pkcs12.load_key_and_certificates(Path(location).read_bytes(),
                                                password.encode() if password else None)
    except ValueError as exc:
        raise ConfigError(f"{option}: cannot open {location} as PKCS12 with the configured password "
                          f"({exc})") from None


def _pem(cert: Any) -> bytes:
    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def _private_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pgcdc-registry-tls-"))  # mode 0700
    atexit.register(shutil.rmtree, folder, True)
    return folder


def probe(client: Any, spec: ConverterSpec) -> None:
    """One request at start-up (GET /subjects): refused credentials and TLS failures are configuration errors;
    an unreachable registry is logged and the stream will wait for it."""
    prefix = f"{spec.side}.converter."
    url = spec.get("schema.registry.url")
    if str(url).startswith("mock://"):
        return
    try:
        client.get_subjects()
    except Exception as exc:
        status = getattr(exc, "http_status_code", None)
        if status in (401, 403):
            option = _credential_option(spec, url)
            if option is None:
                raise ConfigError(f"{prefix}schema.registry.url: the schema registry at {url} asks for credentials "
                                  f"(HTTP {status}): set {prefix}basic.auth.credentials.source=USER_INFO with "
                                  f"basic.auth.user.info, or bearer.auth.credentials.source=STATIC_TOKEN with "
                                  f"bearer.auth.token") from None
            raise ConfigError(f"{prefix}{option}: the schema registry at {url} refused the credentials "
                              f"(HTTP {status})") from None
        tls = _tls_failure(exc)
        if tls is not None:
            raise ConfigError(f"{prefix}{SSL}truststore.location: TLS with the schema registry at {url} failed: "
                              f"{tls}") from None
        log.warning("schema registry %s: not reachable yet (%s); records will wait for it", url, exc)


def _credential_option(spec: ConverterSpec, url: str) -> str | None:
    """The option that holds the credentials the registry refused; None when none were given."""
    if spec.get("bearer.auth.credentials.source") is not None:
        return "bearer.auth.token"
    if spec.get("basic.auth.credentials.source", "url") == "user_info":
        return "basic.auth.user.info"
    return "schema.registry.url" if "@" in url.split("//", 1)[-1].split("/", 1)[0] else None


def _tls_failure(exc: BaseException) -> str | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return str(getattr(seen, "verify_message", None) or seen.reason or seen)
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return text if "CERTIFICATE_VERIFY_FAILED" in text or "SSL" in text.split(":")[0] else None
