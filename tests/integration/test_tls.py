"""TLS: to PostgreSQL (database.sslmode require / verify-ca / verify-full, client certificates) against a cluster
with ssl=on, and to Kafka (kafka.security.protocol SSL / SASL_SSL handed to librdkafka) against a local TLS
endpoint that records the first Kafka request each client sends inside TLS (which client gets which settings).
Streaming over Apache Kafka's own TLS and SASL/SCRAM listeners: tests/integration/test_kafka_security.py.

Certificates are made here with the openssl command: a CA, a server certificate for IP 127.0.0.1 and DNS
pg.test, a client certificate for the role `certuser`, and a second, unrelated CA."""

from __future__ import annotations

import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_for, wait_records

HBA = """\
local all all trust
hostnossl all tlsonly 127.0.0.1/32 reject
hostnossl replication tlsonly 127.0.0.1/32 reject
hostssl all certuser 127.0.0.1/32 cert
hostssl replication certuser 127.0.0.1/32 cert
host all all 127.0.0.1/32 scram-sha-256
host replication all 127.0.0.1/32 scram-sha-256
"""


@dataclass
class Certs:
    dir: Path
    ca: Path = field(init=False)
    other_ca: Path = field(init=False)

    def __post_init__(self) -> None:
        self.ca = self.dir / "ca.crt"
        self.other_ca = self.dir / "other-ca.crt"

    def path(self, name: str) -> Path:
        return self.dir / name


def openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"openssl {' '.join(args)}: {proc.stderr}"


