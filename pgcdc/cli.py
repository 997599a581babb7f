"""Command line: reads files and environment, builds the config, calls the runner. No logic of its own."""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, ParamSpec

import click
import psycopg

import pgcdc
from pgcdc import logs
from pgcdc.errors import PgcdcError

log = logging.getLogger("pgcdc")
P = ParamSpec("P")


def _fail(exc: BaseException) -> None:
    log.debug("failure", exc_info=exc)
    for line in getattr(exc, "problems", None) or (str(exc),):  # a ConfigError lists every problem found
        if logs.is_json():  # one more JSON line, so that every line of stderr parses
            log.error("%s", line)
        else:
            click.echo(f"pgcdc: error: {logs.redact(line)}", err=True)
    sys.exit(2 if isinstance(exc, PgcdcError) else 1)


def _database_error(exc: psycopg.Error) -> PgcdcError:
    from pgcdc.errors import SourceError

    text = exc.diag.message_primary or str(exc).strip().splitlines()[0]
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        text += " (the privileges pgcdc needs: docs/security.md)"
    return SourceError(f"PostgreSQL refused: {text}")


def one_line_errors(command: Callable[P, None]) -> Callable[P, None]:
    """A command's expected failures end it with one line on stderr and a non-zero exit, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            command(*args, **kwargs)
        except PgcdcError as exc:
            _fail(exc)
        except psycopg.Error as exc:  # a statement the connector did not expect PostgreSQL to refuse
            _fail(_database_error(exc))

    return wrapper


# Every command that reads a config says where properties come from (the epilog of its --help).
CONFIG_EPILOG = """\b
Properties come from --config, then PGCDC_<PROPERTY> environment variables (upper case, dots as
underscores: PGCDC_DATABASE_PASSWORD, PGCDC_TOPIC_PREFIX), then --set. No Kafka at hand:
--set sink.type=file --set sink.file.path=- writes records to stdout (offsets to ./offsets.dat).
Every property: docs/configuration.md; commands: docs/operations.md; first steps: docs/quickstart.md."""

# -h as well as --help; lines up to 120 columns where the terminal has them.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 120}

_config_option = click.option("--config", "config_path", type=click.Path(dir_okay=False), required=False,
                              help="Kafka Connect connector JSON, .properties or YAML with Debezium property names")
_set_option = click.option("--set", "sets", multiple=True, metavar="PROPERTY=VALUE", help="override one property")


@click.group(context_settings=CONTEXT, epilog="Docs: README.md and docs/ (quickstart.md, configuration.md, "
                                               "operations.md).")
@click.version_option(pgcdc.__version__, "-V", "--version", prog_name="pgcdc")
@click.option("--log-level", default=lambda: os.environ.get("PGCDC_LOG_LEVEL", "info"), show_default="info",
              help="debug, info, warning or error")
@click.option("--log-format", type=click.Choice(["human", "json"]), show_default="human",
              default=lambda: os.environ.get("PGCDC_LOG_FORMAT", "human"),
              help="human lines, or one JSON object per line (ts, level, logger, message, exc_info)")
def main(log_level: str, log_format: str) -> None:
    """pgcdc: PostgreSQL change data capture with Debezium-format events."""
    logs.setup(log_level, log_format)


def _parse_sets(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected property=value, got {item!r}", param_hint="--set")
        k, v = item.split("=", 1)
        out[k.strip()] = v
    return out


@main.command(short_help="Stream changes to Kafka (or a file) until SIGTERM/Ctrl-C.", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@one_line_errors
def run(config_path: str | None, sets: tuple[str, ...]) -> None:
    """Stream changes until SIGTERM or Ctrl-C (SIGINT): either one finishes in-flight work, stores the offset and
    exits 0."""
    from pgcdc.runner import Connector

    connector = Connector(_load(config_path, sets))

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received %s: finishing in-flight work", signal.Signals(signum).name)
        connector.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stats = connector.run()
    log.info("stopped after %d events", stats.events)


def _load(config_path: str | None, sets: tuple[str, ...]) -> Any:
    from pgcdc.config import load_config

    config = load_config(config_path, extra=_parse_sets(sets))
    logs.protect(config)
    return config


def _json(value: Any) -> None:
    import orjson

    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


@main.command(short_help="Check config, PostgreSQL and Kafka; list every problem.", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@one_line_errors
def validate(config_path: str | None, sets: tuple[str, ...]) -> None:
    """Check server, privileges, publication, slot, tables, offsets and broker; print every problem found."""
    from pgcdc.ops import validate as check

    problems = check(_load(config_path, sets))
    for p in problems:
        click.echo(str(p))
    errors = sum(p.level == "error" for p in problems)
    click.echo(f"{errors} error(s), {len(problems) - errors} warning(s)" if problems else "ok: no problems found")
    sys.exit(1 if errors else 0)


@main.command(short_help="The slot's lag and the stored offset, as JSON.", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@one_line_errors
def status(config_path: str | None, sets: tuple[str, ...]) -> None:
    """The slot (active, lag, retained WAL) and the stored offset, as JSON."""
    from pgcdc.ops import status as get_status

    _json(get_status(_load(config_path, sets)))


@main.group()
def offsets() -> None:
    """Show or reset the connector's stored offset."""


