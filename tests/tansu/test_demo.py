"""`pgcdc demo` (the README's first command, run by `./dev demo`): every change comes back from Kafka, shown
with typed values, and the run ends quietly: no producer is left to retry against the broker the demo stops.
SIGTERM ends it as Ctrl-C does, leaving no server or temporary folder behind; a broker that dies ends it with one
line. How fast records come back is benchmarks/latency.py's to measure, not a test's."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DEMO = [sys.executable, "-c", "from pgcdc.cli import main; main()", "demo"]


def _lines(proc: subprocess.Popen[str]) -> list[str]:
    assert proc.stdout is not None
    return [line.rstrip("\n") for line in proc.stdout]


def test_demo_reads_back_every_change_typed_and_ends_quietly() -> None:
    proc = subprocess.Popen([*DEMO, "--transactions", "8"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines = _lines(proc)
    stderr = proc.stderr.read() if proc.stderr else ""
    assert proc.wait(300) == 0, stderr[-2000:]
    stdout = "\n".join(lines)
    # 8 transactions: 16 inserts, updates after the 4th and the 8th, one delete (its record and tombstone).
    assert "done: 20 records read back from Kafka" in stdout, stdout[-2000:]
    shown = [line for line in lines if line.startswith("demo.public.")]
    assert len(shown) == 20, shown
    # librdkafka writes its own log lines to stderr ("%3|...|FAIL|rdkafka#producer-1| ... Connection refused").
    assert "rdkafka#" not in stderr, stderr[-2000:]
    # Typed values: decimals and dates as people write them, not Connect's base64 bytes and day counts.
    orders = [line for line in shown if line.startswith("demo.public.orders") and "tombstone" not in line]
    assert orders and all(re.search(r" amount=\d+\.\d\d placed_on=\d{4}-\d\d-\d\d ", ln) for ln in orders), orders
    # A delete shows the row it removed, not NOT NULL columns filled with zeros.
    (deleted,) = [line for line in orders if " delete " in line]
    assert re.search(r" customer_id=[1-9]", deleted), deleted


def test_demo_raw_shows_debeziums_json() -> None:
    proc = subprocess.run([*DEMO, "--transactions", "2", "--raw"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    orders = [ln for ln in proc.stdout.splitlines() if ln.startswith("demo.public.orders")]
    assert orders and all(re.search(r'"amount":"[A-Za-z0-9+/=]+","placed_on":\d+,', ln) for ln in orders), orders


@pytest.fixture
def demo_tmp() -> Iterator[Path]:
    """A temporary folder for the demo's servers that the cluster's unprivileged OS user can enter."""
    path = Path(tempfile.mkdtemp(prefix="pgcdc-demo-test-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _start_streaming_demo(tmp: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([*DEMO, "--transactions", "2", "--keep-running"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"PostgreSQL \d+ on port (\d+)", line)
        if m:
            return proc, int(m.group(1))
    raise AssertionError(f"the demo did not start: {proc.communicate(timeout=60)}")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            comm = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append((int(stat.parent.name), comm))
    return out


def test_demo_sigterm_cleans_up_as_ctrl_c(demo_tmp: Path) -> None:
    proc, pg_port = _start_streaming_demo(demo_tmp)
    assert _listening(pg_port) and list(demo_tmp.iterdir())
    time.sleep(2)  # the workload's records are being shown
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    assert not _listening(pg_port)
    assert list(demo_tmp.iterdir()) == []  # PostgreSQL's and the broker's folders are removed
    assert "stopped" in out


def test_demo_broker_death_is_one_line(demo_tmp: Path) -> None:
    proc, pg_port = _start_streaming_demo(demo_tmp)
    try:
        (tansu,) = [pid for pid, comm in _children(proc.pid) if comm == "tansu"]
        os.kill(tansu, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert "Traceback" not in err and "rdkafka#" not in err, err[-3000:]
    errors = [ln for ln in err.splitlines() if ln.startswith("pgcdc: error:")]
    assert len(errors) == 1 and "broker" in errors[0], err[-3000:]
    assert not _listening(pg_port)
    assert list(demo_tmp.iterdir()) == []
