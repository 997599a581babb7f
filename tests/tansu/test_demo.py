"""`pgcdc demo` (the README's first command, run by `./dev demo`): every change comes back from Kafka, and the
run ends quietly: no producer is left to retry against the broker the demo stops."""

from __future__ import annotations

import subprocess
import sys


def test_demo_reads_back_every_change_and_ends_quietly() -> None:
    proc = subprocess.run([sys.executable, "-c", "from pgcdc.cli import main; main()", "demo", "--transactions", "8"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # 8 transactions: 16 inserts, updates after the 4th and the 8th, one delete (its record and tombstone).
    assert "done: 20 records read back from Kafka" in proc.stdout, proc.stdout[-2000:]
    shown = [line for line in proc.stdout.splitlines() if line.startswith("demo.public.")]
    assert len(shown) == 20, shown
    # librdkafka writes its own log lines to stderr ("%3|...|FAIL|rdkafka#producer-1| ... Connection refused").
    assert "rdkafka#" not in proc.stderr, proc.stderr[-2000:]
