"""The command line as a newcomer first meets it: --version, -h, a command list that is not cut off, and
subcommand help that says where properties come from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pgcdc
from pgcdc.config import build_config, env_overrides

ROOT = Path(__file__).parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pgcdc.cli", *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})


def test_version() -> None:
    for flag in ("--version", "-V"):
        proc = cli(flag)
        assert proc.returncode == 0 and proc.stdout.strip() == f"pgcdc, version {pgcdc.__version__}", proc


def test_short_help_flag_and_full_command_list() -> None:
    proc = cli("-h")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == cli("--help").stdout
    commands = proc.stdout.split("Commands:\n", 1)[1]
    listed = [ln for ln in commands.splitlines() if ln.startswith("  ") and not ln.startswith("   ")]
    assert {ln.split()[0] for ln in listed} >= {"demo", "run", "validate", "status", "offsets", "slot", "verify"}
    assert not [ln for ln in listed if ln.rstrip().endswith("...")], proc.stdout
    for group in ("offsets", "slot"):
        sub = cli(group, "-h").stdout.split("Commands:\n", 1)[1]
        assert not [ln for ln in sub.splitlines() if ln.rstrip().endswith("...")], sub


def test_subcommand_help_names_environment_file_sink_and_docs() -> None:
    for command in (["run"], ["validate"], ["status"], ["offsets", "show"], ["slot", "list"]):
        text = " ".join(cli(*command, "-h").stdout.split())
        for needle in ("PGCDC_<PROPERTY>", "PGCDC_DATABASE_PASSWORD", "sink.type=file", "docs/configuration.md"):
            assert needle in text, (command, needle, text)
    assert "SIGTERM" in cli("demo", "-h").stdout and "--raw" in cli("demo", "-h").stdout


def test_quickstart_env_file_is_shipped_and_valid() -> None:
    quickstart = (ROOT / "docs/quickstart.md").read_text()
    assert "--env-file examples/pgcdc.env" in quickstart
    lines = [ln for ln in (ROOT / "examples/pgcdc.env").read_text().splitlines() if ln and not ln.startswith("#")]
    env = dict(ln.split("=", 1) for ln in lines if "=" in ln)
    passed_through = [ln for ln in lines if "=" not in ln]
    assert passed_through == ["PGCDC_DATABASE_PASSWORD"]  # from the shell, never written in the file
    config = build_config(env_overrides(env))
    assert (config.topic_prefix, config.bootstrap_servers) == ("dbserver1", "kafka.internal:9092")


def test_readme_and_quickstart_agree_on_the_file_sink() -> None:
    for doc in ("README.md", "docs/quickstart.md"):
        text = " ".join((ROOT / doc).read_text().split())
        assert "sink.file.path=-" in text and "offsets.dat" in text, doc
    assert "--set offset.storage=file" not in (ROOT / "docs/quickstart.md").read_text()
