"""A throwaway PostgreSQL cluster: initdb + postgres on 127.0.0.1, wal_level=logical.

initdb refuses to run as root, so when we are root the cluster is owned by an unprivileged OS user
(``postgres`` if it exists, else ``nobody``) and every server binary is run through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pgcdc.errors import LocalServiceError
from pgcdc.local.server import free_port

DEFAULT_SETTINGS: dict[str, str] = {
    "wal_level": "logical",
    "max_wal_senders": "20",
    # Slots outlive the captures that made them (the spark tier captures one database several ways at once, a
    # slot each): room for a whole test tier's.
    "max_replication_slots": "64",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "128MB",
    "max_connections": "100",
    "log_min_messages": "warning",
    "logical_decoding_work_mem": "64MB",
    "wal_sender_timeout": "60s",
}

# Default settings a server older than this major does not know (it would refuse to start with them).
SETTING_SINCE: dict[str, int] = {"logical_decoding_work_mem": 13}


def find_pg_bindir() -> Path:
    """The folder with initdb/pg_ctl/postgres: $PGCDC_PG_BINDIR, else pg_config, else Debian's layout."""
    env = os.environ.get("PGCDC_PG_BINDIR")
    candidates: list[str] = [env] if env else []
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_major_of_path, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).resolve().parent))
    for c in candidates:
        if c and (Path(c) / "initdb").exists() and (Path(c) / "postgres").exists():
            return Path(c)
    raise LocalServiceError(
        "PostgreSQL server binaries not found (no initdb/postgres): install postgresql-15 or set PGCDC_PG_BINDIR"
    )


def _major_of_path(p: str) -> int:
    try:
        return int(Path(p).parent.name)
    except ValueError:
        return 0


def _unprivileged_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise LocalServiceError("running as root and no unprivileged user (postgres/nobody) to own the cluster")


class PostgresCluster:
    """initdb, start, stop and remove a private cluster. Use as a context manager."""

    def __init__(
        self,
        *,
        bindir: Path | None = None,
        port: int | None = None,
        settings: dict[str, str] | None = None,
        base_dir: str | None = None,
        user: str = "postgres",
        password: str = "postgres",
        hba: str | None = None,
    ) -> None:
        self.bindir = bindir or find_pg_bindir()
        self.port = port or free_port()
        self._major: int | None = None
        defaults = {k: v for k, v in DEFAULT_SETTINGS.items() if self.major >= SETTING_SINCE.get(k, 0)}
        self.settings = {**defaults, **(settings or {})}
        self.user = user
        self.password = password
        self.hba = hba  # pg_hba.conf lines replacing the default ones (e.g. hostssl ... cert for TLS tests)
        self.host = "127.0.0.1"
        self._os_user = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="pgcdc-pg-", dir=base_dir))
        self.datadir = self.root / "data"
        self.sockdir = self.root / "sock"
        self.logfile = self.root / "server.log"
        self._started = False

    # -- plumbing -------------------------------------------------------------------------------
    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self._os_user:
            cmd = ["runuser", "-u", self._os_user, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise LocalServiceError(f"{args[0]} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
        return proc

    @property
    def major(self) -> int:
        if self._major is None:
            out = subprocess.run([str(self.bindir / "postgres"), "--version"], capture_output=True, text=True)
            if out.returncode != 0:
                raise LocalServiceError(f"{self.bindir / 'postgres'} --version failed: {out.stderr.strip()[-300:]}")
            self._major = int(out.stdout.split()[-1].split(".")[0])
        return self._major

    def dsn(self, dbname: str = "postgres", **extra: Any) -> str:
        parts = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "dbname": dbname,
            **extra,
        }
        from psycopg.conninfo import make_conninfo  # (quotes a value with spaces or quotes)

        return make_conninfo(**{k: str(v) for k, v in parts.items()})

    def connection_properties(self, dbname: str = "postgres") -> dict[str, str]:
        """Debezium's database.* properties for this cluster."""
        return {
            "database.hostname": self.host,
            "database.port": str(self.port),
            "database.user": self.user,
            "database.password": self.password,
            "database.dbname": dbname,
        }

    # -- lifecycle --------------------------------------------------------------------------------
    def init(self) -> PostgresCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        self.sockdir.mkdir(exist_ok=True)
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        if self._os_user:
            pw = pwd.getpwnam(self._os_user)
            for p in (self.root, self.sockdir, pwfile):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        self._run(
            "initdb", "-D", str(self.datadir), "-U", self.user, "--pwfile", str(pwfile),
            "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
        )
        hba = self.datadir / "pg_hba.conf"
        hba.write_text(self.hba if self.hba is not None else
            "local all all trust\n"
            "host all all 127.0.0.1/32 scram-sha-256\n"
            "host replication all 127.0.0.1/32 scram-sha-256\n"
        )
        conf = {**self.settings, "listen_addresses": "'127.0.0.1'", "port": str(self.port),
                "unix_socket_directories": f"'{self.sockdir}'"}
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.writelines(f"{k} = {v}\n" for k, v in conf.items())
        return self

    def start(self, timeout: float = 60) -> PostgresCluster:
        if not self.datadir.exists():
            self.init()
        self._run("pg_ctl", "-D", str(self.datadir), "-l", str(self.logfile), "-w", "-t", str(int(timeout)),
                  "start", check=False, timeout=timeout + 10)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((self.host, self.port), timeout=1):
                    self._started = True
                    return self
            except OSError:
                time.sleep(0.1)
        log = self.logfile.read_text()[-800:] if self.logfile.exists() else ""
        raise LocalServiceError(f"PostgreSQL did not start on {self.host}:{self.port}: {log.strip()}")

    def stop(self, mode: str = "fast") -> None:
        if self.datadir.exists():
            self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "stop", check=False)
        self._started = False

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def reconfigure(self, **settings: str) -> None:
        """Append settings to postgresql.conf; takes effect on the next restart."""
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.writelines(f"{k} = {v}\n" for k, v in settings.items())

    def install_file(self, name: str, data: bytes) -> Path:
        """Write a file into the data directory, owned by the server's OS user and private to it (0600), as
        PostgreSQL wants its ssl_key_file. Call after init() and before start(); refer to it by bare name."""
        path = self.datadir / name
        path.write_bytes(data)
        path.chmod(0o600)
        if self._os_user:
            pw = pwd.getpwnam(self._os_user)
            os.chown(path, pw.pw_uid, pw.pw_gid)
        return path

    def cleanup(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    # -- convenience ------------------------------------------------------------------------------
    def execute(self, sql: str, dbname: str = "postgres") -> list[tuple[Any, ...]]:
        """Run SQL on a short autocommit connection; returns the first statement's rows (if any)."""
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def create_database(self, name: str) -> str:
        self.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        """DROP DATABASE IF EXISTS, ending its sessions first (WITH (FORCE) is PostgreSQL 13+)."""
        if self.major >= 13:
            self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        import psycopg

        for attempt in range(50):
            self.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
            try:
                self.execute(f'DROP DATABASE IF EXISTS "{name}"')
                return
            except psycopg.errors.ObjectInUse:  # a session ending, or one that connected in between
                if attempt == 49:
                    raise
                time.sleep(0.1)
