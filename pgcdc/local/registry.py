"""A throwaway schema registry: Apicurio Registry 3, which serves Confluent's Schema Registry API under
`/apis/ccompat/v7` beside its own.

Maven Central publishes each release's Quarkus application as `apicurio-registry-app-<version>-all.tar.gz`
(a runner jar and its lib/ folder); `./dev` fetches it into the cache folder. 3.0.9 is the newest release that
runs on Java 17 (3.1 and later are built for Java 21). Its schemas are kept in an H2 database in a file, so a
registry stopped and started again on the same port still has every id it handed out, as a real one would.
"""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile
import urllib.request
from pathlib import Path

from pgcdc.errors import LocalServiceError
from pgcdc.local.server import LocalServer, free_port

APICURIO_VERSION = "3.0.9"


def find_apicurio() -> Path:
    """$PGCDC_APICURIO_JAR, else the runner jar `./dev` unpacked into the cache folder."""
    env = os.environ.get("PGCDC_APICURIO_JAR")
    if env and Path(env).exists():
        return Path(env)
    cache = Path(os.environ.get("PGCDC_PG_CACHE", "/var/tmp/pgcdc"))
    jar = cache / f"apicurio-registry-{APICURIO_VERSION}" / f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"
    if jar.exists():
        return jar
    raise LocalServiceError(f"Apicurio Registry {APICURIO_VERSION} not found: run ./dev test once to fetch it, "
                            "or set PGCDC_APICURIO_JAR to its runner jar")


def find_java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    java = shutil.which("java")
    if java is None:
        raise LocalServiceError("Apicurio Registry needs Java 17 or later: java not found (set JAVA_HOME)")
    return java


class ApicurioRegistry(LocalServer):
    """Start/stop Apicurio Registry on 127.0.0.1. Use as a context manager.

    `users` ({name: password}) turns on HTTP basic auth for every path, with Quarkus's embedded users.
    `tls` (certificate file, key file, both PEM) serves HTTPS only. `jwks_url` turns on bearer auth for every
    path: Quarkus OIDC verifies each token's signature with the keys published at that URL (a JSON Web Key Set)."""

    def __init__(self, *, port: int | None = None, users: dict[str, str] | None = None,
                 tls: tuple[Path, Path] | None = None, jwks_url: str | None = None) -> None:
        self.jar = find_apicurio()
        self.java = find_java()
        self.port = port or free_port()
        self.users = users or {}
        self.tls = tls
        self.jwks_url = jwks_url
        self.dir = Path(tempfile.mkdtemp(prefix="pgcdc-registry-"))
        self.logfile = self.dir / "registry.log"

    @property
    def url(self) -> str:
        """The Confluent-compatible API's base URL (what `schema.registry.url` names)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/apis/ccompat/v7"

    def _properties(self) -> list[str]:
        props = {"quarkus.http.host": "127.0.0.1", "quarkus.http.port": str(self.port),
                 # Each commit written before it is acknowledged (H2 delays them by 500 ms by default), so a
                 # registry killed right after handing out an id still has it when it starts again.
                 "apicurio.datasource.url": f"jdbc:h2:file:{self.dir / 'registry'};WRITE_DELAY=0",
                 "quarkus.log.level": "WARN"}
        if self.tls:
            # HTTPS on the registry's port; the plain listener moves to another free port and refuses requests.
            props |= {"quarkus.http.ssl-port": str(self.port), "quarkus.http.port": str(free_port()),
                      "quarkus.http.insecure-requests": "disabled",
                      "quarkus.http.ssl.certificate.files": str(self.tls[0]),
                      "quarkus.http.ssl.certificate.key-files": str(self.tls[1])}
        if self.jwks_url:
            base, _, path = self.jwks_url.rpartition("/")
            props |= {"quarkus.oidc.tenant-enabled": "true", "quarkus.oidc.auth-server-url": base,
                      "quarkus.oidc.discovery-enabled": "false", "quarkus.oidc.jwks-path": path,
                      "quarkus.http.auth.permission.all.paths": "/*",
                      "quarkus.http.auth.permission.all.policy": "authenticated"}
        if self.users:
            props |= {"quarkus.http.auth.basic": "true", "quarkus.security.users.embedded.enabled": "true",
                      "quarkus.security.users.embedded.plain-text": "true",
                      "quarkus.http.auth.permission.all.paths": "/*",
                      "quarkus.http.auth.permission.all.policy": "authenticated"}
            props |= {f"quarkus.security.users.embedded.users.{u}": p for u, p in self.users.items()}
        return [f"-D{k}={v}" for k, v in props.items()]

    def start(self, timeout: float = 180) -> ApicurioRegistry:
        # C1 only and a small heap: it starts in about half the time on a busy machine, and serves a test's load.
        self.spawn([self.java, "-XX:TieredStopAtLevel=1", "-Xmx384m", *self._properties(), "-jar", str(self.jar)],
                   cwd=self.dir)
        return self.wait_until(self.ready, timeout, 0.2, f"Apicurio Registry did not start on 127.0.0.1:{self.port}")

    def ready(self) -> bool:
        """The ccompat API answers (401 counts: the server is up, the probe has no credentials)."""
        unverified = ssl._create_unverified_context() if self.tls else None  # only "is it serving?"
        try:
            with urllib.request.urlopen(f"{self.url}/subjects", timeout=2, context=unverified):
                return True
        except urllib.error.HTTPError as exc:
            return exc.code == 401
        except OSError:
            return False
