"""Command line: reads files and environment, builds the config, calls the runner. No logic of its own."""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

import click

from pgcdc.errors import PgcdcError

log = logging.getLogger("pgcdc")


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def _fail(exc: BaseException) -> None:
    log.debug("failure", exc_info=exc)
    click.echo(f"pgcdc: error: {exc}", err=True)
    sys.exit(2 if isinstance(exc, PgcdcError) else 1)


@click.group()
@click.option("--log-level", default=lambda: os.environ.get("PGCDC_LOG_LEVEL", "info"), show_default="info",
              help="debug, info, warning or error")
def main(log_level: str) -> None:
    """pgcdc: PostgreSQL change data capture with Debezium-format events."""
    _setup_logging(log_level)


def _parse_sets(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected property=value, got {item!r}", param_hint="--set")
        k, v = item.split("=", 1)
        out[k.strip()] = v
    return out


@main.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False), required=False,
              help="Kafka Connect connector JSON, .properties or YAML with Debezium property names")
@click.option("--set", "sets", multiple=True, metavar="PROPERTY=VALUE", help="override one property")
def run(config_path: str | None, sets: tuple[str, ...]) -> None:
    """Stream changes until SIGTERM/SIGINT, then store offsets and exit 0."""
    from pgcdc.config import load_config
    from pgcdc.runner import Connector

    try:
        config = load_config(config_path, extra=_parse_sets(sets))
        connector = Connector(config)

        def on_signal(signum: int, _frame: Any) -> None:
            log.info("received %s: finishing in-flight work", signal.Signals(signum).name)
            connector.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        stats = connector.run()
        log.info("stopped after %d events", stats.events)
    except PgcdcError as exc:
        _fail(exc)


@main.command()
@click.option("--transactions", default=20, show_default=True, help="how many demo transactions to run")
@click.option("--keep-running", is_flag=True, help="keep capturing until Ctrl-C after the workload")
def demo(transactions: int, keep_running: bool) -> None:
    """Throwaway PostgreSQL + local broker, sample tables and a workload; shows the events as they arrive."""
    from pgcdc.demo import run_demo

    try:
        run_demo(transactions=transactions, keep_running=keep_running)
    except PgcdcError as exc:
        _fail(exc)


if __name__ == "__main__":
    main()