@offsets.command("show", short_help="Print the stored offset as JSON (null if none).", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@one_line_errors
def offsets_show(config_path: str | None, sets: tuple[str, ...]) -> None:
    """Print the stored offset (Debezium's fields) as JSON; null if none."""
    from pgcdc.ops import load_offset

    _json(load_offset(_load(config_path, sets)))


@offsets.command("reset", short_help="Forget the stored offset (next start: snapshot.mode).", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@click.option("--yes", is_flag=True, help="do not ask")
@one_line_errors
def offsets_reset(config_path: str | None, sets: tuple[str, ...], yes: bool) -> None:
    """Forget the stored offset; the next start follows snapshot.mode as on a first start."""
    from pgcdc.ops import reset_offset

    config = _load(config_path, sets)
    if not yes:
        click.confirm(f"forget the stored offset of connector {config.name!r}?", abort=True)
    before = reset_offset(config)
    click.echo(f"offset reset (was: {before})")


@main.group()
def slot() -> None:
    """List or drop logical replication slots."""


@slot.command("list", short_help="Every logical slot, with its lag and retained WAL.", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@one_line_errors
def slot_list(config_path: str | None, sets: tuple[str, ...]) -> None:
    """Every logical slot of the server, with its lag and retained WAL in bytes."""
    from pgcdc.lsn import format_lsn
    from pgcdc.ops import list_slots
    from pgcdc.source.connection import connect

    with connect(_load(config_path, sets)) as conn:
        rows = list_slots(conn)
    click.echo(f"{'slot':<32} {'database':<16} {'active':<7} {'confirmed':<14} {'lag_bytes':>12} {'retained':>12}")
    for r in rows:
        confirmed = format_lsn(r["confirmed_flush_lsn"]) if r["confirmed_flush_lsn"] is not None else "-"
        click.echo(f"{r['slot_name']:<32} {r['database']:<16} {'yes' if r['active'] else 'no':<7} {confirmed:<14} "
                   f"{r['lag_bytes'] if r['lag_bytes'] is not None else '-':>12} "
                   f"{r['retained_bytes'] if r['retained_bytes'] is not None else '-':>12}")


@slot.command("drop", short_help="Drop a slot no process uses (frees its WAL).", epilog=CONFIG_EPILOG)
@_config_option
@_set_option
@click.option("--name", default=None, help="slot to drop (default: slot.name of the config)")
@click.option("--yes", is_flag=True, help="do not ask")
@one_line_errors
def slot_drop(config_path: str | None, sets: tuple[str, ...], name: str | None, yes: bool) -> None:
    """Drop a replication slot no process uses (the server then frees the WAL it retained)."""
    from pgcdc.ops import drop_slot

    config = _load(config_path, sets)
    target = name or config.slot_name
    if not yes:
        click.confirm(f"drop replication slot {target!r}?", abort=True)
    click.echo(f"dropped slot {target}" if drop_slot(config, target) else f"no slot named {target}")


@main.command(short_help="Throwaway PostgreSQL + broker + pgcdc; shows events live.")
@click.option("--transactions", default=20, show_default=True, help="how many demo transactions to run")
@click.option("--keep-running", is_flag=True, help="keep capturing until Ctrl-C or SIGTERM after the workload")
@click.option("--raw", is_flag=True,
              help="show the records' JSON payloads as Kafka carries them (decimals as base64, dates as day counts)")
@one_line_errors
def demo(transactions: int, keep_running: bool, raw: bool) -> None:
    """Throwaway PostgreSQL + local broker, sample tables and a workload; shows the events as they arrive.

    Values are shown typed (decimals, dates, timestamps as pgcdc.embed's Event has them); --raw shows Debezium's
    JSON. Ctrl-C or SIGTERM stops it and removes its servers and their temporary folders (exit 0)."""
    from pgcdc.demo import run_demo

    run_demo(transactions=transactions, keep_running=keep_running, raw=raw)


@main.command(short_help="Compare pgcdc.spark target tables with PostgreSQL.")
@click.option("--dsn", required=True, help="PostgreSQL connection string of the source database")
@click.option("--table", "tables", multiple=True, required=True, metavar="SCHEMA.TABLE",
              help="source table (repeat for several)")
@click.option("--target", "targets", multiple=True, required=True, metavar="PATH",
              help="the target table's folder, one per --table, same order")
@click.option("--format", "fmt", type=click.Choice(["parquet", "delta"]), default="parquet", show_default=True)
@one_line_errors
def verify(dsn: str, tables: tuple[str, ...], targets: tuple[str, ...], fmt: str) -> None:
    """Compare target tables written by pgcdc.spark with PostgreSQL: row counts and per-row checksums.

    Exits 1 when a table differs (the differences are printed). Needs the spark extra (pyarrow, deltalake)."""
    from pgcdc.spark.verify import verify as compare

    if len(tables) != len(targets):
        raise click.BadParameter("give one --target per --table", param_hint="--target")
    same = True
    for table, target in zip(tables, targets):
        report = compare(dsn, table, target, fmt)
        click.echo(report.text())
        same = same and report.ok
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
