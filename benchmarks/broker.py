"""The broker a benchmark writes into, chosen with `--broker`: `kafka` (the default) is Apache Kafka 4.1.1, one
node in KRaft combined mode, the broker users run; `tansu` is Tansu, the demo's broker. Both are pgcdc.local's
launchers, started as the tests start them (docs/decisions/test-broker.md).

`--cpu` reads the broker's CPU from /proc by pid (cpu.py); `broker_pid` finds the process that does the work.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka import Producer

from pgcdc.local import KafkaBroker, TansuBroker

Broker = KafkaBroker | TansuBroker

BROKERS: dict[str, Callable[[], Broker]] = {"kafka": KafkaBroker, "tansu": TansuBroker}

# The executable that serves requests: the JVM for Apache Kafka.
_SERVER_EXE = {KafkaBroker: "java", TansuBroker: "tansu"}


def add_broker_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", choices=tuple(BROKERS), default="kafka",
                        help="kafka: Apache Kafka 4.1.1, one node (a JVM; jars fetched by ./dev test); "
                             "tansu: the demo's broker")


@contextmanager
def running_broker(name: str) -> Iterator[Broker]:
    """The broker started and warmed: two idempotent producers, one after the other, each with a record
    acknowledged. A fresh Apache Kafka broker answered the second producer's request for a producer id with
    "Coordinator load in progress" (it fetches a new block of ids from its controller), and that producer
    retried: without the warm-up it is pgcdc's, inside the first measurement."""
    with BROKERS[name]() as broker:
        for _ in range(2):
            producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                                 "acks": "all"})
            producer.produce("warm-up", b"warm-up")
            if producer.flush(120):
                raise SystemExit(f"the {name} broker did not acknowledge a first record within 120 s")
            del producer  # its threads would count as pgcdc's in stream.py's --cpu
        yield broker


def _children(pid: int) -> list[int]:
    return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
            for c in (t / "children").read_text().split()]


def broker_pid(broker: Broker) -> int:
    """The pid of the broker's server process. KafkaBroker execs `java` itself, but a `java` on PATH may be a
    wrapper script (an SDK manager's shim) that starts the JVM as its child: the first process in the launched
    tree whose executable is the server's is the one whose CPU counts."""
    assert broker.proc is not None, "the broker is not running"
    want = _SERVER_EXE[type(broker)]
    todo = [broker.proc.pid]
    while todo:
        pid = todo.pop(0)
        if Path(f"/proc/{pid}/exe").resolve().name == want:
            return pid
        todo += _children(pid)
    raise SystemExit(f"--cpu: no {want} process under the broker's pid {broker.proc.pid}")
