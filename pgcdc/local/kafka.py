"""Throwaway Apache Kafka brokers for tests: one broker, or a cluster of three, on 127.0.0.1.

The broker's jars come from Maven Central (`org.apache.kafka:kafka_2.13`, fetched with its dependencies by
`./dev`, see `ensure_kafka` there) into a cache folder outside the checkout; each node runs in KRaft combined
mode (broker and controller in one JVM) with a small heap and settings that make it start fast. Log dirs live in
a temporary folder that outlives `kill()`/`start()`, so a restarted broker still has everything it acknowledged.
See docs/decisions/test-broker.md.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from confluent_kafka.admin import AdminClient

from pgcdc.errors import LocalServiceError
from pgcdc.local.server import LocalServer, Managed, free_port

# The version ./dev fetches (it reads this line) and docker/compose.yaml runs (tests/unit/test_docker_files.py).
KAFKA_VERSION = "4.1.1"

# Settings every test node gets. Why each: a single JVM per node, started often, on a shared 2-core machine.
BASE_SETTINGS = {
    "process.roles": "broker,controller",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    # The first consumer group or transaction creates these topics: one partition each is created at once.
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    # Small segments: compaction and retention act on closed segments only.
    "log.segment.bytes": str(1024 * 1024),
    # The cleaner's default 128 MB dedupe buffer would take a quarter of the heap.
    "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "background.threads": "2",
    # A node killed and started again is refused (DUPLICATE_BROKER_REGISTRATION) until its old registration's
    # session has expired, and a killed cluster node keeps leading its partitions until then: 4 s instead of 9.
    "broker.session.timeout.ms": "4000",
    "broker.heartbeat.interval.ms": "1000",
}

# One node alone: every internal topic on replication factor 1.
SINGLE_SETTINGS = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}

# Three nodes: what a production cluster runs, replication factor 3 and two replicas in sync for acks=all.
CLUSTER_SETTINGS = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}

# The broker's own log: warnings, and the lines that say it started or stopped.
LOG4J = """\
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
logger.server.name = kafka.server
logger.server.level = INFO
"""

# C1 only and the serial collector: a test broker lives for minutes on 2 shared cores; C2 compilation and
# parallel GC threads would cost more CPU than they save.
JVM_OPTIONS = ["-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
               "-Djava.awt.headless=true"]


def kafka_cache() -> Path:
    """Where ./dev puts the broker's jars: the same default as its PostgreSQL binaries."""
    return Path(os.environ.get("PGCDC_PG_CACHE") or "/var/tmp/pgcdc") / f"kafka-{KAFKA_VERSION}"


def find_kafka() -> Path:
    """$PGCDC_KAFKA_HOME, else the cache ./dev fills: a folder whose libs/ holds the broker and its dependencies
    (an Apache Kafka binary distribution has the same layout)."""
    home = Path(os.environ.get("PGCDC_KAFKA_HOME") or kafka_cache())
    if any((home / "libs").glob("kafka_2.13-*.jar")):
        return home
    raise LocalServiceError(
        f"Apache Kafka {KAFKA_VERSION} not found in {home}: run ./dev test once with access to Maven Central "
        f"(it fetches org.apache.kafka:kafka_2.13:{KAFKA_VERSION}) or set PGCDC_KAFKA_HOME")


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise LocalServiceError("Apache Kafka needs a Java 17+ runtime: install openjdk-17-jre-headless "
                                "or set JAVA_HOME")
    return java