def make_certs(folder: Path) -> Certs:
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.crt",
                "-days", "2", "-subj", f"/CN=pgcdc test {ca}", cwd=folder)
    for name, cn, ext in (("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:pg.test"),
                          ("client", "certuser", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={cn}", cwd=folder)
        (folder / f"{name}.ext").write_text(ext + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=folder)
    (folder / "client.key").chmod(0o600)  # libpq refuses a private key others may read
    return Certs(folder)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def tls_pg(certs: Certs) -> Iterator[PostgresCluster]:
    """A cluster with ssl=on that accepts certificate logins for `certuser` and only TLS for `tlsonly`."""
    cluster = PostgresCluster(hba=HBA, settings={
        "ssl": "on", "ssl_cert_file": "'server.crt'", "ssl_key_file": "'server.key'", "ssl_ca_file": "'ca.crt'",
        "max_wal_senders": "10", "max_replication_slots": "10"})
    try:
        cluster.init()
        for name in ("server.crt", "server.key", "ca.crt"):
            cluster.install_file(name, certs.path(name).read_bytes())
        cluster.start()
        cluster.execute("CREATE ROLE certuser LOGIN SUPERUSER; "
                        "CREATE ROLE tlsonly LOGIN SUPERUSER PASSWORD 'tls-secret-pw'")
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def tls_db(tls_pg: PostgresCluster) -> Iterator[str]:
    name = f"tls_{os.urandom(4).hex()}"
    tls_pg.create_database(name)
    tls_pg.execute("CREATE TABLE t (id int PRIMARY KEY)", name)
    yield name
    tls_pg.execute(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                   f"WHERE database = '{name}' AND NOT active")
    tls_pg.drop_database(name)


def ssl_sessions(pg: PostgresCluster, db: str) -> list[tuple[bool, str | None, str | None]]:
    """(ssl, TLS version, client certificate DN) of pgcdc's sessions on the database (walsender included)."""
    dn = "client_dn" if pg.major >= 12 else "clientdn"  # renamed in PostgreSQL 12
    return pg.execute(f"SELECT s.ssl, s.version, s.{dn} FROM pg_stat_ssl s JOIN pg_stat_activity a "
                      f"USING (pid) WHERE a.application_name = 'pgcdc-test' AND a.datname = '{db}'")


def streams_one_row(pg: PostgresCluster, db: str, **props: str) -> list[tuple[bool, str | None, str | None]]:
    sink = MemorySink()
    with Running(make_config(pg, db, **props), sink=sink):
        pg.execute("INSERT INTO t VALUES (1)", db)
        wait_records(sink, 1)
        sessions = ssl_sessions(pg, db)
    assert [payload(r)["after"] for r in sink.records] == [{"id": 1}]
    return sessions


def tls_props(certs: Certs, mode: str, **extra: str) -> dict[str, str]:
    return {"database.user": "tlsonly", "database.password": "tls-secret-pw", "database.sslmode": mode,
            "database.sslrootcert": str(certs.ca), **extra}


@pytest.mark.parametrize("mode", ["require", "verify-ca", "verify-full"])
def test_sslmode_streams_over_tls(tls_pg: PostgresCluster, tls_db: str, certs: Certs, mode: str) -> None:
    sessions = streams_one_row(tls_pg, tls_db, **tls_props(certs, mode))
    assert len(sessions) >= 2, sessions  # the regular connection and the walsender
    assert all(ssl_on and version.startswith("TLS") for ssl_on, version, _ in sessions), sessions


def test_client_certificate_login(tls_pg: PostgresCluster, tls_db: str, certs: Certs) -> None:
    """pg_hba `hostssl ... cert`: no password, the client certificate's CN is the role."""
    props = {"database.user": "certuser", "database.password": "", "database.sslmode": "verify-full",
             "database.sslrootcert": str(certs.ca), "database.sslcert": str(certs.path("client.crt")),
             "database.sslkey": str(certs.path("client.key"))}
    sessions = streams_one_row(tls_pg, tls_db, **props)
    assert sessions and all(ssl_on and dn == "/CN=certuser" for ssl_on, _, dn in sessions), sessions


def run_cli(tmp_path: Path, config: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "test", "config": config}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PGCDC_") or k == "PGCDC_PG_BINDIR"}
    env["HOME"] = str(tmp_path)  # no ~/.postgresql/root.crt or postgresql.crt to fall back on
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", "run", "--config", str(path)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pgcdc: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def cli_config(pg: PostgresCluster, db: str, **props: str) -> dict[str, str]:
    return {**pg.connection_properties(db), "topic.prefix": "test", "snapshot.mode": "no_data",
            "slot.name": f"slot_{db}", "publication.name": f"pub_{db}", "offset.storage": "memory",
            "sink.type": "file", "sink.file.path": os.devnull, **props}


@pytest.mark.parametrize(("props", "expected"), [
    ({"database.hostname": "localhost", "database.sslmode": "verify-full"},
     ["database.sslmode", "does not match host name \"localhost\""]),
    ({"database.sslmode": "verify-ca", "database.sslrootcert": "{other_ca}"},
     ["database.sslrootcert", "certificate verify failed"]),
    ({"database.sslmode": "verify-full", "database.sslrootcert": None},
     ["database.sslrootcert", "root certificate file"]),
    ({"database.sslmode": "disable"}, ["database.sslmode", "no encryption"]),
    ({"database.user": "certuser", "database.password": "", "database.sslmode": "require"},
     ["database.sslcert", "certificate"]),
], ids=["wrong host name", "wrong CA", "no root certificate", "sslmode=disable refused", "no client certificate"])
def test_tls_refusals_are_one_line(tls_pg: PostgresCluster, tls_db: str, certs: Certs, tmp_path: Path,
                                   props: dict[str, str | None], expected: list[str]) -> None:
    config = cli_config(tls_pg, tls_db, **tls_props(certs, "require"))
    for key, value in props.items():
        if value is None:
            config.pop(key)
        else:
            config[key] = value.format(other_ca=certs.other_ca)
    line = one_error(run_cli(tmp_path, config))
    for text in expected:
        if text == "no encryption" and tls_pg.major < 14:
            text = "SSL off"  # the server's wording for a refused plain connection before PostgreSQL 14
        assert text in line, line
    assert "tls-secret-pw" not in line
    assert tls_pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE database = '{tls_db}'") == []


# -- Kafka ---------------------------------------------------------------------------------------------------
class TlsEndpoint:
    """A TLS server that records each client's handshake and, once through, the first Kafka request header
    (api_key, api_version, client_id) read inside TLS; then hangs up. It is no broker: a client never gets
    further than its first request."""

    def __init__(self, certs: Certs) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certs.path("server.crt"), certs.path("server.key"))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.handshakes: list[str] = []  # "ok" or the server-side error
        self.requests: list[tuple[int, int, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> TlsEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            try:
                with self.context.wrap_socket(conn, server_side=True) as tls:
                    self.handshakes.append("ok")
                    head = _read(tls, 4 + 2 + 2 + 4 + 2)  # size, api_key, api_version, correlation id, id length
                    _, key, version, _, id_len = struct.unpack("!ihhih", head)
                    client_id = _read(tls, id_len).decode() if id_len > 0 else ""
                    self.requests.append((key, version, client_id))
            except (ssl.SSLError, OSError, struct.error) as exc:
                self.handshakes.append(f"error: {exc}")
            finally:
                conn.close()


def _read(sock: ssl.SSLSocket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise OSError("closed")
        buf += chunk
    return buf


API_VERSIONS = 18  # the first request librdkafka sends on a new connection (KIP-35)


@pytest.mark.parametrize(("protocol", "store"), [("SSL", "kafka"), ("SASL_SSL", "file")])
def test_kafka_tls_settings_reach_librdkafka(pg: PostgresCluster, dbname: str, certs: Certs, tmp_path: Path,
                                             protocol: str, store: str) -> None:
    """With kafka.security.protocol and kafka.ssl.ca.location, pgcdc's Kafka clients complete a TLS handshake
    that verifies the endpoint against that CA and speak the Kafka protocol inside it (the first request,
    ApiVersions, read by the endpoint after the handshake). The endpoint is no broker, so the run ends with one
    error line that names bootstrap.servers and shows no SASL password."""
    with TlsEndpoint(certs) as endpoint:
        config = {**cli_config(pg, dbname), "sink.type": "kafka", "bootstrap.servers": f"127.0.0.1:{endpoint.port}",
                  "offset.storage": store, "offset.storage.file.filename": str(tmp_path / "offsets.dat"),
                  "kafka.security.protocol": protocol,
                  "kafka.ssl.ca.location": str(certs.ca), "kafka.client.id": "pgcdc-tls-check",
                  "kafka.socket.connection.setup.timeout.ms": "2000"}
        if protocol == "SASL_SSL":
            config.update({"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.username": "svc",
                           "kafka.sasl.password": "kafka-secret-pw"})
        proc = run_cli(tmp_path, config)
        line = one_error(proc)
        assert "bootstrap.servers" in line, line
        assert "kafka-secret-pw" not in proc.stderr
        wait_for(lambda: endpoint.requests != [], 10, "a Kafka request inside TLS", lambda: endpoint.handshakes)
    assert "ok" in endpoint.handshakes
    assert endpoint.requests[0][0] == API_VERSIONS
    # The Kafka offset store's admin client gets only bootstrap.servers and the security.*/ssl.*/sasl.* settings
    # (librdkafka's default client.id); the producer (reached first with the file store) gets every kafka.*.
    assert endpoint.requests[0][2] == ("rdkafka" if store == "kafka" else "pgcdc-tls-check")
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE database = '{dbname}'") == []


def test_kafka_tls_wrong_ca_fails_the_handshake(pg: PostgresCluster, dbname: str, certs: Certs,
                                                tmp_path: Path) -> None:
    """kafka.ssl.ca.location of an unrelated CA: librdkafka refuses the endpoint's certificate; no request is
    ever sent in the clear."""
    with TlsEndpoint(certs) as endpoint:
        config = {**cli_config(pg, dbname), "sink.type": "kafka", "bootstrap.servers": f"127.0.0.1:{endpoint.port}",
                  "offset.storage": "kafka", "kafka.security.protocol": "SSL",
                  "kafka.ssl.ca.location": str(certs.other_ca), "kafka.socket.connection.setup.timeout.ms": "2000"}
        line = one_error(run_cli(tmp_path, config))
        assert "bootstrap.servers" in line, line
        wait_for(lambda: endpoint.handshakes != [], 10, "a handshake attempt")
    assert endpoint.requests == []
    assert all(h.startswith("error:") for h in endpoint.handshakes), endpoint.handshakes
