"""./dev on a machine that cannot reach Maven Central and has no Apache Kafka in its cache: one line naming what
to fetch, a non-zero exit, and no half-filled cache folder. Maven runs for real, in offline mode (its own
setting, in the settings.xml of a home folder of the test's own: Java takes user.home from MAVEN_OPTS, not from
$HOME)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from pgcdc.local.kafka import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_dev_offline_without_the_cache_fails_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "home" / ".m2").mkdir(parents=True)
    (tmp_path / "home" / ".m2" / "settings.xml").write_text("<settings><offline>true</offline></settings>\n")
    env = {k: v for k, v in os.environ.items() if k != "PGCDC_KAFKA_HOME"}
    env.update(MAVEN_OPTS=f"-Duser.home={tmp_path / 'home'}", PGCDC_PG_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([str(ROOT / "dev"), "test", "tests/integration/test_local_kafka.py", "--co"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("[dev] cannot fetch ") and f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}" in last, \
        proc.stderr[-2000:]
    assert not (tmp_path / "cache" / f"kafka-{KAFKA_VERSION}" / "libs").exists()


def test_a_cluster_id_starting_with_a_dash_formats_and_starts() -> None:
    # Ids are random URL-safe base64: about one in 32 starts with '-', which kafka-storage's argparse once took
    # for an option (the session's broker then failed to start).
    from pgcdc.local.kafka import KafkaBroker

    broker = KafkaBroker(cluster_id="-" + "A" * 21)
    try:
        broker.start()
        assert broker.cluster_id.startswith("-") and broker.proc is not None and broker.proc.poll() is None
    finally:
        broker.cleanup()
