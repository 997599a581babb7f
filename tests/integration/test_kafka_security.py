"""pgcdc's `kafka.*` and `producer.override.*` pass-through against Apache Kafka's own TLS and SASL/SCRAM
listeners: what librdkafka is handed is what the broker accepts or refuses.

One broker with four listeners: PLAINTEXT (the tests read back through it), SSL, SASL_SSL and SASL_PLAINTEXT,
both SCRAM mechanisms enabled, the user created at format time (kafka-storage format --add-scram). The server
certificate comes from tests/integration/test_tls.py's CA (IP 127.0.0.1 in its subjectAltName, which librdkafka
checks: ssl.endpoint.identification.algorithm=https is its default)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pgcdc.local import KafkaBroker, PostgresCluster
from tests.harness import Running, make_config, read_topic, wait_for
from tests.integration.test_durability import ids_in
from tests.integration.test_tls import Certs, cli_config, make_certs, one_error, run_cli

USER, PASSWORD = "pgcdc-svc", "scram-secret-pw"
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def secure_broker(certs: Certs) -> Iterator[KafkaBroker]:
    # Kafka reads a PEM keystore: the private key (PKCS#8, unencrypted) and the certificate in one file (KIP-651).
    keystore = certs.path("server.pem")
    keystore.write_bytes(certs.path("server.key").read_bytes() + certs.path("server.crt").read_bytes())
    settings = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
                "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512"}
    for listener in ("sasl_ssl", "sasl_plaintext"):
        for mechanism in ("scram-sha-256", "scram-sha-512"):
            settings[f"listener.name.{listener}.{mechanism}.sasl.jaas.config"] = SCRAM_JAAS
    with KafkaBroker(listeners={"SSL": "SSL", "SASL_SSL": "SASL_SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT"},
                     scram={m: {USER: PASSWORD} for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")},
                     settings=settings) as b:
        yield b


def streams(pg: PostgresCluster, dbname: str, broker: KafkaBroker, bootstrap: str, **props: str) -> None:
    """pgcdc through `bootstrap` with these settings, offsets in Kafka: two rows reach the change topic (read
    back over PLAINTEXT) and an offset the offsets topic."""
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    offsets_topic = f"offsets_{dbname}"
    config = make_config(pg, dbname, bootstrap, **{"topic.prefix": dbname, "offset.storage": "kafka",
                                                   "offset.storage.topic": offsets_topic, **props})
    with Running(config):
        pg.execute("INSERT INTO t VALUES (1), (2)", dbname)
        wait_for(lambda: sorted(ids_in(broker, f"{dbname}.public.t")) == [1, 2], 60, "rows 1 and 2")
        wait_for(lambda: offset_stored(broker, offsets_topic), 30, "an offset stored")


def offset_stored(broker: KafkaBroker, topic: str) -> bool:
    return any(r["value"] is not None for r in read_topic(broker.bootstrap_servers, topic))


def test_tls_listener(pg: PostgresCluster, dbname: str, secure_broker: KafkaBroker, certs: Certs) -> None:
    streams(pg, dbname, secure_broker, secure_broker.address("SSL"),
            **{"kafka.security.protocol": "SSL", "kafka.ssl.ca.location": str(certs.ca)})


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_over_tls(pg: PostgresCluster, dbname: str, secure_broker: KafkaBroker, certs: Certs,
                        mechanism: str) -> None:
    streams(pg, dbname, secure_broker, secure_broker.address("SASL_SSL"),
            **{"kafka.security.protocol": "SASL_SSL", "kafka.ssl.ca.location": str(certs.ca),
               "kafka.sasl.mechanism": mechanism, "kafka.sasl.username": USER, "kafka.sasl.password": PASSWORD})


def test_scram_as_producer_overrides(pg: PostgresCluster, dbname: str, secure_broker: KafkaBroker) -> None:
    """Kafka Connect's spelling (`producer.override.*`) reaches the producer and the offset store alike."""
    streams(pg, dbname, secure_broker, secure_broker.address("SASL_PLAINTEXT"),
            **{"producer.override.security.protocol": "SASL_PLAINTEXT",
               "producer.override.sasl.mechanism": "SCRAM-SHA-256",
               "producer.override.sasl.username": USER, "producer.override.sasl.password": PASSWORD})


@pytest.mark.parametrize("store", ["kafka", "file"])
def test_wrong_scram_password_is_one_line(pg: PostgresCluster, dbname: str, secure_broker: KafkaBroker,
                                          tmp_path: Path, store: str) -> None:
    config = {**cli_config(pg, dbname), "sink.type": "kafka", "bootstrap.servers": secure_broker.address(
        "SASL_PLAINTEXT"), "offset.storage": store, "offset.storage.file.filename": str(tmp_path / "offsets.dat"),
        "kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.username": USER, "kafka.sasl.password": "not-the-password"}
    proc = run_cli(tmp_path, config)
    line = one_error(proc)
    print(line)
    assert "bootstrap.servers" in line and "Authentication failed" in line and "kafka.sasl.password" in line, line
    assert "not-the-password" not in proc.stderr
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE database = '{dbname}'") == []


def test_tls_wrong_ca_is_one_line(pg: PostgresCluster, dbname: str, secure_broker: KafkaBroker, certs: Certs,
                                  tmp_path: Path) -> None:
    config = {**cli_config(pg, dbname), "sink.type": "kafka", "bootstrap.servers": secure_broker.address("SSL"),
              "offset.storage": "kafka", "kafka.security.protocol": "SSL",
              "kafka.ssl.ca.location": str(certs.other_ca), "kafka.socket.connection.setup.timeout.ms": "2000"}
    line = one_error(run_cli(tmp_path, config))
    print(line)
    # librdkafka's own words for the refused handshake, and the settings to look at.
    assert "bootstrap.servers" in line and "certificate verify failed" in line and "kafka.ssl.*" in line, line
    assert pg.execute(f"SELECT 1 FROM pg_replication_slots WHERE database = '{dbname}'") == []