def new_cluster_id() -> str:
    # KRaft cluster ids are 16 random bytes in URL-safe base64 without padding (kafka-storage random-uuid).
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def _properties(settings: Mapping[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in settings.items())


class KafkaBroker(LocalServer):
    """One Apache Kafka node (broker and controller) on 127.0.0.1. Alone by default; `KafkaCluster` makes three
    that share a quorum. `listeners` adds named listeners with their security protocol (e.g.
    {"SASL": "SASL_PLAINTEXT"}), each on a port of its own (`address(name)`); `scram` creates SCRAM users at
    format time ({"SCRAM-SHA-256": {"alice": "secret"}}); `settings` override server.properties. Use as a
    context manager. `stop()` is SIGTERM, a controlled shutdown (partition leadership moves away first in a
    cluster); `kill()` is SIGKILL, as a crashed broker."""

    def __init__(self, *, node_id: int = 1, port: int | None = None, controller_port: int | None = None,
                 voters: str | None = None, cluster_id: str | None = None,
                 settings: Mapping[str, str] | None = None, listeners: Mapping[str, str] | None = None,
                 scram: Mapping[str, Mapping[str, str]] | None = None, heap: str = "512m") -> None:
        self.home = find_kafka()
        self.java = find_java()
        self.node_id = node_id
        self.ports = {"PLAINTEXT": port or free_port(), "CONTROLLER": controller_port or free_port()}
        protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT", **(listeners or {})}
        for name in listeners or {}:
            self.ports[name] = free_port()
        self.voters = voters or f"{node_id}@127.0.0.1:{self.ports['CONTROLLER']}"
        self.cluster_id = cluster_id or new_cluster_id()
        self.scram = scram or {}
        self.heap = heap
        self.dir = Path(tempfile.mkdtemp(prefix=f"pgcdc-kafka-{node_id}-"))
        self.logfile = self.dir / "server.log"
        advertised = [f"{n}://127.0.0.1:{p}" for n, p in self.ports.items() if n != "CONTROLLER"]
        self.settings = {
            **BASE_SETTINGS, **(SINGLE_SETTINGS if voters is None else CLUSTER_SETTINGS),
            "node.id": str(node_id),
            "controller.quorum.voters": self.voters,
            "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in self.ports.items()),
            "advertised.listeners": ",".join(advertised),
            "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
            "log.dirs": str(self.dir / "data"),
            **(settings or {}),
        }
        (self.dir / "server.properties").write_text(_properties(self.settings))
        (self.dir / "log4j2.properties").write_text(LOG4J.format(path=self.logfile))

    @property
    def port(self) -> int:
        return self.ports["PLAINTEXT"]

    @property
    def bootstrap_servers(self) -> str:
        return self.address("PLAINTEXT")

    def address(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def _java(self, main: str, *args: str, heap: str = "256m") -> list[str]:
        return [self.java, f"-Xmx{heap}", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                "-cp", str(self.home / "libs" / "*"), main, *args]

    def format(self) -> subprocess.Popen[bytes] | None:
        """Start formatting the log dir (kafka-storage format) unless it already is; the caller waits."""
        if (self.dir / "data" / "meta.properties").exists():
            return None
        # `--cluster-id=<id>` in one argument: a URL-safe base64 id can start with '-', which argparse would
        # take for an option.
        args = ["format", f"--cluster-id={self.cluster_id}", "-c", str(self.dir / "server.properties"),
                "--ignore-formatted"]
        for mechanism, users in self.scram.items():
            for user, password in users.items():
                args += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        log = open(self.dir / "format.log", "ab")
        try:
            return subprocess.Popen(self._java("kafka.tools.StorageTool", *args), stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()

    def wait_formatted(self, proc: subprocess.Popen[bytes] | None, timeout: float = 120) -> None:
        if proc is not None and proc.wait(timeout) != 0:
            tail = (self.dir / "format.log").read_text(errors="replace")[-800:]
            raise LocalServiceError(f"kafka-storage format failed for node {self.node_id}: {tail.strip()}")

    def launch(self) -> None:
        """Format if needed and start the JVM without waiting for it to serve (a cluster node needs its peers)."""
        self.wait_formatted(self.format())
        self.spawn(self._java("kafka.Kafka", str(self.dir / "server.properties"), heap=self.heap))

    def wait_ready(self, timeout: float = 120, expect: int = 1) -> None:
        """Until this node answers metadata requests and lists `expect` live brokers, itself among them."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "socket.connection.setup.timeout.ms": 2000,
                             "reconnect.backoff.max.ms": 200, "log_level": 0})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                break
            try:
                brokers = admin.list_topics(timeout=2).brokers
                if self.node_id in brokers and len(brokers) >= expect:
                    return
            except Exception:  # KafkaException while the broker is still starting
                pass
            time.sleep(0.1)
        self.failed_to_start(f"Apache Kafka node {self.node_id} did not start on {self.bootstrap_servers} "
                             f"within {timeout:g}s", 1500)

    def start(self, timeout: float = 120) -> KafkaBroker:
        self.launch()
        self.wait_ready(timeout)
        return self

    def restart(self, timeout: float = 120) -> KafkaBroker:
        self.kill()
        return self.start(timeout)

    def cleanup(self) -> None:
        # Killed, not stopped: its data goes with it, and a controlled shutdown of a cluster's last nodes waits
        # for a quorum that is gone.
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class KafkaCluster(Managed):
    """Three (or `size`) Apache Kafka nodes, each broker and controller, sharing one KRaft quorum: replication
    factor 3 and `min.insync.replicas=2` for every topic, the offsets topic included. `brokers[i]` kills and
    starts one node; `leader(topic)` tells which node leads a partition. Use as a context manager."""

    def __init__(self, size: int = 3, *, settings: Mapping[str, str] | None = None, heap: str = "384m") -> None:
        controller_ports = [free_port() for _ in range(size)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(controller_ports))
        cluster_id = new_cluster_id()
        self.brokers = [KafkaBroker(node_id=i + 1, controller_port=p, voters=voters, cluster_id=cluster_id,
                                    settings=settings, heap=heap) for i, p in enumerate(controller_ports)]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap_servers for b in self.brokers)

    def broker(self, node_id: int) -> KafkaBroker:
        return self.brokers[node_id - 1]

    def start(self, timeout: float = 180) -> KafkaCluster:
        # The JVMs format and start side by side: on 2 cores this takes about as long as one node.
        formats = [b.format() for b in self.brokers]
        for b, f in zip(self.brokers, formats):
            b.wait_formatted(f)
        for b in self.brokers:
            b.launch()
        for b in self.brokers:
            b.wait_ready(timeout, expect=len(self.brokers))
        return self

    def start_broker(self, node_id: int, timeout: float = 120) -> None:
        """Start one node again (after `kill`/`stop`) and wait until the others see it too."""
        b = self.broker(node_id)
        b.launch()
        b.wait_ready(timeout, expect=len(self.brokers))

    def leader(self, topic: str, partition: int = 0, timeout: float = 10) -> int:
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
        md = admin.list_topics(topic, timeout=timeout).topics[topic]
        if md.error is not None:
            raise LocalServiceError(f"no metadata for {topic}: {md.error}")
        return int(md.partitions[partition].leader)

    def stop(self) -> None:
        for b in self.brokers:
            b.stop()

    def cleanup(self) -> None:
        for b in self.brokers:
            b.cleanup()
